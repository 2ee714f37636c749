//! The vocabulary every stage after measurement shares: what a compared point,
//! a claim and a paper entry were found to be. Each is an enum from the measure
//! stage through the store (as text only at the SQL edge) to the reports, so
//! adding a status makes the compiler list every `match` that must handle it
//! and no output decides anything by scanning text.
//!
//! This crate holds types and the error-measure formula only; the measure
//! stage (`pipeline::measure`) decides verdicts, the store keeps them, the
//! reports show them.

use serde::{Deserialize, Serialize};

/// Text that is not one of an enum's names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{what} {found:?} is not one of {expected}")]
pub struct UnknownName {
    pub what: &'static str,
    pub found: String,
    pub expected: String,
}

/// Declares `as_str`, `ALL`, `Display` and `FromStr` of a fieldless enum from
/// one list of (variant, text) pairs.
#[macro_export]
macro_rules! named_enum {
    ($ty:ident, $what:literal, $($v:ident => $s:literal),+ $(,)?) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$v),+];

            /// The name the store and every output use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$v => $s),+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::UnknownName;
            fn from_str(s: &str) -> Result<Self, $crate::UnknownName> {
                match s {
                    $($s => Ok($ty::$v),)+
                    _ => Err($crate::UnknownName {
                        what: $what,
                        found: s.to_string(),
                        expected: $ty::ALL
                            .iter()
                            .map(|v| v.as_str())
                            .collect::<Vec<_>>()
                            .join(", "),
                    }),
                }
            }
        }
    };
}

/// The verdict of one compared point of a `compare:` entry (EM against a tolerance).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointVerdict {
    Pass,
    Fail,
    /// The reference's CI is too wide to decide against the tolerance.
    Inconclusive,
    /// No tolerance given: measured, not checked.
    Unchecked,
}

named_enum!(PointVerdict, "point verdict",
    Pass => "pass", Fail => "fail", Inconclusive => "inconclusive", Unchecked => "unchecked");

impl PointVerdict {
    /// A fail or an inconclusive point.
    pub fn is_bad(self) -> bool {
        matches!(self, PointVerdict::Fail | PointVerdict::Inconclusive)
    }
}

/// What a claim was found to be, over the confidence intervals of the values
/// it reads: true over the whole CI box, false over the whole box, or neither.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Holds,
    Fails,
    Inconclusive,
}

named_enum!(Verdict, "verdict",
    Holds => "holds", Fails => "fails", Inconclusive => "inconclusive");

/// What a claim's author expects of it: the paper's claim holds in the
/// reproduction, or it is known not to (with the reason in the manifest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expectation {
    #[default]
    Holds,
    Fails,
}

named_enum!(Expectation, "expectation", Holds => "holds", Fails => "fails");

/// A claim's verdict against its expectation, as `repro check` judges it (like
/// pytest's xfail): only the two agreements pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimStatus {
    /// Expected to hold, holds.
    Holds,
    /// Expected to fail, fails (the reason is the claim's `why:`).
    FailsAsExpected,
    /// Expected to hold, fails.
    Fails,
    /// The CIs straddle the claim's boundary (whatever was expected).
    Inconclusive,
    /// Expected to fail, holds: the expectation must be updated deliberately.
    UnexpectedlyHolds,
    /// A `--quick` run of a claim marked `quick: { expect: inconclusive }`:
    /// inconclusive, as its mark says (the mark's `why:` gives the numbers).
    InconclusiveAtQuick,
    /// A `--quick` run of a claim marked `quick: { expect: inconclusive }`
    /// decided it (holds or fails): the mark must be removed deliberately.
    DecidedAtQuick,
}

named_enum!(ClaimStatus, "claim status",
    Holds => "holds", FailsAsExpected => "fails-as-expected", Fails => "fails",
    Inconclusive => "inconclusive", UnexpectedlyHolds => "unexpectedly-holds",
    InconclusiveAtQuick => "inconclusive-at-quick", DecidedAtQuick => "decided-at-quick");

impl ClaimStatus {
    /// The status of a verdict against the claim's `expect:` (a full-fidelity
    /// run, or a claim without a `quick:` mark).
    pub fn of(verdict: Verdict, expect: Expectation) -> ClaimStatus {
        match (verdict, expect) {
            (Verdict::Holds, Expectation::Holds) => ClaimStatus::Holds,
            (Verdict::Holds, Expectation::Fails) => ClaimStatus::UnexpectedlyHolds,
            (Verdict::Fails, Expectation::Holds) => ClaimStatus::Fails,
            (Verdict::Fails, Expectation::Fails) => ClaimStatus::FailsAsExpected,
            (Verdict::Inconclusive, _) => ClaimStatus::Inconclusive,
        }
    }

    /// The status of a verdict at a fidelity: `quick_mark` is the verdict a
    /// claim's `quick:` mark expects when the run is `--quick` (`None`: a
    /// full-fidelity run, or no mark). A mark expecting inconclusive is met by
    /// an inconclusive verdict, and a decided one is a surprise (like an
    /// unexpected pass of a strict xfail); a mark expecting holds or fails
    /// stands for `expect:` at that fidelity ([`ClaimStatus::of`]).
    pub fn at(verdict: Verdict, expect: Expectation, quick_mark: Option<Verdict>) -> ClaimStatus {
        match (quick_mark, verdict) {
            (None, _) => ClaimStatus::of(verdict, expect),
            (Some(Verdict::Inconclusive), Verdict::Inconclusive) => {
                ClaimStatus::InconclusiveAtQuick
            }
            (Some(Verdict::Inconclusive), Verdict::Holds | Verdict::Fails) => {
                ClaimStatus::DecidedAtQuick
            }
            (Some(Verdict::Holds), _) => ClaimStatus::of(verdict, Expectation::Holds),
            (Some(Verdict::Fails), _) => ClaimStatus::of(verdict, Expectation::Fails),
        }
    }

    /// The verdict differs from the expectation: what makes `repro check` exit 1.
    pub fn is_unexpected(self) -> bool {
        !matches!(
            self,
            ClaimStatus::Holds | ClaimStatus::FailsAsExpected | ClaimStatus::InconclusiveAtQuick
        )
    }

    /// Words for a person ("fails as expected").
    pub fn label(self) -> &'static str {
        match self {
            ClaimStatus::Holds => "holds",
            ClaimStatus::FailsAsExpected => "fails as expected",
            ClaimStatus::Fails => "FAILS",
            ClaimStatus::Inconclusive => "inconclusive",
            ClaimStatus::UnexpectedlyHolds => "UNEXPECTEDLY HOLDS",
            ClaimStatus::InconclusiveAtQuick => "inconclusive at --quick, as marked",
            ClaimStatus::DecidedAtQuick => "DECIDED AT --quick",
        }
    }
}

/// Where a claim comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClaimKind {
    /// A `claims:` entry: the paper's words as a predicate.
    Predicate,
    /// A `compare:` entry with a tolerance: EM <= tolerance at every point.
    Tolerance,
}

named_enum!(ClaimKind, "claim kind", Predicate => "predicate", Tolerance => "tolerance");

/// What a paper entry (a figure or table of the catalogue) is found to be,
/// from its claims.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EntryStatus {
    /// Every checkable (non-sanity, non-fit) claim of the entry holds.
    Reproduced,
    /// Some of its checkable claims hold, not all.
    PartlyReproduced,
    /// None of its checkable claims holds.
    NotReproduced,
    /// Its agreement is with the numbers its parameters were fitted to
    /// (the manifest's `calibrated:`): fits, not validations.
    Calibrated,
    /// The paper's figure is a measurement on real hardware: no run regenerates it.
    ReferenceHardware,
    /// Outputs draw it, but the paper states nothing checkable about it (or
    /// only sanity checks read it).
    Drawn,
    /// No output of any experiment is this entry.
    NotYet,
}

named_enum!(EntryStatus, "entry status",
    Reproduced => "reproduced", PartlyReproduced => "partly-reproduced",
    NotReproduced => "not-reproduced", Calibrated => "calibrated",
    ReferenceHardware => "reference-hardware", Drawn => "drawn", NotYet => "not-yet");

impl EntryStatus {
    /// Words for a person.
    pub fn label(self) -> &'static str {
        match self {
            EntryStatus::Reproduced => "reproduced",
            EntryStatus::PartlyReproduced => "partly reproduced",
            EntryStatus::NotReproduced => "not reproduced",
            EntryStatus::Calibrated => "calibrated",
            EntryStatus::ReferenceHardware => "reference: hardware",
            EntryStatus::Drawn => "drawn",
            EntryStatus::NotYet => "not yet",
        }
    }
}

/// Does output `output` (a figure or table id) stand for catalogue entry
/// `entry`? Equal ids; `entry-suffix` variants; a whole figure (`wu-3.4`) for
/// its panels (`wu-3.4a`).
pub fn covers(output: &str, entry: &str) -> bool {
    if output == entry
        || output
            .strip_prefix(entry)
            .is_some_and(|rest| rest.starts_with('-'))
    {
        return true;
    }
    let panelled = entry.starts_with("wu-") || entry.starts_with("gran-");
    match entry.char_indices().last() {
        Some((i, c)) if panelled && c.is_ascii_lowercase() => {
            entry[..i].ends_with(|d: char| d.is_ascii_digit()) && output == &entry[..i]
        }
        _ => false,
    }
}

/// EM of one point, the papers' relative error: `|reference − candidate| /
/// |reference|`. `None` when the reference is zero and the candidate is not
/// (undefined relative error).
pub fn em(reference: f64, candidate: f64) -> Option<f64> {
    let d = (reference - candidate).abs();
    if reference != 0.0 {
        Some(d / reference.abs())
    } else if d == 0.0 {
        Some(0.0)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        fn check<T>(all: &[T])
        where
            T: Copy
                + std::fmt::Display
                + std::str::FromStr
                + PartialEq
                + std::fmt::Debug
                + Serialize,
            <T as std::str::FromStr>::Err: std::fmt::Debug,
        {
            for v in all {
                assert_eq!(v.to_string().parse::<T>().unwrap(), *v);
                assert_eq!(serde_json::to_string(v).unwrap(), format!("\"{v}\""));
            }
        }
        check(PointVerdict::ALL);
        check(Verdict::ALL);
        check(Expectation::ALL);
        check(ClaimStatus::ALL);
        check(ClaimKind::ALL);
        check(EntryStatus::ALL);
        assert_eq!(
            "maybe".parse::<Verdict>().unwrap_err().to_string(),
            "verdict \"maybe\" is not one of holds, fails, inconclusive"
        );
    }

    #[test]
    fn only_agreement_with_the_expectation_passes() {
        use ClaimStatus as S;
        let cases = [
            (Verdict::Holds, Expectation::Holds, S::Holds, false),
            (Verdict::Fails, Expectation::Holds, S::Fails, true),
            (
                Verdict::Inconclusive,
                Expectation::Holds,
                S::Inconclusive,
                true,
            ),
            (
                Verdict::Fails,
                Expectation::Fails,
                S::FailsAsExpected,
                false,
            ),
            (
                Verdict::Holds,
                Expectation::Fails,
                S::UnexpectedlyHolds,
                true,
            ),
            (
                Verdict::Inconclusive,
                Expectation::Fails,
                S::Inconclusive,
                true,
            ),
        ];
        for (v, e, s, bad) in cases {
            assert_eq!(S::of(v, e), s);
            assert_eq!(S::at(v, e, None), s);
            assert_eq!(s.is_unexpected(), bad, "{s}");
        }
    }

    #[test]
    fn a_quick_mark_expects_inconclusive_whatever_expect_says() {
        use ClaimStatus as S;
        for e in Expectation::ALL {
            assert_eq!(
                S::at(Verdict::Inconclusive, *e, Some(Verdict::Inconclusive)),
                S::InconclusiveAtQuick
            );
            assert!(!S::InconclusiveAtQuick.is_unexpected());
            for v in [Verdict::Holds, Verdict::Fails] {
                assert_eq!(
                    S::at(v, *e, Some(Verdict::Inconclusive)),
                    S::DecidedAtQuick,
                    "{v} {e}"
                );
            }
        }
        assert!(S::DecidedAtQuick.is_unexpected());
        // A mark expecting a decided verdict stands for `expect:` at --quick,
        // whatever the full-fidelity expectation is.
        for e in Expectation::ALL {
            let q = Some(Verdict::Holds);
            assert_eq!(S::at(Verdict::Holds, *e, q), S::Holds);
            assert_eq!(S::at(Verdict::Fails, *e, q), S::Fails);
            assert_eq!(S::at(Verdict::Inconclusive, *e, q), S::Inconclusive);
            let q = Some(Verdict::Fails);
            assert_eq!(S::at(Verdict::Fails, *e, q), S::FailsAsExpected);
            assert_eq!(S::at(Verdict::Holds, *e, q), S::UnexpectedlyHolds);
        }
    }

    #[test]
    fn em_definition() {
        assert_eq!(em(2.0, 1.5), Some(0.25));
        assert_eq!(em(-2.0, -1.5), Some(0.25));
        assert_eq!(em(0.0, 0.0), Some(0.0));
        assert_eq!(em(0.0, 1.0), None);
    }
}
