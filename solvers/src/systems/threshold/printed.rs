//! The thesis's printed ME formulas, evaluated literally where that is
//! possible (`variant: as-printed` of `threshold.me`). They exist to show
//! where and why they fail (docs/models/threshold.md, "The printed formulas");
//! the default `derived` variant is the exact solution.
//!
//! * One region: Yan (2.8)–(2.11) — x = (L̄ − ρ)/L̄, g = ρ(1 − x)/(x(1 − ρ)),
//!   y = (1 − ρ)/(1 − x), L̄ of (2.11) (without Ca², erratum Y-4).
//! * Two regions (ET): Yan (5.9)–(5.22) with t = T1 and 2N = K.
//! * Three or more regions (AJT, (5.34)–(6.45)): not computable — (5.42)
//!   needs L̄ from (6.45), which needs the x_i of (5.42); (5.44) is the ET
//!   formula in t and 2N; T_i in (6.45)/(5.43) is undefined for i = 3.

use crate::queueing::gege1n::GeQueue;
use crate::SolveError;

/// The distribution implied by the printed multipliers, with the multipliers
/// themselves for the report.
#[derive(Debug, Clone, PartialEq)]
pub struct Printed {
    pub p: Vec<f64>,
    /// P(0) exactly as the printed normalisation ((5.9) or 1/Z of (2.7)) gives it.
    pub p0_printed: f64,
    pub named: Vec<(&'static str, f64)>,
}

/// `Ok(None)`: ρ1 >= 1, outside the printed forms' stated domain ("with
/// ρ1 < 1 these expressions represent ..."), reported as saturated.
pub fn solve(q: &GeQueue) -> Result<Option<Printed>, SolveError> {
    let rho1 = q.lambda / q.mus[0];
    if rho1 >= 1.0 {
        return Ok(None);
    }
    match q.regions() {
        1 => one_region(q).map(Some),
        2 => entry_threshold(q).map(Some),
        r => Err(SolveError::param(
            "variant",
            format!(
                "as-printed exists for 1 region (eqs 2.8–2.11) and 2 regions (ET, eqs 5.9–5.22) only, got {r}: \
                 the printed AJT formulas are circular ((5.42) needs L̄ of (6.45), which needs the x_i of (5.42)), \
                 reuse the two-region ρ of (5.44) and leave T_3 undefined; use variant `derived`"
            ),
        )),
    }
}

fn broken(what: &str, value: f64, rule: &str) -> SolveError {
    SolveError::Numerical(format!(
        "as-printed ME formulas break here: {what} = {value} ({rule}); \
         see docs/models/threshold.md; variant `derived` is exact"
    ))
}

fn one_region(q: &GeQueue) -> Result<Printed, SolveError> {
    let rho = q.lambda / q.mus[0];
    let l = rho / 2.0 * (1.0 + (1.0 + rho * q.cs2) / (1.0 - rho)); // (2.11)
    let x = (l - rho) / l; // (2.8)
    let g = rho * (1.0 - x) / (x * (1.0 - rho)); // (2.9)
    let y = (1.0 - rho) / (1.0 - x); // (2.10)
    if !(x > 0.0 && x < 1.0) {
        return Err(broken("x (2.8)", x, "must lie in (0, 1)"));
    }
    let k = q.k;
    let mut w: Vec<f64> = (0..=k)
        .map(|n| if n == 0 { 1.0 } else { g * x.powi(n as i32) })
        .collect();
    w[k] *= y;
    finish(w, vec![("x", x), ("g", g), ("y", y), ("L_bar", l)], None)
}

fn entry_threshold(q: &GeQueue) -> Result<Printed, SolveError> {
    let t = q.thresholds[0];
    let two_n = q.k; // K = 2N
    let tf = t as f64;
    let (ca2, cs2) = (q.ca2, q.cs2);
    let rho1 = q.lambda / q.mus[0];
    let rho2 = q.lambda / q.mus[1];
    let lbar = |r: f64| r / 2.0 * (1.0 + (ca2 + r * cs2) / (1.0 - r)); // (5.14), (5.21), (5.22)
    let l1 = lbar(rho1);
    let l2 = lbar(rho2);
    let x1 = (l1 - rho1) / l1; // (5.12)
    let g1 = rho1 * (1.0 - x1) / (x1 * (1.0 - rho1)); // (5.11)
    let rho = (tf * rho1 + (two_n - t) as f64 * rho2) / two_n as f64; // (5.19)
    let l = l1 + x1 * l2 + tf * x1.powi(t as i32); // (5.20)
    let big_x = g1 * x1 * (1.0 - x1.powi(t as i32)) / (1.0 - x1);
    let g2 = (rho / (1.0 - rho) - big_x) * (rho - (1.0 - rho) * big_x)
        / (l - (1.0 - rho)
            * (big_x / (1.0 - x1) - tf * x1.powi(t as i32 + 1) + tf * rho / (1.0 - rho)
                - (tf + 1.0) * big_x
                - 1.0)); // (5.16)
    let x2 = (rho * (1.0 - big_x) - big_x) / ((1.0 - rho) * (g2 - big_x) + rho); // (5.17)
    let m = (two_n - t) as i32;
    let s2 = g2 * (x2 - x2.powi(m)) / (1.0 - x2);
    let y = (rho * (1.0 + s2) - s2) / (rho * g2 * x2.powi(m)); // (5.18)
    let p0 = 1.0 / (1.0 + g1 * (x1 - x1.powi(t as i32)) / (1.0 - x1) + s2); // (5.9)
    let named = vec![
        ("x1", x1),
        ("g1", g1),
        ("x2", x2),
        ("g2", g2),
        ("y", y),
        ("rho", rho),
        ("L_bar", l),
    ];
    if rho2 >= 1.0 || rho2.is_nan() {
        return Err(broken("ρ2 (5.15)", rho2, "(5.22) needs ρ2 < 1"));
    }
    if !(x1 > 0.0 && x1 < 1.0) {
        return Err(broken("x1 (5.12)", x1, "must lie in (0, 1)"));
    }
    if !(x2 > 0.0 && x2 < 1.0) {
        return Err(broken("x2 (5.17)", x2, "must lie in (0, 1)"));
    }
    if g2.is_nan() || g2 <= 0.0 {
        return Err(broken("g2 (5.16)", g2, "must be > 0"));
    }
    if y.is_nan() || y <= 0.0 {
        return Err(broken("y (5.18)", y, "must be > 0"));
    }
    if !(p0 > 0.0 && p0 <= 1.0) {
        return Err(broken("P(0) (5.9)", p0, "must lie in (0, 1]"));
    }
    // (5.7) with the region-wise multipliers that (5.9) and (5.18) use:
    // g1 x1^n up to t, g2 x2^(n−t) above, y at 2N.
    let w: Vec<f64> = (0..=two_n)
        .map(|n| {
            if n == 0 {
                1.0
            } else if n <= t {
                g1 * x1.powi(n as i32)
            } else {
                let v = g2 * x2.powi((n - t) as i32);
                if n == two_n {
                    v * y
                } else {
                    v
                }
            }
        })
        .collect();
    finish(w, named, Some(p0))
}

fn finish(
    w: Vec<f64>,
    named: Vec<(&'static str, f64)>,
    p0_printed: Option<f64>,
) -> Result<Printed, SolveError> {
    if let Some(n) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
        return Err(broken(
            "an unnormalised state weight",
            w[n],
            "P(n) must be >= 0",
        ));
    }
    let total: f64 = w.iter().sum();
    let p: Vec<f64> = w.iter().map(|v| v / total).collect();
    Ok(Printed {
        p0_printed: p0_printed.unwrap_or(p[0]),
        p,
        named,
    })
}
