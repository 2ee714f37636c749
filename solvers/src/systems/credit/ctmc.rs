//! Exact steady state of the two-node credit chain.

use super::{model_param_docs, Credit, RawModel, METRICS};
use crate::markov::ctmc::Generator;
use crate::params::parse;
use crate::{Kind, Outcome, SolveError, Solver, SolverDoc, TaskContext};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CreditMetrics {
    pub l1: f64,
    pub l2: f64,
    pub l: f64,
    /// Throughput, computed as μ2·P(j ≥ 1).
    pub t: f64,
    pub r: f64,
    /// Probability that an arrival is lost (Node 1 full; PASTA).
    pub p_block: f64,
}

#[inline]
fn idx(c: &Credit, i: usize, j: usize) -> usize {
    i * (c.m + 1) + j
}

/// Builds the generator from the three transition rules (catalogue §1.2).
pub fn generator(c: &Credit) -> Generator {
    let mut g = Generator::new((c.n + 1) * (c.m + 1));
    for i in 0..=c.n {
        for j in 0..=c.m {
            let s = idx(c, i, j);
            if i < c.n {
                g.add(s, idx(c, i + 1, j), c.lambda);
            }
            if i >= 1 && j < c.m {
                g.add(s, idx(c, i - 1, j + 1), c.mu1);
            }
            if j >= 1 {
                g.add(s, idx(c, i, j - 1), c.mu2);
            }
        }
    }
    g
}

/// Joint distribution P[i][j], flattened as i·(m+1) + j.
pub fn distribution(c: &Credit) -> Result<Vec<f64>, SolveError> {
    generator(c).steady_state_for("n, m")
}

pub fn solve_credit_ctmc(c: &Credit) -> Result<CreditMetrics, SolveError> {
    let p = distribution(c)?;
    let (mut l1, mut l2, mut p_j0, mut p_full) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..=c.n {
        for j in 0..=c.m {
            let x = p[idx(c, i, j)];
            l1 += i as f64 * x;
            l2 += j as f64 * x;
            if j == 0 {
                p_j0 += x;
            }
            if i == c.n {
                p_full += x;
            }
        }
    }
    // T = μ2·(1 − ΣP_i0) (4.10, first form); the identities with λ(1 − ΣP_nj) and
    // μ1·P(i ≥ 1, j < m) hold too and are tested. 1 − p_j0 is summed directly to
    // avoid cancellation when Node 2 is nearly always empty.
    let busy2: f64 = (0..=c.n)
        .flat_map(|i| (1..=c.m).map(move |j| (i, j)))
        .map(|(i, j)| p[idx(c, i, j)])
        .sum();
    let _ = p_j0;
    let t = c.mu2 * busy2;
    let l = l1 + l2;
    Ok(CreditMetrics {
        l1,
        l2,
        l,
        t,
        r: l / t,
        p_block: p_full,
    })
}

pub(super) struct CreditCtmc;

impl Solver for CreditCtmc {
    fn name(&self) -> &'static str {
        "credit.ctmc"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_block")]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary:
                "Yan ch.4 credit-based flow control: exact steady state of the two-node CTMC (GTH)",
            params: model_param_docs(),
            metrics: METRICS.to_vec(),
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let c = parse::<RawModel>(params)?.validate()?;
        let m = solve_credit_ctmc(&c)?;
        Outcome::new()
            .with("L1", m.l1)
            .with("L2", m.l2)
            .with("L", m.l)
            .with("T", m.t)
            .with("R", m.r)
            .with("P_block", m.p_block)
            .checked(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    fn yan(n: usize, m: usize) -> Credit {
        Credit {
            lambda: 5.0,
            mu1: 6.0,
            mu2: 8.0,
            n,
            m,
        }
    }

    #[test]
    fn throughput_identities_hold() {
        for &(n, m) in &[(12, 2), (12, 11), (4, 4), (10, 10), (1, 1), (3, 7)] {
            let c = yan(n, m);
            let p = distribution(&c).unwrap();
            let m_ = solve_credit_ctmc(&c).unwrap();
            let lost: f64 = (0..=m).map(|j| p[idx(&c, n, j)]).sum();
            let t_arr = c.lambda * (1.0 - lost);
            let t_mu1: f64 = c.mu1
                * (1..=n)
                    .flat_map(|i| (0..m).map(move |j| (i, j)))
                    .map(|(i, j)| p[idx(&c, i, j)])
                    .sum::<f64>();
            assert!(
                (m_.t - t_arr).abs() < 1e-12 * m_.t,
                "n={n} m={m}: {} vs {t_arr}",
                m_.t
            );
            assert!(
                (m_.t - t_mu1).abs() < 1e-12 * m_.t,
                "n={n} m={m}: {} vs {t_mu1}",
                m_.t
            );
        }
    }

    /// Cross-check with the thesis's own formula (4.6), repaired (erratum Y-8f):
    /// P = B(I − ℵ + eB)^{-1}, ℵ = I + G/q, q = max|G_ii|, any B with Be ≠ 0.
    #[test]
    fn agrees_with_the_repaired_formula_4_6() {
        for &(n, m) in &[(12, 5), (6, 6)] {
            let c = yan(n, m);
            let g = generator(&c).to_matrix();
            let s = g.nrows();
            let q = (0..s).map(|i| g[(i, i)].abs()).fold(0.0, f64::max);
            let aleph = DMatrix::identity(s, s) + &g / q;
            let b = DVector::from_element(s, 1.0 / s as f64).transpose();
            let e = DVector::from_element(s, 1.0);
            let mat = DMatrix::identity(s, s) - aleph + &e * &b;
            let p = &b * mat.try_inverse().unwrap();
            let gth = distribution(&c).unwrap();
            for k in 0..s {
                assert!(
                    (p[k] - gth[k]).abs() < 1e-12,
                    "state {k}: {} vs {}",
                    p[k],
                    gth[k]
                );
            }
        }
    }

    /// The catalogue's corrected-CTMC values (4 decimals) as a regression check.
    #[test]
    fn matches_catalogue_reference_values() {
        let group_a = [
            (2, 7.4228, 0.7843, 4.4212, 1.8563),
            (5, 4.2043, 1.3153, 4.8559, 1.1367),
            (11, 3.6775, 1.5322, 4.8958, 1.0641),
        ];
        for (m, l1, l2, t, r) in group_a {
            let x = solve_credit_ctmc(&yan(12, m)).unwrap();
            for (got, want) in [(x.l1, l1), (x.l2, l2), (x.t, t), (x.r, r)] {
                assert!((got - want).abs() < 6e-5, "m={m}: {got} vs {want}");
            }
        }
        let group_b = [
            (4, 1.7228, 0.9615, 4.2664, 0.6292),
            (10, 3.3086, 1.4742, 4.8425, 0.9877),
        ];
        for (nm, l1, l2, t, r) in group_b {
            let x = solve_credit_ctmc(&yan(nm, nm)).unwrap();
            for (got, want) in [(x.l1, l1), (x.l2, l2), (x.t, t), (x.r, r)] {
                assert!((got - want).abs() < 6e-5, "n=m={nm}: {got} vs {want}");
            }
        }
    }

    /// With m large, Node 2 never blocks: Node 1 is M/M/1/n, and Node 2 sees
    /// the departures of an M/M/1/n queue. L1 and T have closed forms.
    #[test]
    fn large_m_reduces_node1_to_mm1n() {
        let c = Credit {
            lambda: 2.0,
            mu1: 3.0,
            mu2: 50.0,
            n: 6,
            m: 60,
        };
        let x = solve_credit_ctmc(&c).unwrap();
        let mm = crate::queueing::mm1k::mm1k_metrics(2.0, 3.0, 6);
        assert!((x.l1 - mm.l).abs() < 1e-9, "{} vs {}", x.l1, mm.l);
        assert!((x.t - mm.throughput).abs() < 1e-9);
        assert!((x.p_block - mm.p_block).abs() < 1e-12);
    }

    #[test]
    fn bad_params_are_errors_not_panics() {
        let ctx = TaskContext::new(0, crate::Fidelity::Full);
        for bad in [
            serde_json::json!({"lambda": 0.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 4}),
            serde_json::json!({"lambda": -5.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 4}),
            serde_json::json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 0, "m": 4}),
            serde_json::json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4.5, "m": 4}),
            serde_json::json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4}),
            serde_json::json!({"lambda": "x", "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 4}),
            serde_json::json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 4, "k": 1}),
            serde_json::json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 1e6, "m": 4}),
        ] {
            let e = CreditCtmc.solve(&bad, &ctx);
            assert!(e.is_err(), "{bad} gave {e:?}");
        }
    }
}
