//! index.html: the catalogue of paper figures and the index of each fidelity.

use super::{fidelity_dir, index_entry_without_files, render_experiment};
use crate::measure::{self, collect_at, stored_manifests};
use anyhow::Context;
use reports::{CatalogueEntry, Index, IndexExperiment};
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::Path;
use store::Store;

/// `docs/figures.md`, compiled in: the papers' figures and tables in order.
const FIGURES_MD: &str = include_str!("../../../docs/figures.md");

/// The catalogue of paper figures and tables (the table rows of `docs/figures.md`).
pub fn catalogue() -> Vec<CatalogueEntry> {
    FIGURES_MD
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .strip_prefix('|')?
                .split('|')
                .map(str::trim)
                .collect();
            let (id, paper, what) = (cells.first()?, cells.get(1)?, cells.get(2)?);
            let is_id = id.contains('-')
                && id.starts_with(|c: char| c.is_ascii_lowercase())
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            is_id.then(|| CatalogueEntry {
                id: id.to_string(),
                paper: paper.to_string(),
                what: what.to_string(),
            })
        })
        .collect()
}

/// Writes the index of one fidelity into its folder (see [`super::fidelity_dir`]).
/// It links the other fidelity's index when that exists or `other_coming` says
/// it is being written too.
pub fn write_index(
    experiments: Vec<IndexExperiment>,
    results_dir: &Path,
    fidelity: Fidelity,
    other_coming: bool,
) -> anyhow::Result<()> {
    let out_dir = fidelity_dir(results_dir, fidelity);
    let other = |f| other_coming || fidelity_dir(results_dir, f).join("index.html").is_file();
    let other_fidelity = match fidelity {
        Fidelity::Full => other(Fidelity::Quick).then(|| {
            (
                "Quick (CI) results".to_string(),
                "quick/index.html".to_string(),
            )
        }),
        Fidelity::Quick => other(Fidelity::Full).then(|| {
            (
                "Full-fidelity results".to_string(),
                "../index.html".to_string(),
            )
        }),
    };
    let index = Index {
        generated_by: format!("repro {}", env!("CARGO_PKG_VERSION")),
        code_version: crate::shared::CODE_VERSION.to_string(),
        generated_at: store::now_rfc3339(),
        fidelity: fidelity.as_str().to_string(),
        other_fidelity,
        catalogue: catalogue(),
        experiments,
    };
    reports::write_index(&index, &out_dir.join("index.html")).context("writing index.html")
}

/// The index of a fidelity lists every experiment in the store with results at
/// that fidelity; those not just rendered are summarised from the store without
/// redrawing their figures.
pub async fn write_full_index(
    store: &Store,
    registry: &Registry,
    results_dir: &Path,
    fidelity: Fidelity,
    mut rendered: BTreeMap<String, reports::IndexExperiment>,
) -> anyhow::Result<()> {
    let out_dir = fidelity_dir(results_dir, fidelity);
    for m in stored_manifests(store, registry).await? {
        if rendered.contains_key(&m.id) {
            continue;
        }
        let Some(r) = collect_at(store, &m, registry, fidelity).await? else {
            continue;
        };
        let ems = measure::error_measures(&r);
        let all_present = m.figures.iter().all(|f| {
            out_dir
                .join("figures")
                .join(format!("{}.png", f.id))
                .is_file()
        });
        let entry = if all_present {
            index_entry_without_files(&r, &ems, registry, &out_dir, fidelity)?
        } else {
            render_experiment(&r, &ems, registry, &out_dir, fidelity)?
        };
        rendered.insert(m.id.clone(), entry);
    }
    super::compare::attach_comparisons(store, registry, &out_dir, fidelity, &mut rendered).await?;
    write_index(
        rendered.into_values().collect(),
        results_dir,
        fidelity,
        false,
    )
}
