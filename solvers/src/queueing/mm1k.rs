//! M/M/1/K in closed form (`mm1k.exact`): the reference for CTMC and simulator tests.

use crate::params::parse;
use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

pub fn register(r: &mut Registry) {
    r.add(Mm1kExact);
}

/// Stationary distribution of M/M/1/K (K counts the customer in service).
pub fn mm1k_distribution(lambda: f64, mu: f64, k: usize) -> Vec<f64> {
    let rho = lambda / mu;
    // Relative weights ρ^i, normalised; stable for ρ = 1 and for large ρ (scale by ρ^K).
    let w: Vec<f64> = if rho <= 1.0 {
        (0..=k).map(|i| rho.powi(i as i32)).collect()
    } else {
        (0..=k).map(|i| (1.0 / rho).powi((k - i) as i32)).collect()
    };
    let total: f64 = w.iter().sum();
    w.into_iter().map(|x| x / total).collect()
}

/// Closed-form metrics of M/M/1/K.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mm1kMetrics {
    pub l: f64,
    pub p_block: f64,
    pub throughput: f64,
    pub w: f64,
    pub u: f64,
}

pub fn mm1k_metrics(lambda: f64, mu: f64, k: usize) -> Mm1kMetrics {
    let p = mm1k_distribution(lambda, mu, k);
    let l: f64 = p.iter().enumerate().map(|(i, x)| i as f64 * x).sum();
    let p_block = p[k];
    let throughput = lambda * (1.0 - p_block);
    Mm1kMetrics {
        l,
        p_block,
        throughput,
        w: l / throughput,
        u: 1.0 - p[0],
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    lambda: f64,
    mu: f64,
    #[serde(rename = "K")]
    k: f64,
}

struct Mm1kExact;

impl Solver for Mm1kExact {
    fn name(&self) -> &'static str {
        "mm1k.exact"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_block"), MetricFact::fraction("U")]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "M/M/1/K queue in closed form; K counts the customer in service",
            params: vec![
                ParamDoc {
                    name: "lambda",
                    doc: "arrival rate (> 0)",
                },
                ParamDoc {
                    name: "mu",
                    doc: "service rate (> 0)",
                },
                ParamDoc {
                    name: "K",
                    doc: "capacity including the customer in service (integer >= 1)",
                },
            ],
            metrics: vec!["L", "P_block", "throughput", "W", "U"],
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: Params = parse(params)?;
        let lambda = crate::params::model_value("lambda", p.lambda)?;
        let mu = crate::params::model_value("mu", p.mu)?;
        let k = crate::params::capacity("K", p.k, 1)?;
        let m = mm1k_metrics(lambda, mu, k);
        Outcome::new()
            .with("L", m.l)
            .with("P_block", m.p_block)
            .with("throughput", m.throughput)
            .with("W", m.w)
            .with("U", m.u)
            .checked(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_values() {
        // ρ = 0.5, K = 2: p = (4, 2, 1)/7.
        let m = mm1k_metrics(1.0, 2.0, 2);
        assert!((m.p_block - 1.0 / 7.0).abs() < 1e-15);
        assert!((m.l - 4.0 / 7.0).abs() < 1e-15);
        assert!((m.u - 3.0 / 7.0).abs() < 1e-15);
        // Little: W = L / throughput.
        assert!((m.w - (4.0 / 7.0) / (6.0 / 7.0)).abs() < 1e-15);
    }

    #[test]
    fn refuses_bad_parameters() {
        let ctx = TaskContext::new(0, crate::Fidelity::Full);
        for bad in [
            serde_json::json!({"lambda": -1.0, "mu": 1.0, "K": 3}),
            serde_json::json!({"lambda": 1.0, "mu": 0.0, "K": 3}),
            serde_json::json!({"lambda": 1.0, "mu": 1.0, "K": 0}),
            serde_json::json!({"lambda": 1.0, "mu": 1.0, "K": 2.5}),
            serde_json::json!({"lambda": 1.0, "mu": 1.0, "K": 2, "extra": 1}),
        ] {
            assert!(Mm1kExact.solve(&bad, &ctx).is_err(), "{bad}");
        }
    }
}
