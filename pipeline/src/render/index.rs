//! index.html: the catalogue of paper figures and the index of each fidelity.

use super::fidelity_dir;
use anyhow::Context;
use reports::{CatalogueEntry, Index, IndexEntryStatus, IndexExperiment};
use solvers::Fidelity;
use std::path::Path;

/// The catalogue of paper figures and tables ([`crate::manifest::catalogue`]),
/// as the index shows it.
pub fn catalogue() -> Vec<CatalogueEntry> {
    crate::manifest::catalogue::catalogue()
        .into_iter()
        .map(|e| CatalogueEntry {
            id: e.id,
            paper: e.paper,
            what: e.what,
            hardware: e.hardware,
        })
        .collect()
}

/// Writes the index of one fidelity into its folder (see [`super::fidelity_dir`]),
/// with the catalogue entries' `statuses` (`measure::status::index_statuses`).
/// It links the other fidelity's index when that exists or `other_coming` says
/// it is being written too.
pub fn write_index(
    experiments: Vec<IndexExperiment>,
    statuses: Vec<IndexEntryStatus>,
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
        statuses,
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
