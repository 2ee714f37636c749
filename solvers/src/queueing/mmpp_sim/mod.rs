//! Discrete-event simulators of the MMPP queues: `mmpp_m1.sim`,
//! `mmpp_m1k.sim` and `mmpp_g1.sim`, the simulation twins of the analytic
//! solvers `mmpp_m1.mg`, `mmpp_m1k.ctmc` and `mmpp_g1.mean_wait`.
//!
//! They simulate customers (their departure times, in arrival order), one
//! server and an MMPP(2) source (`Mmpp2Clock`: the modulating chain's phases
//! and the arrivals they drive; an IPP, one phase silent, as its
//! hyperexponential renewal process, `traffic::ipp::IppRenewal`); they never build
//! the generator matrix of the queue. Statistics: batch means over arriving
//! customers after warm-up deletion, 95% Student-t CIs widened by the lag-1
//! correlation of the batch means (see `docs/models/queueing-sim.md`).

use crate::des::{RunLength, Stream};
use crate::params::{parse, positive};
use crate::traffic::ipp;
use crate::traffic::sources::Mmpp2Clock;
use crate::{Kind, Outcome, ParamDoc, Registry, SolveError, Solver, SolverDoc, TaskContext};
use engine::{batch_outcome, run_fifo, Plan, RunResult, ServiceComponent, ServiceLaw};
use serde::Deserialize;

pub mod engine;
#[cfg(test)]
mod tests;

pub fn register(r: &mut Registry) {
    r.add(MmppM1Sim);
    r.add(MmppM1kSim);
    r.add(MmppG1Sim);
}

const STREAM_ARRIVALS: u64 = 1;
const STREAM_SERVICE: u64 = 2;
/// The version of all three simulators. 2: exponential draws by
/// `FastLn::exp` (table logarithm, times the mean) instead of libm's ln
/// divided by the rate: the same uniforms, times that differ in the last
/// bits. 3: arrivals on an intensity clock (`Mmpp2Clock`: no draw thrown
/// away at a phase change, so another random stream) and departures in
/// Lindley form (`engine::run_fifo`: the same times, integrals summed in
/// another order); docs/models/queueing-sim.md. 4: an IPP source (one
/// phase silent) as its hyperexponential renewal process (`traffic/ipp.rs`: one
/// uniform per arrival, no phase changes stepped; another random stream).
/// 5: service times and the IPP's gaps from unit exponentials by
/// `rand_distr`'s ziggurat (`Stream::exp1`: one 64-bit word in about 99 %
/// of draws, no logarithm; the IPP's branch by a uniform of its own;
/// another random stream).
const VERSION: u32 = 5;

/// Base run lengths (arriving customers); the batch length grows with the
/// modulation time scale, see [`run_plan`].
const FULL: RunLength = RunLength::new(100_000, 10, 1_000_000);
const QUICK: RunLength = RunLength::new(10_000, 10, 100_000);
/// Default batch length in modulation cycles (Full, Quick).
const CYCLES_PER_BATCH: (f64, f64) = (1000.0, 100.0);
/// Default warm-up in modulation cycles (Full, Quick).
const CYCLES_WARMUP: (f64, f64) = (50.0, 10.0);
/// Upper bounds of the scaled defaults (Full, Quick), to keep a default run finite.
const MAX_BATCH_LEN: (f64, f64) = (5.0e7, 5.0e6);

/// The MMPP(2) parameters of Wu eq 2.1 as validated numbers.
#[derive(Debug, Clone, Copy)]
struct Mmpp {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
}

impl Mmpp {
    fn validated(phi1: f64, phi2: f64, lambda1: f64, lambda2: f64) -> Result<Self, SolveError> {
        // The same rules as the analytic twins.
        crate::traffic::mmpp::Mmpp2::new(phi1, phi2, lambda1, lambda2)?;
        Ok(Mmpp {
            phi1,
            phi2,
            lambda1,
            lambda2,
        })
    }

    fn mean_rate(&self) -> f64 {
        (self.lambda1 * self.phi2 + self.lambda2 * self.phi1) / (self.phi1 + self.phi2)
    }

    /// Expected arrivals during one cycle of the modulating chain (1/φ1 + 1/φ2).
    fn arrivals_per_cycle(&self) -> f64 {
        self.mean_rate() * (1.0 / self.phi1 + 1.0 / self.phi2)
    }

    /// An IPP (one phase silent) as (λ, rate of leaving the active phase,
    /// rate of leaving the silent one); None for an MMPP with two active phases.
    fn ipp(&self) -> Option<(f64, f64, f64)> {
        if self.lambda2 == 0.0 {
            Some((self.lambda1, self.phi1, self.phi2))
        } else if self.lambda1 == 0.0 {
            Some((self.lambda2, self.phi2, self.phi1))
        } else {
            None
        }
    }

    fn source(&self, ctx: &TaskContext) -> Result<Mmpp2Clock, SolveError> {
        Mmpp2Clock::new(
            self.phi1,
            self.phi2,
            self.lambda1,
            self.lambda2,
            Stream::new(ctx.seed, STREAM_ARRIVALS),
        )
    }
}

/// Simulation controls shared by the three solvers (all optional).
#[derive(Debug, Clone, Copy)]
struct Controls {
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
}

/// Default run length: the base of the fidelity, stretched so that a batch
/// spans many modulation cycles (batch means of a slowly modulated queue are
/// otherwise correlated and the CI too narrow).
///
/// `service` is the service's parameter name as the user wrote it (`mu` or
/// `service`) and its mean time.
fn run_plan(
    mmpp: &Mmpp,
    (service_name, service_mean): (&str, f64),
    c: &Controls,
    capacity: Option<usize>,
    ctx: &TaskContext,
) -> Result<Plan, SolveError> {
    let apc = mmpp.arrivals_per_cycle();
    let scaled = |base: RunLength, cycles: f64, warm: f64, max: f64| {
        RunLength::new(
            base.warmup.max((warm * apc).min(max).ceil() as u64),
            base.batches,
            base.batch_len.max((cycles * apc).min(max).ceil() as u64),
        )
    };
    let full = scaled(FULL, CYCLES_PER_BATCH.0, CYCLES_WARMUP.0, MAX_BATCH_LEN.0);
    let quick = scaled(QUICK, CYCLES_PER_BATCH.1, CYCLES_WARMUP.1, MAX_BATCH_LEN.1);
    let r = RunLength::resolve(c.warmup, c.batches, c.batch_len, ctx.fidelity, full, quick)?;
    // Work bound (issue 11): an arrival and a departure per counted customer,
    // plus about 2 / (arrivals per cycle) modulation switches between arrivals.
    let units = r.warmup as f64 + r.batches as f64 * r.batch_len as f64;
    let per_unit = 2.0 + 2.0 / apc;
    let dominant = if per_unit < 1e3 {
        "batch_len"
    } else if mmpp.phi1 >= mmpp.phi2 {
        "phi1"
    } else {
        "phi2"
    };
    let rates = [
        ("phi1", mmpp.phi1),
        ("phi2", mmpp.phi2),
        ("lambda1", mmpp.lambda1),
        ("lambda2", mmpp.lambda2),
    ];
    let budget = crate::params::sim_budget(units, per_unit, &rates, dominant)?;
    // Simulated time: the counted customers at the mean rate.
    let horizon = units / mmpp.mean_rate();
    let mut all = rates.to_vec();
    all.push((service_name, 1.0 / service_mean));
    crate::params::sim_time_resolution(horizon, &all)?;
    Ok(Plan {
        warmup: r.warmup,
        batches: r.batches,
        batch_len: r.batch_len,
        capacity,
        budget,
    })
}

fn per_batch(
    res: &RunResult,
    what: &str,
    f: impl Fn(&engine::BatchAcc) -> (f64, u64),
) -> Result<Vec<f64>, SolveError> {
    res.batches
        .iter()
        .map(|b| {
            let (sum, n) = f(b);
            if n == 0 {
                Err(SolveError::param(
                    "batch_len",
                    format!("too short: a batch has no {what}"),
                ))
            } else {
                Ok(sum / n as f64)
            }
        })
        .collect()
}

fn time_avg(res: &RunResult, f: impl Fn(&engine::BatchAcc) -> f64) -> Vec<f64> {
    res.batches
        .iter()
        .map(|b| {
            if b.duration > 0.0 {
                f(b) / b.duration
            } else {
                0.0
            }
        })
        .collect()
}

const CONTROL_DOCS: [ParamDoc; 3] = [
    ParamDoc {
        name: "warmup",
        doc: "arriving customers discarded before the first batch (default: Full 1e5, Quick 1e4, at least 50 resp. 10 modulation cycles)",
    },
    ParamDoc {
        name: "batches",
        doc: "number of batches (integer >= 2; default 10)",
    },
    ParamDoc {
        name: "batch_len",
        doc: "arriving customers per batch (default: Full 1e6, Quick 1e5, at least 1000 resp. 100 modulation cycles of λ̄(1/φ1+1/φ2) arrivals, capped at 5e7 resp. 5e6)",
    },
];

fn mmpp_docs() -> Vec<ParamDoc> {
    vec![
        ParamDoc {
            name: "phi1",
            doc: "rate of leaving MMPP phase 1 (> 0), Wu eq 2.1",
        },
        ParamDoc {
            name: "phi2",
            doc: "rate of leaving MMPP phase 2 (> 0)",
        },
        ParamDoc {
            name: "lambda1",
            doc: "arrival rate in phase 1 (>= 0)",
        },
        ParamDoc {
            name: "lambda2",
            doc: "arrival rate in phase 2 (>= 0; not both 0)",
        },
    ]
}

// ---------------------------------------------------------------- MMPP/M/1

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct M1Params {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    mu: f64,
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
}

macro_rules! controls {
    ($($t:ty),*) => {$(
        impl $t {
            fn controls(&self) -> Controls {
                Controls {
                    warmup: self.warmup,
                    batches: self.batches,
                    batch_len: self.batch_len,
                }
            }
        }
    )*};
}
controls!(M1Params, M1kParams, G1Params);

/// MMPP/M/1 simulator.
pub struct MmppM1Sim;

impl Solver for MmppM1Sim {
    fn name(&self) -> &'static str {
        "mmpp_m1.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_empty")]
    }
    fn version(&self) -> u32 {
        VERSION
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = mmpp_docs();
        params.push(ParamDoc {
            name: "mu",
            doc: "exponential service rate (> 0); requires ρ = λ̄/μ < 1",
        });
        params.extend(CONTROL_DOCS);
        SolverDoc {
            summary: "MMPP(2)/M/1 FIFO queue, discrete-event simulation with batch-means CIs (batches in arriving customers). L = time-average number in system, W = mean sojourn time, P_empty = fraction of time empty, batch_lag1 = diagnostic largest lag-1 correlation of the batch means",
            params,
            metrics: vec!["L", "W", "P_empty", "batch_lag1"],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: M1Params = parse(params)?;
        let mmpp = Mmpp::validated(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let mu = crate::params::sim_rate("mu", positive("mu", p.mu)?)?;
        let rho = mmpp.mean_rate() / mu;
        if rho >= 1.0 {
            return Err(SolveError::Unstable(format!(
                "ρ = λ̄/μ = {rho} >= 1: the MMPP/M/1 queue has no steady state"
            )));
        }
        let plan = run_plan(&mmpp, ("mu", 1.0 / mu), &p.controls(), None, ctx)?;
        let res = simulate(&mmpp, &ServiceLaw::exponential(mu), plan, ctx)?;
        let l = time_avg(&res, |b| b.area_n);
        let w = per_batch(&res, "departing customer", |b| {
            (b.sojourn.sum, b.sojourn.count)
        })?;
        let p0 = time_avg(&res, |b| b.empty_time);
        batch_outcome(&[("L", l), ("W", w), ("P_empty", p0)]).checked(self.name())
    }
}

fn simulate(
    mmpp: &Mmpp,
    service: &ServiceLaw,
    plan: Plan,
    ctx: &TaskContext,
) -> Result<RunResult, SolveError> {
    let mut svc = Stream::new(ctx.seed, STREAM_SERVICE);
    match mmpp.ipp() {
        Some((lambda, alpha, beta)) => {
            let rng = Stream::new(ctx.seed, STREAM_ARRIVALS);
            let mut src = ipp::IppRenewal::new(lambda, alpha, beta, rng);
            run_fifo(&mut src, service, &mut svc, plan, ctx)
        }
        None => run_fifo(&mut mmpp.source(ctx)?, service, &mut svc, plan, ctx),
    }
}

// -------------------------------------------------------------- MMPP/M/1/K

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct M1kParams {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    mu: f64,
    #[serde(rename = "K")]
    k: f64,
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
}

/// MMPP/M/1/K simulator (K counts the customer in service).
pub struct MmppM1kSim;

impl Solver for MmppM1kSim {
    fn name(&self) -> &'static str {
        "mmpp_m1k.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("P_block")]
    }
    fn version(&self) -> u32 {
        VERSION
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = mmpp_docs();
        params.push(ParamDoc {
            name: "mu",
            doc: "exponential service rate (> 0); any load is allowed",
        });
        params.push(ParamDoc {
            name: "K",
            doc: "capacity including the customer in service (integer >= 1); arrivals that find K customers are lost",
        });
        params.extend(CONTROL_DOCS);
        SolverDoc {
            summary: "MMPP(2)/M/1/K FIFO queue with loss, discrete-event simulation with batch-means CIs (batches in arriving customers). L = time-average number in system, P_block = fraction of arriving customers lost, throughput = accepted customers per unit time, W = mean sojourn time of accepted customers, batch_lag1 = diagnostic largest lag-1 correlation of the batch means",
            params,
            metrics: vec!["L", "P_block", "throughput", "W", "batch_lag1"],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: M1kParams = parse(params)?;
        let mmpp = Mmpp::validated(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let mu = crate::params::sim_rate("mu", positive("mu", p.mu)?)?;
        let k = crate::params::capacity("K", p.k, 1)?;
        let plan = run_plan(&mmpp, ("mu", 1.0 / mu), &p.controls(), Some(k), ctx)?;
        let res = simulate(&mmpp, &ServiceLaw::exponential(mu), plan, ctx)?;
        let l = time_avg(&res, |b| b.area_n);
        let pb: Vec<f64> = res
            .batches
            .iter()
            .map(|b| b.lost as f64 / b.arrived as f64)
            .collect();
        let x = time_avg(&res, |b| (b.arrived - b.lost) as f64);
        let w = per_batch(&res, "accepted customer", |b| {
            (b.sojourn.sum, b.sojourn.count)
        })?;
        batch_outcome(&[("L", l), ("P_block", pb), ("throughput", x), ("W", w)])
            .checked(self.name())
    }
}

// ---------------------------------------------------------------- MMPP/G/1

/// Validates the service specification of `mmpp_g1.*`.
pub fn parse_service(value: &serde_json::Value) -> Result<ServiceLaw, SolveError> {
    // One parser and one set of rules for the analytic twin and the simulator.
    let law = crate::queueing::mmpp::parse_service(value)?;
    Ok(ServiceLaw::mixture(
        law.parts
            .iter()
            .map(|p| ServiceComponent {
                weight: p.weight,
                shift: p.shift,
                rate: p.rate,
            })
            .collect(),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct G1Params {
    phi1: f64,
    phi2: f64,
    lambda1: f64,
    lambda2: f64,
    service: serde_json::Value,
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
}

/// MMPP/G/1 simulator with shifted-exponential (mixture) service times.
pub struct MmppG1Sim;

impl Solver for MmppG1Sim {
    fn name(&self) -> &'static str {
        "mmpp_g1.sim"
    }
    fn metric_facts(&self) -> Vec<crate::MetricFact> {
        use crate::MetricFact;
        vec![MetricFact::fraction("rho")]
    }
    fn version(&self) -> u32 {
        VERSION
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        let mut params = mmpp_docs();
        params.push(ParamDoc {
            name: "service",
            doc: "service time law: {shift, rate} = shift + Exp(rate) (either may be absent, not both), or {mixture: [{weight, shift, rate}, ...]} with weights summing to 1; requires ρ = λ̄E[S] < 1",
        });
        params.extend(CONTROL_DOCS);
        SolverDoc {
            summary: "MMPP(2)/G/1 FIFO queue, discrete-event simulation with batch-means CIs (batches in arriving customers). W = mean wait in queue of arriving customers, Wv = time-average virtual waiting time (unfinished work), rho = fraction of time busy, batch_lag1 = diagnostic largest lag-1 correlation of the batch means",
            params,
            metrics: vec!["W", "Wv", "rho", "batch_lag1"],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: G1Params = parse(params)?;
        let mmpp = Mmpp::validated(p.phi1, p.phi2, p.lambda1, p.lambda2)?;
        let service = parse_service(&p.service)?;
        // Service times must keep simulated times finite, as rates do.
        crate::params::sim_rate("service", 1.0 / service.mean())?;
        let rho = mmpp.mean_rate() * service.mean();
        if rho >= 1.0 {
            return Err(SolveError::Unstable(format!(
                "ρ = λ̄·E[S] = {rho} >= 1: the MMPP/G/1 queue has no steady state"
            )));
        }
        let plan = run_plan(&mmpp, ("service", service.mean()), &p.controls(), None, ctx)?;
        let res = simulate(&mmpp, &service, plan, ctx)?;
        let w = per_batch(&res, "customer entering service", |b| {
            (b.wait.sum, b.wait.count)
        })?;
        let wv = time_avg(&res, |b| b.area_work);
        let busy = time_avg(&res, |b| b.duration - b.empty_time);
        batch_outcome(&[("W", w), ("Wv", wv), ("rho", busy)]).checked(self.name())
    }
}

/// Events simulated for a parameter set (arrivals, departures, phase changes):
/// what the benchmark divides by the wall time.
pub fn count_events(
    solver: &str,
    params: &serde_json::Value,
    ctx: &TaskContext,
) -> Result<u64, SolveError> {
    let (mmpp, service, cap, controls) = match solver {
        "mmpp_m1.sim" => {
            let p: M1Params = parse(params)?;
            (
                Mmpp::validated(p.phi1, p.phi2, p.lambda1, p.lambda2)?,
                ServiceLaw::exponential(crate::params::sim_rate("mu", positive("mu", p.mu)?)?),
                None,
                p.controls(),
            )
        }
        "mmpp_m1k.sim" => {
            let p: M1kParams = parse(params)?;
            (
                Mmpp::validated(p.phi1, p.phi2, p.lambda1, p.lambda2)?,
                ServiceLaw::exponential(crate::params::sim_rate("mu", positive("mu", p.mu)?)?),
                Some(crate::params::capacity("K", p.k, 1)?),
                p.controls(),
            )
        }
        "mmpp_g1.sim" => {
            let p: G1Params = parse(params)?;
            (
                Mmpp::validated(p.phi1, p.phi2, p.lambda1, p.lambda2)?,
                parse_service(&p.service)?,
                None,
                p.controls(),
            )
        }
        other => return Err(SolveError::BadParams(format!("unknown simulator {other}"))),
    };
    let name = if solver == "mmpp_g1.sim" {
        "service"
    } else {
        "mu"
    };
    let plan = run_plan(&mmpp, (name, service.mean()), &controls, cap, ctx)?;
    Ok(simulate(&mmpp, &service, plan, ctx)?.events)
}
