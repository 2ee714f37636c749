//! The verdict of one compared point: the papers' EM (`verdicts::em`,
//! `|sim − model| / |sim|`) against a tolerance, taking the reference's CI
//! into account.

use verdicts::{em, PointVerdict as Verdict};

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

#[cfg(test)]
mod tests {
    use super::*;

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
