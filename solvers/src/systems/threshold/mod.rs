//! Yan ch.5: entry threshold (ET) and arrival job threshold (AJT) queues
//! (docs/models/threshold.md). A GE/GE/1/K queue whose service rate is set by
//! the number in system n: region k holds T_{k-1} < n <= T_k and is served
//! at mus[k]. ET is two regions, AJT three, the "without threshold" baseline
//! one. The engine is `queueing::gege1n`; this module adds the threshold
//! interface and the thesis's printed formulas.

pub mod printed;

use crate::des::RunLength;
use crate::params::parse;
use crate::queueing::gege1n::{ctmc, me, run_length_docs, sim, GeQueue, QueueMetrics};
use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

pub fn register(r: &mut Registry) {
    r.add(ThresholdMe);
    r.add(ThresholdCtmc);
    r.add(ThresholdSim);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeParams {
    lambda: f64,
    ca2: f64,
    cs2: f64,
    mus: Vec<f64>,
    thresholds: Vec<f64>,
    #[serde(rename = "K")]
    k: f64,
    #[serde(default)]
    variant: Variant,
}

#[derive(Deserialize, Default, Clone, Copy, PartialEq, Debug)]
#[serde(rename_all = "kebab-case")]
enum Variant {
    #[default]
    Derived,
    AsPrinted,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CtmcParams {
    lambda: f64,
    ca2: f64,
    cs2: f64,
    mus: Vec<f64>,
    thresholds: Vec<f64>,
    #[serde(rename = "K")]
    k: f64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SimParams {
    lambda: f64,
    ca2: f64,
    cs2: f64,
    mus: Vec<f64>,
    thresholds: Vec<f64>,
    #[serde(rename = "K")]
    k: f64,
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
            name: "ca2",
            doc: "SCV of inter-arrival times (>= 1): GE batches, τ_a = 2/(ca2+1)",
        },
        ParamDoc {
            name: "cs2",
            doc: "SCV of service times (>= 1): GE service, τ_s = 2/(cs2+1)",
        },
        ParamDoc {
            name: "mus",
            doc: "service rate per region (list, each > 0, at most 16)",
        },
        ParamDoc {
            name: "thresholds",
            doc: "strictly ascending integers >= 1, one fewer than mus; region k holds T_{k-1} < n <= T_k",
        },
        ParamDoc {
            name: "K",
            doc: "capacity including the customer in service (integer > last threshold)",
        },
    ]
}

/// U_k exists for each region k present (at most 16).
const METRICS: [&str; 21] = [
    "L",
    "U",
    "P_block",
    "P_full",
    "throughput",
    "U1",
    "U2",
    "U3",
    "U4",
    "U5",
    "U6",
    "U7",
    "U8",
    "U9",
    "U10",
    "U11",
    "U12",
    "U13",
    "U14",
    "U15",
    "U16",
];

pub struct ThresholdMe;
impl Solver for ThresholdMe {
    fn name(&self) -> &'static str {
        "threshold.me"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::fraction("U"),
            MetricFact::fraction("U<k>"),
            MetricFact::fraction("P_block"),
            MetricFact::fraction("P_full"),
        ]
    }
    fn version(&self) -> u32 {
        2
    }
    fn kind(&self) -> Kind {
        Kind::Analytic
    }
    fn doc(&self) -> SolverDoc {
        let mut params = base_params();
        params.push(ParamDoc {
            name: "variant",
            doc: "derived (default): region-wise ME closed form, exact; as-printed: Yan (2.8)-(2.11) for 1 region, \
                  (5.9)-(5.22) for 2 regions; an error where they break, saturated for rho1 >= 1",
        });
        SolverDoc {
            summary: "Yan ch.5 ET/AJT threshold queue: maximum-entropy closed form, one multiplier per region, y from flow balance",
            params,
            metrics: METRICS.to_vec(),
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: MeParams = parse(params)?;
        let q = GeQueue::new(p.lambda, p.ca2, p.cs2, &p.mus, &p.thresholds, p.k)?;
        match p.variant {
            Variant::Derived => {
                let s = me::solve(&q);
                let thr = q.lambda * (1.0 - s.p_block);
                QueueMetrics::from_distribution(&q, &s.p, s.p_block, thr)
                    .into_outcome()
                    .checked(self.name())
            }
            // Where the printed formulas leave their domain the model is
            // undefined there: a finding the report shows, not a failed task.
            Variant::AsPrinted => match printed::solve(&q) {
                Err(SolveError::Numerical(why)) => Ok(Outcome::undefined(why)),
                Err(e) => Err(e),
                Ok(None) => Ok(Outcome::undefined(format!(
                    "as-printed ME formulas are stated for ρ1 = λ/μ1 < 1; here ρ1 = {}",
                    q.lambda / q.mus[0]
                ))),
                Ok(Some(pr)) => {
                    let pb = me::blocking(&q, &pr.p);
                    let mut o =
                        QueueMetrics::from_distribution(&q, &pr.p, pb, q.lambda * (1.0 - pb))
                            .into_outcome()
                            .with("P0_printed", pr.p0_printed);
                    for (name, v) in pr.named {
                        o = o.with(name, v);
                    }
                    o.checked(self.name())
                }
            },
        }
    }
}

pub struct ThresholdCtmc;
impl Solver for ThresholdCtmc {
    fn name(&self) -> &'static str {
        "threshold.ctmc"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::fraction("U"),
            MetricFact::fraction("U<k>"),
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
            summary: "Yan ch.5 threshold queue: exact CTMC on {0..K} from the transition rules, GTH (K <= 600: the chain is dense)",
            params: base_params(),
            metrics: METRICS.to_vec(),
        }
    }
    fn solve(&self, params: &serde_json::Value, _ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: CtmcParams = parse(params)?;
        let q = GeQueue::new(p.lambda, p.ca2, p.cs2, &p.mus, &p.thresholds, p.k)?;
        let s = ctmc::solve(&q)?;
        QueueMetrics::from_distribution(&q, &s.p, s.p_block, s.throughput)
            .into_outcome()
            .checked(self.name())
    }
}

pub struct ThresholdSim;
impl Solver for ThresholdSim {
    fn name(&self) -> &'static str {
        "threshold.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![
            MetricFact::fraction("U"),
            MetricFact::fraction("U<k>"),
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
        let mut metrics = METRICS.to_vec();
        metrics.push("W");
        SolverDoc {
            summary: "Yan ch.5 threshold queue: customer-level DES (GE batches, partial acceptance, GE bulk service, \
                      rate switching with residual re-drawn); batch means over arriving customers, 95% CI",
            params,
            metrics,
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: SimParams = parse(params)?;
        let q = GeQueue::new(p.lambda, p.ca2, p.cs2, &p.mus, &p.thresholds, p.k)?;
        let run = RunLength::resolve(
            p.warmup,
            p.batches,
            p.batch_len,
            ctx.fidelity,
            sim::FULL,
            sim::QUICK,
        )?;
        sim::simulate(&q, run, ctx)?.outcome.checked(self.name())
    }
}

#[cfg(test)]
mod tests;
