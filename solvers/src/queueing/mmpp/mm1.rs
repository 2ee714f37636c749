//! MMPP/M/1 with an infinite buffer (Wu 3.46–3.47, 6.8–6.11; erratum W-41:
//! B = Q - Lambda - mu I, C = mu I). x_v = pi (I - R) R^v, L = pi R (I - R)^{-1} e.
//!
//! The two-state path keeps every matrix in a stack-allocated 2x2 and finds G
//! and R by logarithmic reduction. L comes from (6.11) when sp(R) <= 1/2 and
//! otherwise from G through the cancellation-free form of (3.37) (see
//! `mg1::virtual_wait`), which stays accurate near rho = 1 where (6.11) loses
//! digits. The general MAP/M/1 path goes through [`Qbd`].

use super::qbd::{Qbd, QbdSolution};
use crate::traffic::mmpp::{Map, Mmpp2};
use crate::SolveError;
use nalgebra::{DMatrix, Matrix2, RowVector2};

/// Stationary results of an MMPP/M/1 queue.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MmppM1 {
    pub pi: RowVector2<f64>,
    pub r: Matrix2<f64>,
    pub rho: f64,
    pub mean_rate: f64,
    /// Mean number in system (6.11).
    pub l: f64,
    /// Mean time in system W = L / mean rate (6.8).
    pub w: f64,
    pub p_empty: f64,
}

impl MmppM1 {
    /// Level vector x_v = pi (I - R) R^v (phase-resolved).
    pub fn level_vector(&self, v: usize) -> RowVector2<f64> {
        let mut x = self.pi * (Matrix2::identity() - self.r);
        for _ in 0..v {
            x *= self.r;
        }
        x
    }

    /// P(v customers in system), (6.9).
    pub fn level_prob(&self, v: usize) -> f64 {
        self.level_vector(v).sum()
    }

    /// P(at least v customers) = pi R^v e.
    pub fn tail_prob(&self, v: usize) -> f64 {
        let mut x = self.pi;
        for _ in 0..v {
            x *= self.r;
        }
        x.sum()
    }
}

fn inv2(m: &Matrix2<f64>, what: &str) -> Result<Matrix2<f64>, SolveError> {
    m.try_inverse()
        .ok_or_else(|| SolveError::Numerical(format!("{what} is singular")))
}

/// G of a 2-phase QBD by logarithmic reduction, all on the stack.
pub(crate) fn g_logred2(
    a0: &Matrix2<f64>,
    a1: &Matrix2<f64>,
    a2: &Matrix2<f64>,
) -> Result<Matrix2<f64>, SolveError> {
    let n = inv2(&(-a1), "A1")?;
    let mut h = n * a0;
    let mut l = n * a2;
    let mut g = l;
    let mut t = h;
    for _ in 0..64 {
        let u = h * l + l * h;
        let w = inv2(&(Matrix2::identity() - u), "I - U")?;
        h = w * (h * h);
        l = w * (l * l);
        g += t * l;
        t *= h;
        let defect = (1.0 - g[(0, 0)] - g[(0, 1)])
            .abs()
            .max((1.0 - g[(1, 0)] - g[(1, 1)]).abs());
        if defect < 1e-15 || t.abs().max() < 1e-16 {
            return Ok(g);
        }
    }
    Err(SolveError::Numerical(
        "logarithmic reduction did not converge".into(),
    ))
}

/// Checks mu and stability; returns rho.
pub(crate) fn check_stable(mean_rate: f64, mu: f64) -> Result<f64, SolveError> {
    crate::params::positive("mu", mu)?;
    let rho = mean_rate / mu;
    if rho >= 1.0 {
        return Err(SolveError::Unstable(format!(
            "rho = mean arrival rate / mu = {rho} >= 1: the infinite-buffer queue has no steady state"
        )));
    }
    Ok(rho)
}

/// The two-state MMPP/M/1 queue.
pub fn mmpp_m1(p: &Mmpp2, mu: f64) -> Result<MmppM1, SolveError> {
    let lam = p.mean_rate();
    let rho = check_stable(lam, mu)?;
    let q = Matrix2::new(-p.phi1, p.phi1, p.phi2, -p.phi2);
    let a0 = Matrix2::new(p.lambda1, 0.0, 0.0, p.lambda2);
    let a1 = q - a0 - Matrix2::identity() * mu;
    let a2 = Matrix2::identity() * mu;
    let g = g_logred2(&a0, &a1, &a2)?;
    let r = a0 * inv2(&(-(a1 + a0 * g)), "A1 + A0 G")?;
    let s = p.stationary();
    let pi = RowVector2::new(s[0], s[1]);
    // (6.11) L = pi R (I-R)^{-1} e amplifies the rounding in R by
    // 1/(1 - sp(R)) near saturation; there L comes from G instead, through
    // the cancellation-free (3.37) with exponential service (L = mu Wv): G is
    // stochastic and well conditioned. At light load that form cancels (its
    // two burstiness terms nearly balance) while (6.11) is exact, so the
    // spectral radius of R chooses (comparison against long GTH truncations
    // in docs/models/queueing.md).
    let sp = {
        let (t, d) = (r.trace(), r.determinant());
        0.5 * (t + (t * t - 4.0 * d).max(0.0).sqrt())
    };
    let l = if sp <= 0.5 {
        (pi * r * inv2(&(Matrix2::identity() - r), "I - R")?).sum()
    } else {
        let (a, b) = (g[(0, 1)], g[(1, 0)]);
        mu * super::mg1::virtual_wait(p, rho, 1.0 / mu, 2.0 / (mu * mu), a, b)
    };
    // P(empty) = 1 - rho exactly (flow balance mu (1 - P0) = mean rate).
    let p_empty = (mu - lam) / mu;
    Ok(MmppM1 {
        pi,
        r,
        rho,
        mean_rate: lam,
        l,
        w: l / lam,
        p_empty,
    })
}

/// Stationary results of a MAP/M/1 queue (e.g. an exact superposition).
#[derive(Debug, Clone)]
pub struct MapM1 {
    pub sol: QbdSolution,
    pub rho: f64,
    pub mean_rate: f64,
    pub l: f64,
    pub w: f64,
    pub p_empty: f64,
}

/// MAP/M/1 through the general QBD solver (level 0 has the MAP's phases too).
pub fn map_m1(map: &Map, mu: f64) -> Result<MapM1, SolveError> {
    let lam = map.mean_rate()?;
    let rho = check_stable(lam, mu)?;
    let m = map.phases();
    let mu_i = DMatrix::<f64>::identity(m, m) * mu;
    let qbd = Qbd {
        a0: map.d1.clone(),
        a1: &map.d0 - &mu_i,
        a2: mu_i.clone(),
        b0: map.d0.clone(),
        b1: map.d1.clone(),
        b2: mu_i,
    };
    let sol = qbd.solve()?;
    let l = sol.mean_level();
    let p_empty = sol.x0.sum();
    Ok(MapM1 {
        sol,
        rho,
        mean_rate: lam,
        l,
        w: l / lam,
        p_empty,
    })
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::markov::ctmc::Generator;
    use crate::queueing::mmpp::qbd::r_functional_iteration;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    /// Truncated bivariate CTMC solved by GTH: an independent brute force.
    fn brute_force(p: &Mmpp2, mu: f64, levels: usize) -> Vec<f64> {
        let n = 2 * (levels + 1);
        let mut g = Generator::new(n);
        let lam = [p.lambda1, p.lambda2];
        for v in 0..=levels {
            let i = 2 * v;
            g.add(i, i + 1, p.phi1);
            g.add(i + 1, i, p.phi2);
            for j in 0..2 {
                if v < levels {
                    g.add(i + j, i + 2 + j, lam[j]);
                }
                if v > 0 {
                    g.add(i + j, i - 2 + j, mu);
                }
            }
        }
        let pi = g.steady_state().unwrap();
        (0..=levels).map(|v| pi[2 * v] + pi[2 * v + 1]).collect()
    }

    #[test]
    fn poisson_case_is_mm1() {
        let p = Mmpp2::new(0.3, 0.8, 1.5, 1.5).unwrap();
        let q = mmpp_m1(&p, 2.0).unwrap();
        let rho: f64 = 0.75;
        assert!(rel(q.l, rho / (1.0 - rho)) < 1e-13);
        assert!(rel(q.w, 1.0 / (2.0 - 1.5)) < 1e-13);
        assert!(rel(q.p_empty, 1.0 - rho) < 1e-13);
        assert!(rel(q.level_prob(5), (1.0 - rho) * rho.powi(5)) < 1e-12);
    }

    #[test]
    fn agrees_with_brute_force_truncated_ctmc() {
        for (p, mu) in [
            (Mmpp2::new(0.1, 0.2, 2.0, 0.5).unwrap(), 2.5),
            (Mmpp2::new(0.09, 0.06, 4.0, 0.0).unwrap(), 4.5),
            (Mmpp2::new(1.0, 3.0, 0.2, 6.0).unwrap(), 3.0),
        ] {
            let q = mmpp_m1(&p, mu).unwrap();
            let levels = 700;
            let bf = brute_force(&p, mu, levels);
            let l_bf: f64 = bf.iter().enumerate().map(|(i, x)| i as f64 * x).sum();
            assert!(rel(q.l, l_bf) < 1e-9, "L {} vs {l_bf}", q.l);
            for v in [0, 1, 5, 20] {
                assert!(rel(q.level_prob(v), bf[v]) < 1e-9, "v={v}");
            }
        }
    }

    #[test]
    fn p_empty_is_one_minus_rho_and_r_solves_its_equation() {
        let p = Mmpp2::new(0.05, 0.02, 5.0, 0.1).unwrap();
        let mu = 1.6; // rho = 0.9375: heavy load, strongly bursty.
        let q = mmpp_m1(&p, mu).unwrap();
        assert!((q.level_prob(0) - (1.0 - q.rho)).abs() < 1e-12);
        assert!((q.p_empty - (1.0 - q.rho)).abs() < 1e-15);
        let a0 = Matrix2::new(p.lambda1, 0.0, 0.0, p.lambda2);
        let b = Matrix2::new(-p.phi1, p.phi1, p.phi2, -p.phi2) - a0 - Matrix2::identity() * mu;
        let res = a0 + q.r * b + q.r * q.r * mu;
        assert!(res.abs().max() < 1e-12, "{res}");
    }

    #[test]
    fn general_map_path_and_functional_iteration_agree() {
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let mu = 1.7;
        let q2 = mmpp_m1(&p, mu).unwrap();
        let qm = map_m1(&Map::from_mmpp2(&p), mu).unwrap();
        assert!(rel(qm.l, q2.l) < 1e-11);
        assert!(rel(qm.p_empty, q2.p_empty) < 1e-11);
        let m = Map::from_mmpp2(&p);
        let id = DMatrix::<f64>::identity(2, 2);
        let r = r_functional_iteration(&m.d1, &(&m.d0 - &id * mu), &(&id * mu), 1e-15, 10_000_000)
            .unwrap();
        for i in 0..2 {
            for j in 0..2 {
                assert!((r[(i, j)] - q2.r[(i, j)]).abs() < 1e-10);
            }
        }
    }

    #[test]
    fn heavy_load_agrees_with_banded_gth_on_a_long_truncation() {
        use crate::queueing::mmpp::mm1k::mmpp_m1k;
        for (p, rho, k) in [
            (Mmpp2::new(0.01, 0.02, 5.0, 0.1).unwrap(), 0.99, 200_000),
            (Mmpp2::new(3.0, 1.0, 1.0, 2.0).unwrap(), 0.9999, 400_000),
        ] {
            let mu = p.mean_rate() / rho;
            let q = mmpp_m1(&p, mu).unwrap();
            let b = mmpp_m1k(&p, mu, k).unwrap();
            assert!(b.level_prob(k) < 1e-17);
            assert!(rel(q.l, b.l) < 1e-10, "rho={rho}: {} vs {}", q.l, b.l);
        }
    }

    #[test]
    fn light_load_slow_modulation_agrees_with_gth() {
        use crate::queueing::mmpp::mm1k::mmpp_m1k;
        let p = Mmpp2::new(
            0.0013000526914500774,
            0.0011604307560260218,
            94.23115806022982,
            0.8901328707757121,
        )
        .unwrap();
        let mu = 13647.669247715041;
        let q = mmpp_m1(&p, mu).unwrap();
        let b = mmpp_m1k(&p, mu, 60).unwrap();
        assert!(rel(q.l, b.l) < 1e-13, "{} vs {}", q.l, b.l);
    }

    #[test]
    fn exact_superposition_queue_agrees_with_a_long_finite_queue() {
        use crate::queueing::mmpp::mm1k::map_m1k;
        let p = Mmpp2::new(0.3, 0.1, 2.0, 0.2).unwrap();
        let m = Map::lumped_copies(&p, 3).superpose(&Map::from_mmpp2(&p.split(0.4)));
        let mu = 6.0;
        let q = map_m1(&m, mu).unwrap();
        let f = map_m1k(&m, mu, 1500).unwrap();
        assert!(f.level_prob(1500) < 1e-16);
        assert!(rel(q.l, f.l) < 1e-9, "{} vs {}", q.l, f.l);
        assert!(rel(q.p_empty, f.level_prob(0)) < 1e-9);
        assert!((q.p_empty - (1.0 - q.rho)).abs() < 1e-10);
    }

    #[test]
    fn unstable_queue_is_refused_naming_rho() {
        let p = Mmpp2::new(0.1, 0.1, 3.0, 1.0).unwrap();
        match mmpp_m1(&p, 2.0) {
            Err(SolveError::Unstable(msg)) => assert!(msg.contains("rho")),
            other => panic!("{other:?}"),
        }
    }
}
