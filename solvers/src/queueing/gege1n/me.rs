//! Maximum-entropy (ME) closed form of the GE-type queue with region-wise
//! service rates (docs/models/threshold.md, "Derived ME solution").
//!
//! Constraints: normalisation, utilisation of each region, mean number in
//! each region and P(K). Maximising the entropy under them gives
//! P(n) = (1/Z) g_k x_k^n y^[n=K] for n in region k: geometric inside a
//! region with one multiplier x_k per region, a jump at 0 (g_1), one at each
//! threshold (g_{k+1}/g_k) and one at K (y). The values of the multipliers
//! come from the GE/GE/1 queue (x_k from L̄_k of eq 5.14, g_1 from eq 5.11),
//! the jump factors from the balance of flow across each threshold, and y
//! from the flow balance of the full state.

use super::model::GeQueue;

#[derive(Debug, Clone, PartialEq)]
pub struct MeSolution {
    /// Geometric multiplier per region.
    pub x: Vec<f64>,
    /// P(1)/P(0) = g_1 x_1.
    pub g1x1: f64,
    /// P(T_k + 1)/P(T_k) at each threshold.
    pub jumps: Vec<f64>,
    /// Extra factor of P(K) relative to the geometric continuation.
    pub y: f64,
    /// P(0..=K).
    pub p: Vec<f64>,
    /// Customer blocking probability π.
    pub p_block: f64,
}

/// x_k = (L̄_k − ρ_k)/L̄_k with L̄_k = (ρ_k/2)(1 + (Ca² + ρ_k Cs²)/(1 − ρ_k)),
/// written in the rational form that stays valid (and positive) for ρ_k >= 1.
pub fn multiplier(lambda: f64, mu: f64, tau_a: f64, tau_s: f64) -> f64 {
    (tau_a * lambda + tau_s * mu * (1.0 - tau_a)) / (tau_s * mu + tau_a * lambda * (1.0 - tau_s))
}

/// Mean number in the infinite GE/GE/1 queue, eq (5.14); needs ρ < 1.
pub fn gege1_mean(lambda: f64, mu: f64, ca2: f64, cs2: f64) -> f64 {
    let rho = lambda / mu;
    rho / 2.0 * (1.0 + (ca2 + rho * cs2) / (1.0 - rho))
}

pub fn solve(q: &GeQueue) -> MeSolution {
    let (ta, ts) = (q.tau_a(), q.tau_s());
    let (a, s) = (1.0 - ta, 1.0 - ts);
    let lambda = q.lambda;
    let x: Vec<f64> = q
        .mus
        .iter()
        .map(|&mu| multiplier(lambda, mu, ta, ts))
        .collect();
    // g_1 x_1 = ρ_1 (1 − x_1)/(1 − ρ_1) (eq 5.11), cancelled so it holds at ρ_1 = 1.
    let mu1 = q.mus[0];
    let g1x1 = lambda * ta * ts / (ts * mu1 + ta * lambda * s);
    let jumps: Vec<f64> = (0..q.thresholds.len())
        .map(|k| x[k] * (q.mus[k] / q.mus[k + 1]) * (1.0 - s * x[k + 1]) / (1.0 - s * x[k]))
        .collect();
    // Ratio P(n+1)/P(n) of the unbounded form for 1 <= n.
    let ratio = |n: usize| -> f64 {
        match q.thresholds.iter().position(|&t| t == n) {
            Some(k) => jumps[k],
            None => x[q.region(n)],
        }
    };
    let k = q.k;
    // Unnormalised weights, rescaled on the fly so that large λ/μ and large K
    // cannot overflow.
    let mut w = vec![0.0; k + 1];
    w[0] = 1.0;
    for n in 1..k {
        w[n] = w[n - 1] * if n == 1 { g1x1 } else { ratio(n - 1) };
        if w[n] > 1e200 {
            for v in w.iter_mut().take(n + 1) {
                *v *= 1e-200;
            }
        }
    }
    // Flow balance of the full state K (every positive term, so no
    // cancellation): what flows into K from below equals what leaves it,
    // P(K) τ_s μ_K = τ_a λ [q_0 a^{K-1} P(0) + Σ_{1<=i<K} a^{K-1-i} P(i)],
    // q_0 = τ_s/(1 − a s) the chance that a batch arriving at an empty
    // system leaves someone behind. Equivalent to the global balance
    // λ(1 − π) = Σ μ(n) P(n) and to y = 1/(1 − (1 − τ_s) x_last) (tests).
    let q0 = ts / (1.0 - a * s);
    let mut inflow = q0 * a.powi(k as i32 - 1) * w[0];
    for (i, wi) in w.iter().enumerate().take(k).skip(1) {
        inflow += a.powi((k - 1 - i) as i32) * wi;
    }
    let mu_k = q.mu(k);
    w[k] = ta * lambda * inflow / (ts * mu_k);
    let continuation = w[k - 1] * if k == 1 { g1x1 } else { ratio(k - 1) };
    let y = w[k] / continuation;
    let total: f64 = w.iter().sum();
    let p: Vec<f64> = w.iter().map(|v| v / total).collect();
    let p_block = blocking(q, &p);
    MeSolution {
        x,
        g1x1,
        jumps,
        y,
        p,
        p_block,
    }
}

/// π = δ_0 (1 − τ_a)^K P(0) + Σ_{n>=1} (1 − τ_a)^{K−n} P(n),
/// δ_0 = τ_s/(τ_a + τ_s − τ_a τ_s): the expected fraction of a batch's
/// customers that find no room.
pub fn blocking(q: &GeQueue, p: &[f64]) -> f64 {
    let (ta, ts) = (q.tau_a(), q.tau_s());
    let a = 1.0 - ta;
    let delta0 = ts / (ta + ts - ta * ts);
    let k = q.k;
    let mut pi = delta0 * a.powi(k as i32) * p[0];
    for (n, pn) in p.iter().enumerate().skip(1) {
        pi += a.powi((k - n) as i32) * pn;
    }
    pi
}
