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

use crate::manifest::catalogue::covers;
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
