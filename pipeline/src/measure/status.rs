//! Entry statuses from claims. For one paper entry (or one of the project's
//! own outputs):
//!
//! - **not yet**: no output and no claim is about it;
//! - **calibrated**: a manifest's `calibrated: against` names it (its
//!   agreement is with the numbers its parameters were fitted to), or every
//!   claim about it is a fit;
//! - **reference: hardware**: the paper's figure is a hardware measurement;
//! - otherwise from its checkable claims (neither sanity checks nor fits):
//!   **reproduced** when every one holds, **partly reproduced** when some do,
//!   **not reproduced** when none does, and **drawn** when it has none (the
//!   paper states nothing checkable about it, or only sanity checks read it).

use super::claims::ClaimResult;
use crate::manifest::catalogue::{self, covers};
use crate::manifest::Manifest;
use reports::{CatalogueEntry, IndexEntryStatus};
use verdicts::{EntryStatus, Verdict};

/// What decides a status: one claim's verdict and classification.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClaimFacts {
    pub verdict: Verdict,
    pub sanity: bool,
    pub fit: bool,
}

/// An entry's status with the counts behind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Derived {
    pub status: EntryStatus,
    /// Checkable claims that hold, of `checkable`.
    pub holding: usize,
    pub checkable: usize,
    pub sanity: usize,
    pub fits: usize,
}

/// Whether a claim naming `entries` is about entry `id` (by id, or by an
/// output that stands for it).
pub fn about(entries: &[String], id: &str) -> bool {
    entries.iter().any(|e| e == id || covers(e, id))
}

/// The status of one entry. `has_output`: some output stands for it;
/// `calibrated`: a `calibrated: against` names it; `hardware`: a measurement
/// on real hardware; `claims`: the claims about it.
pub fn derive(
    has_output: bool,
    calibrated: bool,
    hardware: bool,
    claims: &[ClaimFacts],
) -> Derived {
    let checkable: Vec<&ClaimFacts> = claims.iter().filter(|c| !c.sanity && !c.fit).collect();
    let holding = checkable
        .iter()
        .filter(|c| c.verdict == Verdict::Holds)
        .count();
    let fits = claims.iter().filter(|c| c.fit).count();
    let status = if !has_output && claims.is_empty() {
        EntryStatus::NotYet
    } else if calibrated {
        EntryStatus::Calibrated
    } else if hardware {
        EntryStatus::ReferenceHardware
    } else if checkable.is_empty() {
        if fits > 0 {
            EntryStatus::Calibrated
        } else {
            EntryStatus::Drawn
        }
    } else if holding == checkable.len() {
        EntryStatus::Reproduced
    } else if holding == 0 {
        EntryStatus::NotReproduced
    } else {
        EntryStatus::PartlyReproduced
    };
    Derived {
        status,
        holding,
        checkable: checkable.len(),
        sanity: claims.iter().filter(|c| c.sanity).count(),
        fits,
    }
}

/// One experiment as the statuses read it: its output ids (figures and
/// tables), its claims (the entries each names, and its facts) and the
/// entries or references its `calibrated: against` names.
pub struct ExperimentFacts<'a> {
    pub outputs: Vec<&'a str>,
    pub claims: Vec<(&'a [String], ClaimFacts)>,
    pub calibrated_against: &'a [String],
}

impl<'a> ExperimentFacts<'a> {
    /// A manifest's outputs and calibration with its evaluated claims (those
    /// of other experiments in `claims` are left out).
    pub fn of(m: &'a Manifest, claims: &'a [ClaimResult]) -> ExperimentFacts<'a> {
        const NONE: &[String] = &[];
        ExperimentFacts {
            outputs: m
                .figures
                .iter()
                .map(|f| f.id.as_str())
                .chain(m.tables.iter().map(|t| t.id.as_str()))
                .collect(),
            claims: claims
                .iter()
                .filter(|c| c.experiment == m.id)
                .map(|c| {
                    let f = ClaimFacts {
                        verdict: c.verdict,
                        sanity: c.sanity.is_some(),
                        fit: c.fit.is_some(),
                    };
                    (c.entries.as_slice(), f)
                })
                .collect(),
            calibrated_against: m.calibrated.as_ref().map_or(NONE, |c| &c.against),
        }
    }
}

/// The statuses of the entries that the given experiments show or make
/// claims about (entries none of them touches are left out, rather than
/// called "not yet"), with each entry's paper (`None` for an output of the
/// project's own studies).
pub fn statuses_of(
    experiments: &[ExperimentFacts],
) -> Vec<(String, Option<&'static str>, Derived)> {
    let cat: Vec<(&str, bool)> = catalogue::shipped()
        .entries
        .iter()
        .map(|e| (e.id.as_str(), e.hardware))
        .collect();
    statuses(&cat, experiments)
        .into_iter()
        .filter(|(_, d)| d.status != EntryStatus::NotYet)
        .map(|(id, d)| {
            let paper = catalogue::shipped().get(&id).map(|e| e.paper.as_str());
            (id, paper, d)
        })
        .collect()
}

/// Every catalogue entry's status (`catalogue`: id and whether it is a
/// hardware measurement, in the catalogue's order), then every output of the
/// project's own studies (an output no catalogue entry stands for) by its id.
pub fn statuses(
    catalogue: &[(&str, bool)],
    experiments: &[ExperimentFacts],
) -> Vec<(String, Derived)> {
    let outputs: Vec<&str> = experiments
        .iter()
        .flat_map(|x| x.outputs.iter().copied())
        .collect();
    let facts = |id: &str| -> Vec<ClaimFacts> {
        experiments
            .iter()
            .flat_map(|x| &x.claims)
            .filter(|(entries, _)| about(entries, id))
            .map(|(_, f)| *f)
            .collect()
    };
    let calibrated = |id: &str| {
        experiments
            .iter()
            .flat_map(|x| x.calibrated_against)
            .any(|a| a == id || covers(a, id))
    };
    let row = |id: &str, has_output: bool, hardware: bool| {
        (
            id.to_string(),
            derive(has_output, calibrated(id), hardware, &facts(id)),
        )
    };
    let mut out: Vec<(String, Derived)> = catalogue
        .iter()
        .map(|&(id, hardware)| row(id, outputs.iter().any(|o| covers(o, id)), hardware))
        .collect();
    for o in outputs {
        if !catalogue.iter().any(|&(id, _)| covers(o, id)) && !out.iter().any(|(id, _)| id == o) {
            out.push(row(o, true, false));
        }
    }
    out
}

/// The statuses of index.html's entries: [`statuses`] over the experiments
/// of the index, every catalogue entry in the catalogue's order.
pub fn index_statuses(
    catalogue: &[CatalogueEntry],
    experiments: &[ExperimentFacts],
) -> Vec<IndexEntryStatus> {
    let cat: Vec<(&str, bool)> = catalogue
        .iter()
        .map(|c| (c.id.as_str(), c.hardware))
        .collect();
    statuses(&cat, experiments)
        .into_iter()
        .map(|(id, d)| IndexEntryStatus {
            id,
            status: d.status,
            holding: d.holding,
            checkable: d.checkable,
            sanity: d.sanity,
            fits: d.fits,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(verdict: Verdict, sanity: bool, fit: bool) -> ClaimFacts {
        ClaimFacts {
            verdict,
            sanity,
            fit,
        }
    }

    #[test]
    fn statuses_follow_the_checkable_claims() {
        use EntryStatus as S;
        use Verdict::*;
        let st = |o, cal, hw, cs: &[ClaimFacts]| derive(o, cal, hw, cs).status;
        assert_eq!(st(false, false, false, &[]), S::NotYet);
        assert_eq!(st(true, false, false, &[]), S::Drawn);
        // Sanity checks alone never make an entry reproduced.
        assert_eq!(st(true, false, false, &[c(Holds, true, false)]), S::Drawn);
        assert_eq!(
            st(
                true,
                false,
                false,
                &[c(Holds, false, false), c(Fails, true, false)]
            ),
            S::Reproduced
        );
        assert_eq!(
            st(
                true,
                false,
                false,
                &[c(Holds, false, false), c(Fails, false, false)]
            ),
            S::PartlyReproduced
        );
        assert_eq!(
            st(
                true,
                false,
                false,
                &[c(Inconclusive, false, false), c(Fails, false, false)]
            ),
            S::NotReproduced
        );
        // Fits: calibrated, never a validation.
        assert_eq!(
            st(true, false, false, &[c(Holds, false, true)]),
            S::Calibrated
        );
        assert_eq!(
            st(true, true, true, &[c(Holds, false, false)]),
            S::Calibrated
        );
        assert_eq!(
            st(true, false, true, &[c(Holds, false, false)]),
            S::ReferenceHardware
        );
        let d = derive(
            true,
            false,
            false,
            &[
                c(Holds, false, false),
                c(Fails, false, false),
                c(Holds, true, false),
            ],
        );
        assert_eq!((d.holding, d.checkable, d.sanity, d.fits), (1, 2, 1, 0));
    }

    #[test]
    fn a_claim_is_about_an_entry_or_an_output_standing_for_it() {
        let e = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(about(&e(&["yan-3.4", "yan-3.5"]), "yan-3.5"));
        assert!(about(&e(&["wu-3.4"]), "wu-3.4a"));
        assert!(about(&e(&["yan-5.3-printed"]), "yan-5.3"));
        assert!(!about(&e(&["yan-3.4"]), "yan-3.5"));
    }
}

#[cfg(test)]
mod statuses_tests {
    use super::{index_statuses, ClaimFacts, ExperimentFacts};
    use reports::CatalogueEntry;
    use verdicts::{EntryStatus, Verdict};

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
        let claim = |verdict, sanity| ClaimFacts {
            verdict,
            sanity,
            fit: false,
        };
        let (yan, gran) = (["yan-3.4".to_string()], ["gran-7c".to_string()]);
        let x = ExperimentFacts {
            outputs: vec!["gran-7a", "gran-7c", "yan-3.4", "own-study"],
            claims: vec![
                (&yan[..], claim(Verdict::Holds, false)),
                (&yan[..], claim(Verdict::Fails, false)),
                (&gran[..], claim(Verdict::Holds, true)),
            ],
            calibrated_against: &[],
        };
        let got: Vec<(String, EntryStatus, usize, usize, usize)> = index_statuses(&catalogue, &[x])
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
