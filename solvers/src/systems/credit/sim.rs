//! Discrete-event simulation of credit-based flow control (SIM-1).
//!
//! Packets are objects carrying their arrival time; Node 1 and Node 2 are FIFO
//! buffers; Node 1's server starts a transmission only while its credit counter
//! is positive, spends one credit when the packet reaches Node 2, and Node 2
//! returns the credit the moment a packet departs (zero credit latency, as the
//! model assumes). Nothing here looks at the CTMC generator.

use super::{model_param_docs, RawModel, METRICS};
use crate::des::{BatchStats, RunLength, Stream, TimeAverage};
use crate::params::parse;
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;
use std::collections::VecDeque;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    lambda: f64,
    mu1: f64,
    mu2: f64,
    n: f64,
    m: f64,
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
}

/// Run lengths in departures from Node 2 (catalogue §1.2: 10^4 warm-up, 10 × 10^5).
const FULL: RunLength = RunLength::new(10_000, 10, 100_000);
const QUICK: RunLength = RunLength::new(5_000, 10, 20_000);

pub(super) struct CreditSim;

/// Per-batch observations.
struct Batch {
    start: f64,
    arrivals: u64,
    lost: u64,
    departures: u64,
    sojourn_sum: f64,
}

impl Batch {
    fn new(t: f64) -> Self {
        Batch {
            start: t,
            arrivals: 0,
            lost: 0,
            departures: 0,
            sojourn_sum: 0.0,
        }
    }
}

#[cfg_attr(not(test), allow(dead_code))]
struct SimResult {
    outcome: Outcome,
    events: u64,
    /// Whole-run packet accounting (warm-up included), read by the conservation test.
    arrived: u64,
    lost: u64,
    departed: u64,
    inside: u64,
}

fn simulate(raw: &Params, ctx: &TaskContext) -> Result<SimResult, SolveError> {
    let c = RawModel {
        lambda: raw.lambda,
        mu1: raw.mu1,
        mu2: raw.mu2,
        n: raw.n,
        m: raw.m,
    }
    .validate()?;
    let run = RunLength::resolve(
        raw.warmup,
        raw.batches,
        raw.batch_len,
        ctx.fidelity,
        FULL,
        QUICK,
    )?;
    // Work bound (issue 11): events per counted departure are about three
    // plus the arrivals blocked per departure, λ / min(λ, μ1, μ2).
    let units = run.warmup as f64 + run.batches as f64 * run.batch_len as f64;
    let slowest = c.lambda.min(c.mu1).min(c.mu2);
    let rates = [("lambda", c.lambda), ("mu1", c.mu1), ("mu2", c.mu2)];
    let dominant = rates
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or("lambda", |r| r.0);
    let budget = crate::params::sim_budget(units, 3.0 + c.lambda / slowest, &rates, dominant)?;

    // Independent streams for the arrival process and each server.
    let mut arr_rng = Stream::new(ctx.seed, 1);
    let mut s1_rng = Stream::new(ctx.seed, 2);
    let mut s2_rng = Stream::new(ctx.seed, 3);
    // Every time is a unit exponential (`Stream::exp1`, a ziggurat) times
    // its mean (version 2; version 1 drew −ln(U)/rate).
    let (mean_gap, mean_s1, mean_s2) = (1.0 / c.lambda, 1.0 / c.mu1, 1.0 / c.mu2);

    let mut node1: VecDeque<f64> = VecDeque::with_capacity(c.n);
    let mut node2: VecDeque<f64> = VecDeque::with_capacity(c.m);
    let mut credits = c.m;
    // Next event times; INFINITY = not scheduled. Three pending events at most,
    // so a fixed event list beats a heap here.
    let mut t_arrival = arr_rng.exp1() * mean_gap;
    let mut t_s1 = f64::INFINITY;
    let mut t_s2 = f64::INFINITY;

    let mut l1 = TimeAverage::new(0.0, 0.0);
    let mut l2 = TimeAverage::new(0.0, 0.0);
    let mut stats = BatchStats::new(&["L1", "L2", "L", "T", "R", "R_sojourn", "P_block"]);
    let mut in_warmup = run.warmup > 0;
    let mut batch = Batch::new(0.0);
    let mut warm_departures = 0u64;
    let mut events = 0u64;
    let (mut arrived, mut lost_total, mut departed) = (0u64, 0u64, 0u64);

    while stats.batches() < run.batches as usize {
        events += 1;
        if events & 0xFFFF == 0 {
            ctx.check_cancel()?;
            if events > budget {
                return Err(crate::params::over_budget(budget));
            }
        }
        let t;
        if t_arrival <= t_s1 && t_arrival <= t_s2 {
            t = t_arrival;
            batch.arrivals += 1;
            arrived += 1;
            if node1.len() < c.n {
                node1.push_back(t);
                l1.set(t, node1.len() as f64);
                if node1.len() == 1 && credits > 0 {
                    t_s1 = t + s1_rng.exp1() * mean_s1;
                }
            } else {
                batch.lost += 1;
                lost_total += 1;
            }
            t_arrival = t + arr_rng.exp1() * mean_gap;
        } else if t_s1 <= t_s2 {
            // Transmission done: the packet moves to Node 2 and uses one credit.
            t = t_s1;
            let pkt = node1
                .pop_front()
                .expect("server 1 busy with an empty queue");
            credits -= 1;
            node2.push_back(pkt);
            l1.set(t, node1.len() as f64);
            l2.set(t, node2.len() as f64);
            if node2.len() == 1 {
                t_s2 = t + s2_rng.exp1() * mean_s2;
            }
            t_s1 = if !node1.is_empty() && credits > 0 {
                t + s1_rng.exp1() * mean_s1
            } else {
                f64::INFINITY
            };
        } else {
            // Departure from Node 2: the freed buffer returns a credit at once.
            t = t_s2;
            let pkt = node2
                .pop_front()
                .expect("server 2 busy with an empty queue");
            credits += 1;
            departed += 1;
            l2.set(t, node2.len() as f64);
            t_s2 = if node2.is_empty() {
                f64::INFINITY
            } else {
                t + s2_rng.exp1() * mean_s2
            };
            if t_s1.is_infinite() && !node1.is_empty() {
                t_s1 = t + s1_rng.exp1() * mean_s1;
            }
            if in_warmup {
                warm_departures += 1;
                if warm_departures >= run.warmup {
                    in_warmup = false;
                    l1.reset(t);
                    l2.reset(t);
                    batch = Batch::new(t);
                }
                continue;
            }
            batch.departures += 1;
            batch.sojourn_sum += t - pkt;
            if batch.departures >= run.batch_len {
                let span = t - batch.start;
                let (a, b) = (l1.mean(t), l2.mean(t));
                let thr = batch.departures as f64 / span;
                let p_block = if batch.arrivals > 0 {
                    batch.lost as f64 / batch.arrivals as f64
                } else {
                    0.0
                };
                stats.push(&[
                    a,
                    b,
                    a + b,
                    thr,
                    (a + b) / thr,
                    batch.sojourn_sum / batch.departures as f64,
                    p_block,
                ]);
                l1.reset(t);
                l2.reset(t);
                batch = Batch::new(t);
            }
        }
    }
    let outcome = stats.into_outcome(Outcome::new());
    debug_assert_eq!(credits + node2.len(), c.m, "credits leaked");
    Ok(SimResult {
        outcome,
        events,
        arrived,
        lost: lost_total,
        departed,
        inside: (node1.len() + node2.len()) as u64,
    })
}

impl Solver for CreditSim {
    fn name(&self) -> &'static str {
        "credit.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_block")]
    }
    fn version(&self) -> u32 {
        // 2: inter-arrival and service times from unit exponentials by a
        // ziggurat, `Stream::exp1`, in place of −ln(U)/rate (new sample paths).
        2
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = model_param_docs();
        params.extend([
            ParamDoc {
                name: "warmup",
                doc: "departures discarded before measuring (full 10^4, quick 5·10^3)",
            },
            ParamDoc {
                name: "batches",
                doc: "number of batches for batch means (>= 2; default 10)",
            },
            ParamDoc {
                name: "batch_len",
                doc: "departures per batch (full 10^5, quick 2·10^4)",
            },
        ]);
        let mut metrics = METRICS.to_vec();
        metrics.push("R_sojourn");
        SolverDoc {
            summary: "Yan ch.4 credit-based flow control: discrete-event simulation of the two nodes and the credit counter, batch means with 95% CIs",
            params,
            metrics,
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: Params = parse(params)?;
        simulate(&p, ctx)?.outcome.checked(self.name())
    }
}

/// Events per simulated departure-batch, exposed for the benchmark.
pub fn bench_events(params: &serde_json::Value, ctx: &TaskContext) -> Result<u64, SolveError> {
    let p: Params = parse(params)?;
    Ok(simulate(&p, ctx)?.events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::systems::credit::{solve_credit_ctmc, Credit};
    use crate::Fidelity;
    use serde_json::json;

    fn run(p: serde_json::Value, seed: u64) -> Outcome {
        CreditSim
            .solve(&p, &TaskContext::new(seed, Fidelity::Quick))
            .unwrap()
    }

    fn within_ci(o: &Outcome, name: &str, exact: f64) {
        let m = o.metrics[name];
        let hw = m.half_width.unwrap();
        // 3 half-widths ≈ 99.9%+ coverage for 9 d.o.f. on a single check.
        assert!(
            (m.value - exact).abs() <= 3.0 * hw + 1e-12,
            "{name}: sim {} ± {hw} vs exact {exact}",
            m.value
        );
    }

    /// With m large enough never to block, Node 1 is an M/M/1/n queue.
    #[test]
    fn node1_matches_mm1k_when_credits_never_run_out() {
        let p = json!({"lambda": 4.0, "mu1": 5.0, "mu2": 100.0, "n": 5, "m": 200});
        let o = run(p, 11);
        let mm = crate::queueing::mm1k::mm1k_metrics(4.0, 5.0, 5);
        within_ci(&o, "L1", mm.l);
        within_ci(&o, "P_block", mm.p_block);
        within_ci(&o, "T", mm.throughput);
    }

    #[test]
    fn agrees_with_the_ctmc_within_ci() {
        for &(n, m) in &[(12, 2), (12, 8), (6, 6)] {
            let p = json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": n, "m": m});
            let o = run(p, 3 + n as u64 * 31 + m as u64);
            let x = solve_credit_ctmc(&Credit {
                lambda: 5.0,
                mu1: 6.0,
                mu2: 8.0,
                n,
                m,
            })
            .unwrap();
            within_ci(&o, "L1", x.l1);
            within_ci(&o, "L2", x.l2);
            within_ci(&o, "T", x.t);
            within_ci(&o, "R", x.r);
            within_ci(&o, "R_sojourn", x.r);
            within_ci(&o, "P_block", x.p_block);
        }
    }

    #[test]
    fn deterministic_for_a_seed() {
        let p = json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 3, "batch_len": 2000});
        assert_eq!(run(p.clone(), 5), run(p.clone(), 5));
        assert_ne!(run(p.clone(), 5), run(p, 6));
    }

    #[test]
    fn conserves_packets() {
        let p: Params = serde_json::from_value(
            json!({"lambda": 7.0, "mu1": 6.0, "mu2": 8.0, "n": 3, "m": 2, "batch_len": 5000}),
        )
        .unwrap();
        let r = simulate(&p, &TaskContext::new(9, Fidelity::Quick)).unwrap();
        assert!(r.lost > 0 && r.departed > 0);
        assert_eq!(r.arrived, r.lost + r.departed + r.inside);
        assert!(r.inside <= 5);
    }

    #[test]
    fn rejects_bad_run_lengths() {
        let ctx = TaskContext::new(1, Fidelity::Quick);
        for bad in [
            json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 3, "batches": 1}),
            json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 3, "batch_len": 0}),
            json!({"lambda": 5.0, "mu1": 6.0, "mu2": 8.0, "n": 4, "m": 3, "warmup": -1}),
        ] {
            assert!(CreditSim.solve(&bad, &ctx).is_err(), "{bad}");
        }
    }
}
