//! GE/GE/1/N (Kouvatsos; Yan §2.4, errata Y-2..Y-4): GE-type batch arrivals,
//! GE service with bulk departures, capacity N including the customer in
//! service, partial batch acceptance, the canonical empty-system semantics of
//! catalogue §1.3. docs/models/gege1n.md.
//!
//! The engine (`model`, `me`, `ctmc`, `sim`) handles any number of
//! service-rate regions; GE/GE/1/N is its one-region case and the Yan ch.5
//! threshold queues (`systems::threshold`) use it with several regions.

pub mod ctmc;
pub mod me;
pub mod model;
pub mod sim;

pub use model::{GeQueue, QueueMetrics};

use crate::des::RunLength;
use crate::params::parse;
use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

pub fn register(r: &mut Registry) {
    r.add(GeGe1nMe);
    r.add(GeGe1nCtmc);
    r.add(GeGe1nSim);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    lambda: f64,
    mu: f64,
    ca2: f64,
    cs2: f64,
    #[serde(rename = "N")]
    n: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SimParams {
    lambda: f64,
    mu: f64,
    ca2: f64,
    cs2: f64,
    #[serde(rename = "N")]
    n: f64,
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
}

fn base_params() -> Vec<ParamDoc> {
    vec![
        ParamDoc {
            name: "lambda",
            doc: "mean arrival rate (customers per unit time, > 0)",
        },
        ParamDoc {
            name: "mu",
            doc: "mean service rate (> 0)",
        },
        ParamDoc {
            name: "ca2",
            doc: "SCV of inter-arrival times (>= 1; GE batches)",
        },
        ParamDoc {
            name: "cs2",
            doc: "SCV of service times (>= 1; GE bulk departures)",
        },
        ParamDoc {
            name: "N",
            doc: "capacity including the customer in service (integer >= 1)",
        },
    ]
}

const METRICS: [&str; 5] = ["L", "U", "P_block", "P_full", "throughput"];

/// One-region metrics: U1 would repeat U.
fn single_region(m: QueueMetrics) -> Outcome {
    let mut o = m.into_outcome();
    o.metrics.remove("U1");
    o
}

pub struct GeGe1nMe;
impl Solver for GeGe1nMe {
    fn name(&self) -> &'static str {
        "gege1n.me"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::fraction("U"),
            MetricFact::fraction("P_block"),
            MetricFact::fraction("P_full"),
        ]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "GE/GE/1/N maximum-entropy closed form (x, g from GE/GE/1, y from flow balance); exact under the canonical semantics",
            params: base_params(),
            metrics: METRICS.to_vec(),
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: Params = parse(params)?;
        let q = GeQueue::single(p.lambda, p.mu, p.ca2, p.cs2, p.n)?;
        let s = me::solve(&q);
        let thr = q.lambda * (1.0 - s.p_block);
        single_region(QueueMetrics::from_distribution(&q, &s.p, s.p_block, thr))
            .checked(self.name())
    }
}

pub struct GeGe1nCtmc;
impl Solver for GeGe1nCtmc {
    fn name(&self) -> &'static str {
        "gege1n.ctmc"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::fraction("U"),
            MetricFact::fraction("P_block"),
            MetricFact::fraction("P_full"),
        ]
    }
    fn version(&self) -> u32 {
        1
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "GE/GE/1/N exact CTMC on {0..N} built from the transition rules, solved by GTH (N <= 600: the chain is dense)",
            params: base_params(),
            metrics: METRICS.to_vec(),
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: Params = parse(params)?;
        let q = GeQueue::single(p.lambda, p.mu, p.ca2, p.cs2, p.n)?;
        let s = ctmc::solve_for(&q, "N")?;
        single_region(QueueMetrics::from_distribution(
            &q,
            &s.p,
            s.p_block,
            s.throughput,
        ))
        .checked(self.name())
    }
}

pub struct GeGe1nSim;
impl Solver for GeGe1nSim {
    fn name(&self) -> &'static str {
        "gege1n.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::fraction("U"),
            MetricFact::fraction("P_block"),
            MetricFact::fraction("P_full"),
        ]
    }
    fn version(&self) -> u32 {
        // 2: exponentials and geometric batch sizes by the table logarithm
        // `FastLn` (same uniforms; times differ in the last bits).
        // 3: every draw (batch gap, batch size, service time) from unit
        // exponentials by a ziggurat, `Stream::exp1` (new sample paths).
        3
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = base_params();
        params.extend(run_length_docs());
        SolverDoc {
            summary: "GE/GE/1/N customer-level DES (batch arrivals, bulk departures); batch means, 95% CI",
            params,
            metrics: vec!["L", "U", "P_block", "P_full", "throughput", "W"],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: SimParams = parse(params)?;
        let q = GeQueue::single(p.lambda, p.mu, p.ca2, p.cs2, p.n)?;
        let run = RunLength::resolve(
            p.warmup,
            p.batches,
            p.batch_len,
            ctx.fidelity,
            sim::FULL,
            sim::QUICK,
        )?;
        let mut o = sim::simulate(&q, run, ctx)?.outcome;
        o.metrics.remove("U1");
        o.checked(self.name())
    }
}

/// Documentation of the run-length parameters shared by the GE-queue simulators.
pub fn run_length_docs() -> Vec<ParamDoc> {
    vec![
        ParamDoc {
            name: "warmup",
            doc: "arriving customers discarded before measuring (default 1e5 full, 1e4 quick)",
        },
        ParamDoc {
            name: "batches",
            doc: "number of batches for batch means (>= 2, default 10)",
        },
        ParamDoc {
            name: "batch_len",
            doc: "arriving customers per batch (default 1e6 full, 1e5 quick)",
        },
    ]
}

#[cfg(test)]
mod tests;
