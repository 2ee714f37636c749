//! MMPP/M/1/K (Wu 7.5–7.10; K counts the packet in service): the finite
//! bivariate chain (level v = 0..K, phase j) solved by GTH on band storage.
//!
//! States are numbered v * m + j, so every transition (and every fill-in of
//! GTH's elimination from the top state down) stays within a band of
//! half-width 2m - 1. Banded GTH costs O(n b^2) and keeps GTH's property of
//! performing no subtractions: blocking probabilities of 1e-10 and far below
//! come out with full relative accuracy.

use crate::traffic::mmpp::{Map, Mmpp2};
use crate::SolveError;

/// GTH on a banded generator. `band` is row-major n x (2b+1): entry (i, j),
/// |i - j| <= b, sits at `i * (2b+1) + (j + b - i)`; diagonal entries ignored.
/// Overwrites `band` and writes the stationary vector into `pi`.
pub fn gth_banded(n: usize, b: usize, band: &mut [f64], pi: &mut [f64]) -> Result<(), SolveError> {
    let w = 2 * b + 1;
    debug_assert_eq!(band.len(), n * w);
    let at = |i: usize, j: usize| i * w + j + b - i;
    for k in (1..n).rev() {
        let lo = k.saturating_sub(b);
        let mut s = 0.0;
        for j in lo..k {
            s += band[at(k, j)];
        }
        if s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            return Err(SolveError::Numerical(format!(
                "chain is reducible: state {k} cannot reach any lower-numbered state"
            )));
        }
        for i in lo..k {
            let f = band[at(i, k)];
            if f != 0.0 {
                let f = f / s;
                band[at(i, k)] = f;
                for j in lo..k {
                    if j != i {
                        let x = band[at(k, j)];
                        if x != 0.0 {
                            band[at(i, j)] += f * x;
                        }
                    }
                }
            }
        }
    }
    pi[0] = 1.0;
    // Unnormalised weights grow like ρ^level in an overloaded queue and would
    // overflow (K = 1000 at ρ = 2 already does): rescale the prefix by a power
    // of two (exact) before they do. Weights that underflow to 0 are below
    // 1e-300 of the largest; `low` skips the prefix that already has, so each
    // weight is rescaled at most a few times (O(n) in all).
    let mut low = 0;
    for j in 1..n {
        let mut acc = 0.0;
        for i in j.saturating_sub(b)..j {
            acc += pi[i] * band[at(i, j)];
        }
        pi[j] = acc;
        if acc > 1e200 {
            let scale = 2f64.powi(-(acc.log2().ceil() as i32));
            for p in &mut pi[low..=j] {
                *p *= scale;
            }
            while low < j && pi[low] == 0.0 {
                low += 1;
            }
        }
    }
    let total: f64 = pi.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(SolveError::Numerical(format!(
            "GTH normalisation failed (sum {total})"
        )));
    }
    for p in pi.iter_mut() {
        *p /= total;
    }
    Ok(())
}

/// Results of an MMPP/M/1/K (or MAP/M/1/K) queue.
#[derive(Debug, Clone, PartialEq)]
pub struct MmppM1K {
    /// Joint probabilities p[v * m + j].
    pub p: Vec<f64>,
    pub phases: usize,
    pub k: usize,
    pub mean_rate: f64,
    /// Mean number in system (K counts the one in service).
    pub l: f64,
    /// Probability that an arriving packet finds K in system (7.9)–(7.10).
    pub p_block: f64,
    /// Accepted packets per unit time = mean_rate (1 - p_block) = mu (1 - P(0)).
    pub throughput: f64,
    /// Mean time in system of accepted packets, L / throughput (Little, 7.8).
    pub w: f64,
}

impl MmppM1K {
    /// P(v in system), (7.7).
    pub fn level_prob(&self, v: usize) -> f64 {
        self.p[v * self.phases..(v + 1) * self.phases].iter().sum()
    }
}

/// Shared finish: marginals, arrival-weighted blocking, throughput, delay.
fn finish(p: Vec<f64>, m: usize, k: usize, arrival_rate_of_phase: &[f64]) -> MmppM1K {
    let mut l = 0.0;
    let mut arrivals = 0.0;
    let mut arrivals_at_k = 0.0;
    for v in 0..=k {
        let mut pv = 0.0;
        let mut av = 0.0;
        for j in 0..m {
            let x = p[v * m + j];
            pv += x;
            av += x * arrival_rate_of_phase[j];
        }
        l += v as f64 * pv;
        arrivals += av;
        if v == k {
            arrivals_at_k = av;
        }
    }
    let p_block = arrivals_at_k / arrivals;
    let throughput = arrivals * (1.0 - p_block);
    MmppM1K {
        p,
        phases: m,
        k,
        mean_rate: arrivals,
        l,
        p_block,
        throughput,
        w: l / throughput,
    }
}

/// Largest buffer accepted.
pub const MAX_K: usize = 5_000_000;

fn check(mu: f64, k: usize) -> Result<(), SolveError> {
    crate::params::positive("mu", mu)?;
    if k < 1 {
        return Err(SolveError::param("K", format!("must be >= 1, got {k}")));
    }
    // Band storage takes ~40 bytes per state and phase: stay far from exhausting memory.
    if k > MAX_K {
        return Err(SolveError::param(
            "K",
            format!("must be <= {MAX_K} (memory of the banded solver), got {k}"),
        ));
    }
    Ok(())
}

/// The two-state MMPP/M/1/K queue.
pub fn mmpp_m1k(p: &Mmpp2, mu: f64, k: usize) -> Result<MmppM1K, SolveError> {
    check(mu, k)?;
    let n = 2 * (k + 1);
    let b = 2;
    let w = 2 * b + 1;
    let mut band = vec![0.0; n * w];
    let at = |i: usize, j: usize| i * w + j + b - i;
    let lam = [p.lambda1, p.lambda2];
    for v in 0..=k {
        let i = 2 * v;
        band[at(i, i + 1)] = p.phi1;
        band[at(i + 1, i)] = p.phi2;
        for (j, &l) in lam.iter().enumerate() {
            if v < k {
                band[at(i + j, i + 2 + j)] = l;
            }
            if v > 0 {
                band[at(i + j, i - 2 + j)] = mu;
            }
        }
    }
    let mut pi = vec![0.0; n];
    gth_banded(n, b, &mut band, &mut pi)?;
    Ok(finish(pi, 2, k, &lam))
}

/// MAP/M/1/K: arrivals (D1) may change the phase; an arrival that finds K in
/// system is lost but its phase transition still happens.
pub fn map_m1k(map: &Map, mu: f64, k: usize) -> Result<MmppM1K, SolveError> {
    check(mu, k)?;
    let m = map.phases();
    let n = m * (k + 1);
    let b = (2 * m).saturating_sub(1).max(1);
    let w = 2 * b + 1;
    let mut band = vec![0.0; n * w];
    let at = |i: usize, j: usize| i * w + j + b - i;
    for v in 0..=k {
        for i in 0..m {
            let s = v * m + i;
            for j in 0..m {
                let d0 = map.d0[(i, j)];
                let d1 = map.d1[(i, j)];
                if i != j {
                    band[at(s, v * m + j)] += d0;
                }
                if v < k {
                    band[at(s, (v + 1) * m + j)] += d1;
                } else if i != j {
                    band[at(s, v * m + j)] += d1;
                }
            }
            if v > 0 {
                band[at(s, (v - 1) * m + i)] += mu;
            }
        }
    }
    let mut pi = vec![0.0; n];
    gth_banded(n, b, &mut band, &mut pi)?;
    let rates: Vec<f64> = (0..m).map(|i| map.d1.row(i).sum()).collect();
    Ok(finish(pi, m, k, &rates))
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::markov::ctmc::Generator;
    use crate::queueing::mm1k::mm1k_metrics;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    fn dense_gth(p: &Mmpp2, mu: f64, k: usize) -> Vec<f64> {
        let mut g = Generator::new(2 * (k + 1));
        let lam = [p.lambda1, p.lambda2];
        for v in 0..=k {
            g.add(2 * v, 2 * v + 1, p.phi1);
            g.add(2 * v + 1, 2 * v, p.phi2);
            for j in 0..2 {
                if v < k {
                    g.add(2 * v + j, 2 * v + 2 + j, lam[j]);
                }
                if v > 0 {
                    g.add(2 * v + j, 2 * v - 2 + j, mu);
                }
            }
        }
        g.steady_state().unwrap()
    }

    #[test]
    fn poisson_case_is_mm1k() {
        for (lam, mu, k) in [(1.0, 2.0, 5), (3.0, 2.0, 10), (2.0, 2.0, 7), (0.5, 4.0, 12)] {
            let p = Mmpp2::new(0.4, 0.9, lam, lam).unwrap();
            let q = mmpp_m1k(&p, mu, k).unwrap();
            let e = mm1k_metrics(lam, mu, k);
            assert!(rel(q.l, e.l) < 1e-12);
            assert!(rel(q.p_block, e.p_block) < 1e-12);
            assert!(rel(q.throughput, e.throughput) < 1e-12);
            assert!(rel(q.w, e.w) < 1e-12);
        }
    }

    #[test]
    fn agrees_with_dense_gth_and_keeps_tiny_blocking_accurate() {
        // Light load, big buffer: blocking far below 1e-10.
        for (p, mu, k) in [
            (Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap(), 2.0, 16),
            (Mmpp2::new(0.5, 0.5, 0.3, 0.05).unwrap(), 3.0, 14),
            (Mmpp2::new(0.6, 0.4, 9.0, 0.0).unwrap(), 3.4, 32),
            // Bursty arrivals with blocking near 1e-10 and 1e-11.
            (Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap(), 4.0, 30),
            (Mmpp2::new(0.6, 0.4, 9.0, 0.0).unwrap(), 10.0, 80),
        ] {
            let q = mmpp_m1k(&p, mu, k).unwrap();
            let d = dense_gth(&p, mu, k);
            for (a, b) in q.p.iter().zip(&d) {
                assert!(rel(*a, *b) < 1e-12, "{a} vs {b}");
            }
            let pk = [d[2 * k], d[2 * k + 1]];
            let pb = (pk[0] * p.lambda1 + pk[1] * p.lambda2) / p.mean_rate();
            assert!(rel(q.p_block, pb) < 1e-12);
            // Flow balance: accepted = served.
            let served = mu * (1.0 - q.level_prob(0));
            assert!(rel(q.throughput, served) < 1e-12);
        }
    }

    #[test]
    fn bursty_blocking_in_the_1e10_range() {
        let q = mmpp_m1k(&Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap(), 4.0, 30).unwrap();
        assert!(q.p_block > 5e-11 && q.p_block < 5e-10, "{}", q.p_block);
        let q = mmpp_m1k(&Mmpp2::new(0.6, 0.4, 9.0, 0.0).unwrap(), 10.0, 80).unwrap();
        assert!(q.p_block > 5e-12 && q.p_block < 5e-11, "{}", q.p_block);
    }

    #[test]
    fn blocking_near_1e10_is_accurate() {
        // Independent check: at light load and K large the blocking equals
        // the MMPP/M/1 tail-based ratio closely; here compare banded vs dense GTH
        // and the Poisson closed form at the 1e-10 scale.
        let (lam, mu) = (0.1, 1.0);
        let k = 10;
        let p = Mmpp2::new(0.3, 0.3, lam, lam).unwrap();
        let q = mmpp_m1k(&p, mu, k).unwrap();
        let e = mm1k_metrics(lam, mu, k);
        assert!(e.p_block > 5e-11 && e.p_block < 2e-10);
        assert!(rel(q.p_block, e.p_block) < 1e-12);
    }

    #[test]
    fn map_path_agrees_with_two_state_path() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let a = mmpp_m1k(&p, 1.1, 9).unwrap();
        let b = map_m1k(&Map::from_mmpp2(&p), 1.1, 9).unwrap();
        assert!(rel(a.l, b.l) < 1e-12);
        assert!(rel(a.p_block, b.p_block) < 1e-12);
    }

    #[test]
    fn refuses_bad_input() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        assert!(mmpp_m1k(&p, 1.0, 0).is_err());
        assert!(mmpp_m1k(&p, 0.0, 3).is_err());
        assert!(mmpp_m1k(&p, 1.0, MAX_K + 1).is_err());
    }
}
