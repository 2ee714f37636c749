//! The pages of one fidelity (figures, tables, index.html), as `run`,
//! `check` and `report` make them: each experiment measured
//! (`measure::planned` or `measure::stored`, which read the store), then
//! rendered from what measure produced (`render::render_experiment`, which
//! reads no store), then the index. What was drawn is recorded in the store
//! by `run` and `check`, so that the next run draws its experiments again
//! only where what they show changed (and the folder's `.drawn-by` says
//! that record describes it).

use anyhow::Context;
use pipeline::manifest::Manifest;
use pipeline::measure::claims::ClaimResult;
use pipeline::measure::status::ExperimentFacts;
use pipeline::measure::{self, compare::History, Measured};
use pipeline::render::{self, render_experiment, Draw, Drawn, DrawnOutput};
use pipeline::shared::CODE_VERSION;
use reports::{FigureOverrides, IndexExperiment};
use sha2::{Digest, Sha256};
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

/// The key of a results folder in the store's record of what was drawn (a
/// path made absolute, as shown).
fn folder_key(out_dir: &Path) -> String {
    std::path::absolute(out_dir)
        .unwrap_or_else(|_| out_dir.to_path_buf())
        .display()
        .to_string()
}

/// The file in a results folder that names (by a hash of its location, so
/// that no password of a PostgreSQL URL is written) the store whose record
/// of what was drawn describes the folder. Written once that record is
/// written, removed before anything draws into the folder: another store,
/// `repro report` (which keeps no record) or a run that stopped half-way
/// leaves no such file, and the next run draws everything again instead of
/// trusting a record that no longer describes the files.
const DRAWN_BY: &str = ".drawn-by";

/// The tag of `store` in [`DRAWN_BY`]: SHA-256 of its location (a file
/// path made absolute), hex.
fn store_tag(store: &Store) -> String {
    let location = store.location();
    let location = if location.contains("://") {
        location.to_string()
    } else {
        folder_key(Path::new(location))
    };
    hex::encode(Sha256::digest(location.as_bytes()))
}

/// Removes `out_dir`'s [`DRAWN_BY`] before something draws into it.
pub(crate) fn unmark(out_dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(out_dir.join(DRAWN_BY)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(anyhow::Error::new(e)
                .context(format!("removing {}", out_dir.join(DRAWN_BY).display())))
        }
        _ => Ok(()),
    }
}

/// What the store records as drawn into `out_dir`, if the folder says this
/// store's record describes it ([`DRAWN_BY`]); nothing otherwise, so that
/// everything is drawn again. Removes the mark: the caller draws next.
pub(crate) async fn drawn_into(store: &Store, out_dir: &Path) -> anyhow::Result<Drawn> {
    let mark = std::fs::read_to_string(out_dir.join(DRAWN_BY)).ok();
    unmark(out_dir)?;
    if mark.as_deref().map(str::trim) != Some(store_tag(store).as_str()) {
        return Ok(Drawn::default());
    }
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
    store.record_drawn(&rows).await?;
    std::fs::create_dir_all(out_dir)
        .and_then(|()| std::fs::write(out_dir.join(DRAWN_BY), store_tag(store)))
        .with_context(|| format!("writing {}", out_dir.join(DRAWN_BY).display()))
}
