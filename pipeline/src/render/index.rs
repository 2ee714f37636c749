//! index.html: the catalogue of paper figures and the index of each fidelity.

use super::{fidelity_dir, index_entry_without_files, render_experiment};
use crate::measure::{self, collect_at, stored_manifests};
use anyhow::Context;
use reports::{CatalogueEntry, Index, IndexEntryStatus, IndexExperiment};
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::Path;
use store::Store;

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
    let catalogue = catalogue();
    let statuses = statuses(&catalogue, &experiments);
    let index = Index {
        statuses,
        generated_by: format!("repro {}", env!("CARGO_PKG_VERSION")),
        code_version: crate::shared::CODE_VERSION.to_string(),
        generated_at: store::now_rfc3339(),
        fidelity: fidelity.as_str().to_string(),
        other_fidelity,
        catalogue,
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
    let manifests = stored_manifests(store, registry).await?;
    let registry = &crate::manifest::with_declared(registry, &manifests);
    for m in manifests {
        if rendered.contains_key(&m.id) {
            continue;
        }
        let Some(r) = collect_at(store, &m, registry, fidelity).await? else {
            continue;
        };
        let ems = measure::error_measures(&r);
        let mut claims = measure::claims::evaluate_claims(&r, &ems);
        let removed =
            measure::claims::ledger(store, None, fidelity.as_str(), &m.id, &mut claims).await?;
        let measured = super::Measured {
            ems: &ems,
            claims: &claims,
            removed: &removed,
        };
        let all_present = m.figures.iter().all(|f| {
            out_dir
                .join("figures")
                .join(format!("{}.png", f.id))
                .is_file()
        });
        let entry = if all_present {
            index_entry_without_files(&r, &measured, registry, &out_dir, fidelity)?
        } else {
            render_experiment(&r, &measured, registry, &out_dir, fidelity)?
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

/// Every catalogue entry's status, and every output of the project's own
/// studies (an output no catalogue entry stands for) by its id.
fn statuses(
    catalogue: &[CatalogueEntry],
    experiments: &[IndexExperiment],
) -> Vec<IndexEntryStatus> {
    use crate::manifest::catalogue::covers;
    use crate::measure::status::{about, derive, ClaimFacts};
    let outputs: Vec<&str> = experiments
        .iter()
        .flat_map(|x| {
            x.figures
                .iter()
                .map(|f| f.id.as_str())
                .chain(x.tables.iter().map(|t| t.id.as_str()))
        })
        .collect();
    let facts = |id: &str| -> Vec<ClaimFacts> {
        experiments
            .iter()
            .flat_map(|x| &x.claims)
            .filter(|c| about(&c.entries, id))
            .map(|c| ClaimFacts {
                verdict: c.verdict,
                sanity: c.sanity.is_some(),
                fit: c.fit.is_some(),
            })
            .collect()
    };
    let calibrated = |id: &str| {
        experiments
            .iter()
            .flat_map(|x| &x.calibrated_against)
            .any(|a| a == id || covers(a, id))
    };
    let row = |id: &str, has_output: bool, hardware: bool| {
        let d = derive(has_output, calibrated(id), hardware, &facts(id));
        IndexEntryStatus {
            id: id.to_string(),
            status: d.status,
            holding: d.holding,
            checkable: d.checkable,
            sanity: d.sanity,
            fits: d.fits,
        }
    };
    let mut out: Vec<IndexEntryStatus> = catalogue
        .iter()
        .map(|c| row(&c.id, outputs.iter().any(|o| covers(o, &c.id)), c.hardware))
        .collect();
    for o in outputs {
        if !catalogue.iter().any(|c| covers(o, &c.id)) && !out.iter().any(|s| s.id == o) {
            out.push(row(o, true, false));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::statuses;
    use reports::{CatalogueEntry, IndexClaim, IndexExperiment, IndexFigure};
    use verdicts::{ClaimKind, ClaimStatus, EntryStatus, Expectation, Verdict};

    fn claim(id: &str, entries: &[&str], verdict: Verdict, sanity: bool) -> IndexClaim {
        IndexClaim {
            id: id.into(),
            kind: ClaimKind::Predicate,
            quote: String::new(),
            where_: String::new(),
            entries: entries.iter().map(|e| e.to_string()).collect(),
            holds: "a.x > 0".into(),
            points: None,
            expect: Expectation::Holds,
            why: None,
            note: None,
            sanity: sanity.then(|| "reads no solver output".into()),
            fit: None,
            verdict,
            status: ClaimStatus::of(verdict, Expectation::Holds),
            reason: None,
            evaluated: 1,
            skipped: vec![],
            steps: vec![],
            history: vec![],
        }
    }

    /// A hardware entry with an output is "reference: hardware", an entry
    /// read only by sanity checks is "drawn", one without output "not yet",
    /// one with a claim that holds and one that fails "partly reproduced",
    /// and an output no catalogue entry stands for gets a status by its id.
    #[test]
    fn statuses_come_from_claims_outputs_and_the_catalogue() {
        let entry = |id: &str, what: &str| CatalogueEntry {
            id: id.into(),
            paper: "p".into(),
            what: what.into(),
            hardware: what.contains("hardware"),
        };
        let catalogue = vec![
            entry("gran-7a", "Fig. 7(a): scenario 1, hardware, CC off"),
            entry("gran-7c", "Fig. 7(c): scenario 1, simulation, CC off"),
            entry("gran-8a", "Fig. 8(a): scenario 2, hardware, CC off"),
            entry("yan-3.4", "Fig. 3.4: link utilisation"),
        ];
        let fig = |id: &str| IndexFigure {
            id: id.into(),
            title: id.into(),
            png: String::new(),
            svg: String::new(),
            alt: String::new(),
            em: None,
        };
        let x = IndexExperiment {
            id: "x".into(),
            version: 1,
            title: "x".into(),
            source: String::new(),
            manifest_hash: String::new(),
            figures: ["gran-7a", "gran-7c", "yan-3.4", "own-study"]
                .iter()
                .map(|f| fig(f))
                .collect(),
            tables: vec![],
            provenance: vec![],
            em_summary: vec![],
            docs: vec![],
            comparison: None,
            claims: vec![
                claim("a", &["yan-3.4"], Verdict::Holds, false),
                claim("b", &["yan-3.4"], Verdict::Fails, false),
                claim("c", &["gran-7c"], Verdict::Holds, true),
            ],
            removed_claims: vec![],
            calibrated_against: vec![],
        };
        let got: Vec<(String, EntryStatus, usize, usize, usize)> = statuses(&catalogue, &[x])
            .into_iter()
            .map(|s| (s.id, s.status, s.holding, s.checkable, s.sanity))
            .collect();
        let want = |id: &str, s, h, c, n| (id.to_string(), s, h, c, n);
        assert_eq!(
            got,
            vec![
                want("gran-7a", EntryStatus::ReferenceHardware, 0, 0, 0),
                want("gran-7c", EntryStatus::Drawn, 0, 0, 1),
                want("gran-8a", EntryStatus::NotYet, 0, 0, 0),
                want("yan-3.4", EntryStatus::PartlyReproduced, 1, 2, 0),
                want("own-study", EntryStatus::Drawn, 0, 0, 0),
            ]
        );
    }
}
