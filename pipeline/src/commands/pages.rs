//! The pages of one fidelity (figures, tables, index.html), as `run`,
//! `check` and `report` make them: each experiment measured
//! (`measure::planned` or `measure::stored`, which read the store), then
//! rendered from what measure produced (`render::render_experiment`, which
//! reads no store), then the index. What was drawn is recorded in the store
//! by `run` and `check`, so that the next run draws the other experiments of
//! its index again only where what they show changed.

use pipeline::manifest::Manifest;
use pipeline::measure::claims::ClaimResult;
use pipeline::measure::status::ExperimentFacts;
use pipeline::measure::{self, compare::History, Measured};
use pipeline::render::{self, render_experiment, Draw, Drawn, DrawnOutput};
use pipeline::shared::CODE_VERSION;
use reports::{FigureOverrides, IndexExperiment};
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::Path;
use store::{DrawnRow, Store};

/// The entries of one fidelity's index and what was drawn for them.
#[derive(Default)]
pub(crate) struct Pages {
    pub entries: BTreeMap<String, IndexExperiment>,
    pub drawn: Vec<DrawnOutput>,
    /// What the entries' statuses rest on, per experiment: its manifest and
    /// evaluated claims, as measure produced them.
    pub facts: BTreeMap<String, (Manifest, Vec<ClaimResult>)>,
    /// Figure options over every manifest's `layout:` (`--figure-width ...`
    /// of `run`, `check` and `report`).
    pub layout: FigureOverrides,
}

impl Pages {
    /// Renders one measured experiment into `out_dir` and adds it.
    pub fn add(
        &mut self,
        x: &Measured,
        registry: &Registry,
        out_dir: &Path,
        fidelity: Fidelity,
        draw: Draw<'_>,
    ) -> anyhow::Result<()> {
        let r = render_experiment(x, registry, out_dir, fidelity, draw, &self.layout)?;
        let id = &x.manifest().id;
        self.entries.insert(id.clone(), r.entry);
        self.drawn.extend(r.drawn);
        self.facts
            .insert(id.clone(), (x.manifest().clone(), x.claims.clone()));
        Ok(())
    }

    /// Every stored experiment (`stored`: the latest version of each) with
    /// results at `fidelity` that the pages do not hold yet, measured and
    /// rendered (drawn as `draw` decides).
    #[allow(clippy::too_many_arguments)]
    pub async fn add_stored(
        &mut self,
        store: &Store,
        stored: &[Manifest],
        registry: &Registry,
        out_dir: &Path,
        fidelity: Fidelity,
        history: &History,
        draw: Draw<'_>,
    ) -> anyhow::Result<()> {
        for m in stored {
            if self.entries.contains_key(&m.id) {
                continue;
            }
            if let Some(x) = measure::stored(store, m, registry, fidelity, history).await? {
                self.add(&x, registry, out_dir, fidelity, draw)?;
            }
        }
        Ok(())
    }
}

impl Pages {
    /// Writes the index of `fidelity` (see `render::write_index`) with every
    /// entry's status, which measure derives from the experiments' outputs
    /// and claims; returns what was drawn.
    pub fn write_index(
        self,
        results_dir: &Path,
        fidelity: Fidelity,
        other_coming: bool,
    ) -> anyhow::Result<Vec<DrawnOutput>> {
        let facts: Vec<ExperimentFacts> = self
            .facts
            .values()
            .map(|(m, claims)| ExperimentFacts::of(m, claims))
            .collect();
        let statuses = measure::status::index_statuses(&render::catalogue(), &facts);
        let entries: Vec<IndexExperiment> = self.entries.into_values().collect();
        render::write_index(entries, statuses, results_dir, fidelity, other_coming)?;
        Ok(self.drawn)
    }
}

/// The key of a results folder in the store's record of what was drawn.
fn folder_key(out_dir: &Path) -> String {
    std::path::absolute(out_dir)
        .unwrap_or_else(|_| out_dir.to_path_buf())
        .display()
        .to_string()
}

/// What the store records as drawn into `out_dir`.
pub(crate) async fn drawn_into(store: &Store, out_dir: &Path) -> anyhow::Result<Drawn> {
    let rows = store.drawn(&folder_key(out_dir)).await?;
    Ok(Drawn::new(
        rows.into_iter()
            .map(|r| (r.experiment, r.output, r.hash, r.code_version)),
    ))
}

/// Records `drawn` as drawn into `out_dir`.
pub(crate) async fn record_drawn(
    store: &Store,
    out_dir: &Path,
    drawn: &[DrawnOutput],
) -> anyhow::Result<()> {
    let results = folder_key(out_dir);
    let rows: Vec<DrawnRow> = drawn
        .iter()
        .map(|d| DrawnRow {
            results: results.clone(),
            experiment: d.experiment.clone(),
            output: d.output.clone(),
            version: d.version,
            hash: d.hash.clone(),
            code_version: CODE_VERSION.to_string(),
        })
        .collect();
    Ok(store.record_drawn(&rows).await?)
}
