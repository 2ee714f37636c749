//! Error measures: the papers' EM = |sim − model| / |sim| per point, and the
//! verdict against a tolerance that takes the simulation's CI into account.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    /// The reference's CI is too wide to decide against the tolerance.
    Inconclusive,
    /// No tolerance given: measured, not checked.
    Unchecked,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Unchecked => "unchecked",
        }
    }

    /// A fail or an inconclusive point: what makes `repro check` fail.
    pub fn is_bad(self) -> bool {
        matches!(self, Verdict::Fail | Verdict::Inconclusive)
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Text that names no verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a verdict (pass, fail, inconclusive, unchecked)")]
pub struct UnknownVerdict(pub String);

impl std::str::FromStr for Verdict {
    type Err = UnknownVerdict;
    fn from_str(s: &str) -> Result<Self, UnknownVerdict> {
        [
            Verdict::Pass,
            Verdict::Fail,
            Verdict::Inconclusive,
            Verdict::Unchecked,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| UnknownVerdict(s.to_string()))
    }
}

/// EM of one point: `|reference − candidate| / |reference|`. `None` when the
/// reference is zero and the candidate is not (undefined relative error).
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

/// Verdict for one point. With the reference's relative half-width
/// `h = half_width / |reference|` the true EM lies (to first order) within
/// `[EM − h, EM + h]`:
/// - pass when even `EM + h <= tolerance`;
/// - fail when even `EM − h > tolerance`;
/// - inconclusive otherwise (the CI straddles the tolerance), and also when
///   the EM is undefined. An inconclusive point never counts as a pass.
pub fn verdict(
    reference: f64,
    reference_half_width: Option<f64>,
    candidate: f64,
    tolerance: Option<f64>,
) -> (Option<f64>, Verdict) {
    let e = em(reference, candidate);
    let Some(tol) = tolerance else {
        return (e, Verdict::Unchecked);
    };
    let Some(e) = e else {
        return (None, Verdict::Inconclusive);
    };
    let h = match reference_half_width {
        Some(hw) if hw.is_finite() && reference != 0.0 => hw / reference.abs(),
        Some(_) => f64::INFINITY,
        None => 0.0,
    };
    let v = if e + h <= tol {
        Verdict::Pass
    } else if e - h > tol {
        Verdict::Fail
    } else {
        Verdict::Inconclusive
    };
    (Some(e), v)
}

/// Mean and max over the defined EMs of a figure.
pub fn summarise(ems: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = ems.iter().flatten().copied().collect();
    if v.is_empty() {
        return (None, None);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    (Some(mean), Some(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn em_definition() {
        assert_eq!(em(2.0, 1.5), Some(0.25));
        assert_eq!(em(0.0, 0.0), Some(0.0));
        assert_eq!(em(0.0, 1.0), None);
    }

    #[test]
    fn verdicts() {
        // Exact reference, EM 1% vs 5% tolerance.
        assert_eq!(verdict(1.0, None, 1.01, Some(0.05)).1, Verdict::Pass);
        assert_eq!(verdict(1.0, None, 1.10, Some(0.05)).1, Verdict::Fail);
        // CI ±2%: EM 4% straddles 5% → inconclusive; EM 10% → fail; EM 1% → pass.
        assert_eq!(
            verdict(1.0, Some(0.02), 1.04, Some(0.05)).1,
            Verdict::Inconclusive
        );
        assert_eq!(verdict(1.0, Some(0.02), 1.10, Some(0.05)).1, Verdict::Fail);
        assert_eq!(verdict(1.0, Some(0.02), 1.01, Some(0.05)).1, Verdict::Pass);
        // CI wider than the tolerance can never pass.
        assert_eq!(
            verdict(1.0, Some(0.2), 1.0, Some(0.05)).1,
            Verdict::Inconclusive
        );
        assert_eq!(
            verdict(1.0, Some(f64::INFINITY), 1.0, Some(0.05)).1,
            Verdict::Inconclusive
        );
        assert_eq!(verdict(1.0, None, 1.5, None).1, Verdict::Unchecked);
    }
}
