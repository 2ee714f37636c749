//! `torus.sim`: the flit engine on the k-ary 2-cube (Wu ch.3 validation
//! simulator, catalogue §6 SIM-4). Parameters are validated here into an
//! engine `Scenario`; the engine's counters become the outcome.

use super::{Rings, MAX_NODES};
use crate::des::rng::splitmix64;
use crate::des::Stream;
use crate::des::{ci95, RunLength};
use crate::engines::flit::torus::{Dor, Duato, KaryNcube};
use crate::engines::flit::{
    run, Counters, Destinations, Finish, HotSpot, Injection, Scenario, Source, Topology, Uniform,
    UniformLatency,
};
use crate::params::{count, parse, positive};
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};
use serde::Deserialize;

/// Wu §3.4: 8,000 warm-up messages, 10 batches of 8,000 (delivered messages).
const FULL: RunLength = RunLength::new(8_000, 10, 8_000);
const QUICK: RunLength = RunLength::new(500, 10, 800);
/// Router-cycles one task may cost (≈ a few minutes on one core).
const MAX_ROUTER_CYCLES: f64 = 2e11;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    k: f64,
    omega: f64,
    #[serde(rename = "V")]
    v: f64,
    buffer: Option<f64>,
    routing: Option<RoutingKind>,
    source: Option<SourceKind>,
    phi1: Option<f64>,
    phi2: Option<f64>,
    lambda1: Option<f64>,
    lambda2: Option<f64>,
    rate: Option<f64>,
    delta: Option<f64>,
    hotspot: Option<f64>,
    injection: Option<InjKind>,
    warmup: Option<f64>,
    batches: Option<f64>,
    batch_len: Option<f64>,
    replications: Option<f64>,
    replicate_above: Option<f64>,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum RoutingKind {
    Duato,
    Dor,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum SourceKind {
    Mmpp,
    Bernoulli,
    Poisson,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum InjKind {
    PerVc,
    Shared,
}

/// A validated simulation task.
#[derive(Debug, Clone)]
pub(crate) struct SimTask {
    k: u32,
    duato: bool,
    sc: Scenario,
    /// Hot-spot destinations (δ > 0), else uniform.
    hotspot: Option<HotSpot>,
    /// Independent replications near saturation (1 = batch means only).
    reps: u32,
    /// Replicate when the first run's latency / (ω + its mean hops) reaches this.
    replicate_above: f64,
}

/// Most in-task replications (each a full run with its own warm-up).
const MAX_REPS: usize = 10;

fn validate(p: &Params, ctx: &TaskContext) -> Result<SimTask, SolveError> {
    let k = count("k", p.k, 2)?;
    if k * k > MAX_NODES {
        return Err(SolveError::param(
            "k",
            format!(
                "k^2 = {} nodes is more than the simulator accepts ({MAX_NODES})",
                k * k
            ),
        ));
    }
    let omega = count("omega", p.omega, 1)?;
    if omega > 1 << 20 {
        return Err(SolveError::param("omega", "must be <= 2^20 flits"));
    }
    let routing = p.routing.unwrap_or(RoutingKind::Duato);
    let v = count("V", p.v, 1)?;
    match routing {
        RoutingKind::Duato if v < 3 => {
            return Err(SolveError::param(
                "V",
                format!("Duato routing needs V >= 3 (2 escape VCs + at least 1 adaptive), got {v}"),
            ))
        }
        RoutingKind::Dor if v < 2 => {
            return Err(SolveError::param(
                "V",
                format!("dimension-order routing with a dateline needs V >= 2, got {v}"),
            ))
        }
        _ => {}
    }
    if v > 32 {
        return Err(SolveError::param("V", format!("must be <= 32, got {v}")));
    }
    let buffer = match p.buffer {
        Some(b) => count("buffer", b, 1)?,
        None => 2,
    };
    if buffer > 1024 {
        return Err(SolveError::param("buffer", "must be <= 1024 flits"));
    }
    let kind = p.source.unwrap_or(SourceKind::Mmpp);
    let need = |name: &str, x: Option<f64>| {
        x.ok_or_else(|| SolveError::param(name, format!("required with source {kind:?}")))
    };
    let forbid = |name: &str, x: Option<f64>| match x {
        Some(_) => Err(SolveError::param(
            name,
            format!("not a parameter of source {kind:?}"),
        )),
        None => Ok(()),
    };
    let source = match kind {
        SourceKind::Mmpp => {
            forbid("rate", p.rate)?;
            let (phi1, phi2) = (need("phi1", p.phi1)?, need("phi2", p.phi2)?);
            let (lambda1, lambda2) = (need("lambda1", p.lambda1)?, p.lambda2.unwrap_or(0.0));
            crate::traffic::mmpp::Mmpp2::new(phi1, phi2, lambda1, lambda2)?;
            // A node cannot inject more than one message per cycle; a rate above
            // that only fills the source queue (memory) before saturation is seen.
            for (name, x) in [("lambda1", lambda1), ("lambda2", lambda2)] {
                at_most_one_per_cycle(name, x)?;
            }
            Source::Mmpp {
                phi1,
                phi2,
                lambda1,
                lambda2,
            }
        }
        SourceKind::Bernoulli | SourceKind::Poisson => {
            for (n, x) in [
                ("phi1", p.phi1),
                ("phi2", p.phi2),
                ("lambda1", p.lambda1),
                ("lambda2", p.lambda2),
            ] {
                forbid(n, x)?;
            }
            let rate = positive("rate", need("rate", p.rate)?)?;
            if kind == SourceKind::Bernoulli {
                if rate > 1.0 {
                    return Err(SolveError::param(
                        "rate",
                        format!("a Bernoulli probability must be <= 1, got {rate}"),
                    ));
                }
                Source::Bernoulli { p: rate }
            } else {
                at_most_one_per_cycle("rate", rate)?;
                Source::Poisson { rate }
            }
        }
    };
    let delta = p.delta.unwrap_or(0.0);
    if !(delta.is_finite() && (0.0..1.0).contains(&delta)) {
        return Err(SolveError::param(
            "delta",
            format!("must lie in [0, 1), got {delta}"),
        ));
    }
    let node = match p.hotspot {
        Some(h) => count("hotspot", h, 0)?,
        None => 0,
    };
    if node >= k * k {
        return Err(SolveError::param(
            "hotspot",
            format!(
                "node {node} is outside the {k}x{k} network (0..{})",
                k * k - 1
            ),
        ));
    }
    let run = RunLength::resolve(p.warmup, p.batches, p.batch_len, ctx.fidelity, FULL, QUICK)?;
    let msgs = run.warmup as f64 + run.batches as f64 * run.batch_len as f64;
    if msgs > 1e8 {
        return Err(SolveError::param(
            "batch_len",
            format!("warmup + batches x batch_len = {msgs} messages exceeds 1e8"),
        ));
    }
    let reps = match p.replications {
        Some(r) => count("replications", r, 1)?,
        None => 1,
    };
    if reps > MAX_REPS {
        return Err(SolveError::param(
            "replications",
            format!("must be <= {MAX_REPS}, got {reps}"),
        ));
    }
    let replicate_above = p.replicate_above.unwrap_or(0.0);
    if !(replicate_above.is_finite() && replicate_above >= 0.0) {
        return Err(SolveError::param(
            "replicate_above",
            format!("must be a finite latency ratio >= 0, got {replicate_above}"),
        ));
    }
    if p.replicate_above.is_some() && reps == 1 {
        return Err(SolveError::param(
            "replicate_above",
            "needs replications >= 2",
        ));
    }
    let nodes = (k * k) as f64;
    let lam = source.mean_rate();
    // Cycles the run should take at the offered load; a run that needs more
    // than four times that is not in steady state (saturated).
    let expect = msgs / (nodes * lam);
    let max_cycles = 4.0 * expect + 100_000.0;
    if max_cycles * nodes * reps as f64 > MAX_ROUTER_CYCLES {
        let name = if kind == SourceKind::Mmpp {
            "lambda1"
        } else {
            "rate"
        };
        return Err(SolveError::param(
            name,
            format!(
                "mean rate {lam} messages/node/cycle is too low for {msgs} messages on {k}x{k}: \
                 ({reps} replication(s)): the cycle budget would exceed \
                 {MAX_ROUTER_CYCLES:e} router-cycles"
            ),
        ));
    }
    Ok(SimTask {
        k: k as u32,
        duato: routing == RoutingKind::Duato,
        sc: Scenario {
            vcs: v,
            buffer,
            msg_len: omega as u32,
            injection: match p.injection.unwrap_or(InjKind::PerVc) {
                InjKind::PerVc => Injection::PerVc,
                InjKind::Shared => Injection::Shared,
            },
            source,
            run,
            max_cycles: max_cycles as u64,
            backlog_limit: 20 * (k * k) as u64 + 1000,
            stall_cycles: 20_000 + 50 * omega as u64,
            seed: ctx.seed,
        },
        hotspot: (delta > 0.0).then_some(HotSpot {
            nodes: (k * k) as u32,
            node: node as u32,
            delta,
        }),
        reps: reps as u32,
        replicate_above,
    })
}

/// The torus's destination plug-ins behind one type, so that the engine is
/// compiled once per routing function.
enum TorusTraffic {
    Uniform(Uniform),
    Hot(HotSpot),
}

impl Destinations for TorusTraffic {
    fn relays(&self) -> bool {
        false
    }
    fn nodes(&self) -> u32 {
        match self {
            TorusTraffic::Uniform(u) => u.nodes,
            TorusTraffic::Hot(h) => h.nodes,
        }
    }
    #[inline]
    fn pick(&self, src: u32, rng: &mut Stream) -> u32 {
        match self {
            TorusTraffic::Uniform(u) => u.pick(src, rng),
            TorusTraffic::Hot(h) => h.pick(src, rng),
        }
    }
}

pub(crate) fn simulate(task: &SimTask, ctx: &TaskContext) -> Result<Counters, SolveError> {
    let topo = KaryNcube::new(task.k, 2);
    let v = task.sc.vcs as u32;
    let dests = match task.hotspot {
        Some(h) => TorusTraffic::Hot(h),
        None => TorusTraffic::Uniform(Uniform {
            nodes: topo.nodes() as u32,
        }),
    };
    let timing = UniformLatency(1);
    if task.duato {
        let routing = Duato {
            topo: &topo,
            vcs: v,
        };
        run(&task.sc, &topo, &routing, &timing, &dests, ctx)
    } else {
        let routing = Dor {
            topo: &topo,
            vcs: v,
        };
        run(&task.sc, &topo, &routing, &timing, &dests, ctx)
    }
}

/// Seed of in-task replication `r` (replication 0 keeps the task's seed, so
/// a point that is not replicated gives exactly the single run's result).
fn replication_seed(seed: u64, r: u32) -> u64 {
    if r == 0 {
        seed
    } else {
        splitmix64(seed ^ splitmix64(0x7265_706c_6963_6100 | u64::from(r)))
    }
}

/// Runs the task: one run, then (with `replications` > 1) R − 1 more with
/// independent seeds when the first run's latency is at least
/// `replicate_above` × its zero-load latency ω + mean hops, i.e. near
/// saturation, where batches of 8,000 messages are correlated and the
/// batch-means CI is too narrow (docs/models/torus.md, "Replications").
/// Stops at the first run that does not complete.
pub(crate) fn simulate_reps(
    task: &SimTask,
    ctx: &TaskContext,
) -> Result<Vec<Counters>, SolveError> {
    let first = simulate(task, ctx)?;
    let mut runs = vec![first];
    if task.reps <= 1 || runs[0].finish != Finish::Completed {
        return Ok(runs);
    }
    let (lat, hops) = (mean(&runs[0].latency), mean(&runs[0].hops));
    if lat < task.replicate_above * (task.sc.msg_len as f64 + hops) {
        return Ok(runs);
    }
    for r in 1..task.reps {
        let mut t = task.clone();
        t.sc.seed = replication_seed(ctx.seed, r);
        let c = simulate(&t, ctx)?;
        let done = c.finish == Finish::Completed;
        runs.push(c);
        if !done {
            break;
        }
    }
    Ok(runs)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Mean flits per cycle on the inward channels from ring j to ring j − 1
/// around the hot spot, j = 1..=d_max.
fn util_ring(task: &SimTask, c: &Counters) -> Vec<(f64, f64)> {
    let topo = KaryNcube::new(task.k, 2);
    let h = task.hotspot.map_or(0, |h| h.node);
    let rings = Rings::of(task.k);
    let mut sum = vec![0.0; rings.dmax + 1];
    let cyc = c.measured_cycles.max(1) as f64;
    for r in 0..topo.nodes() as u32 {
        for p in 0..topo.ports() as u32 {
            let to = topo.link(r, p).unwrap().0;
            let (dr, dt) = (topo.distance(h, r) as usize, topo.distance(h, to) as usize);
            if dt + 1 == dr {
                sum[dr] += c.channel_flits[(r as usize) * topo.ports() + p as usize] as f64 / cyc;
            }
        }
    }
    (1..=rings.dmax)
        .map(|j| (j as f64, sum[j] / rings.c_in[j] as f64))
        .collect()
}

/// The outcome of one or several runs. One run reports its batch-means CI
/// (n = batches); several report the mean of the run means with a Student-t
/// CI across runs (n = runs). `cycles` and `flits` add up over runs (work
/// done), `util_ring` averages them.
fn outcome(task: &SimTask, runs: &[Counters]) -> Result<Outcome, SolveError> {
    for c in runs {
        if let Some(o) = c.finish.unfinished(task.sc.stall_cycles)? {
            return Ok(o);
        }
    }
    let mut o = Outcome::new();
    for (name, get) in [
        (
            "latency",
            (|c: &Counters| &c.latency) as fn(&Counters) -> &Vec<f64>,
        ),
        ("network_latency", |c| &c.network_latency),
        ("throughput", |c| &c.throughput),
        ("hops", |c| &c.hops),
    ] {
        let v: Vec<f64> = if runs.len() == 1 {
            get(&runs[0]).clone()
        } else {
            runs.iter().map(|c| mean(get(c))).collect()
        };
        let (m, h) = ci95(&v);
        o = o.with_estimate(name, m, h, v.len() as u64);
    }
    let rings: Vec<Vec<(f64, f64)>> = runs.iter().map(|c| util_ring(task, c)).collect();
    let util = (0..rings[0].len())
        .map(|j| {
            let y = rings.iter().map(|r| r[j].1).sum::<f64>() / rings.len() as f64;
            (rings[0][j].0, y)
        })
        .collect();
    o = o
        .with("cycles", runs.iter().map(|c| c.cycles as f64).sum())
        .with("flits", runs.iter().map(|c| c.flits_delivered as f64).sum())
        .with(
            "offered",
            task.sc.source.mean_rate() * task.sc.msg_len as f64,
        )
        .with("replications", runs.len() as f64);
    o.series.insert("util_ring".into(), util);
    o.checked("torus.sim")
}

pub(super) struct TorusSim;

impl Solver for TorusSim {
    fn name(&self) -> &'static str {
        "torus.sim"
    }
    fn version(&self) -> u32 {
        // 2: in-task replications near saturation; metric `replications`.
        // 3: MMPP sources with λ2 = 0 draw each next arrival in O(1)
        // (engines/flit/onoff.rs): same law, other random draws.
        3
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Flit-level wormhole simulation of the k×k torus (Wu ch.3, SIM-4): Duato or dimension-order routing, MMPP/Bernoulli/Poisson sources, hot-spot destinations; batch means over delivered messages",
            params: vec![
                ParamDoc { name: "k", doc: "nodes per dimension (integer >= 2)" },
                ParamDoc { name: "omega", doc: "message length in flits (integer >= 1)" },
                ParamDoc { name: "V", doc: "virtual channels per physical channel (>= 3 for duato, >= 2 for dor)" },
                ParamDoc { name: "buffer", doc: "flit buffer per VC (integer >= 1, default 2)" },
                ParamDoc { name: "routing", doc: "duato (default) or dor (dimension order with a dateline)" },
                ParamDoc { name: "source", doc: "mmpp (default), bernoulli or poisson" },
                ParamDoc { name: "phi1", doc: "MMPP rate of leaving phase 1 (> 0)" },
                ParamDoc { name: "phi2", doc: "MMPP rate of leaving phase 2 (> 0)" },
                ParamDoc { name: "lambda1", doc: "MMPP message rate in phase 1, messages/node/cycle" },
                ParamDoc { name: "lambda2", doc: "MMPP message rate in phase 2 (default 0)" },
                ParamDoc { name: "rate", doc: "bernoulli probability or poisson rate per node per cycle" },
                ParamDoc { name: "delta", doc: "hot-spot fraction in [0, 1) (default 0: uniform traffic without a hot spot, not a case of Wu ch.3, whose figures give 0.05, 0.1 or 0.2; the manifests give it)" },
                ParamDoc { name: "hotspot", doc: "hot-spot node id (default 0)" },
                ParamDoc { name: "injection", doc: "per_vc (default: V source FIFOs, random assignment) or shared" },
                ParamDoc { name: "warmup", doc: "delivered messages discarded (default 8000; quick 500)" },
                ParamDoc { name: "batches", doc: "number of batches (default 10)" },
                ParamDoc { name: "batch_len", doc: "delivered messages per batch (default 8000; quick 800)" },
                ParamDoc { name: "replications", doc: "independent runs near saturation (integer 1..=10, default 1); their means give the CI" },
                ParamDoc { name: "replicate_above", doc: "replicate only when the first run's latency >= this × (omega + mean hops) (default 0: always)" },
            ],
            metrics: vec![
                "latency",
                "network_latency",
                "throughput",
                "hops",
                "cycles",
                "flits",
                "offered",
                "replications",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let p: Params = parse(params)?;
        let task = validate(&p, ctx)?;
        let runs = simulate_reps(&task, ctx)?;
        outcome(&task, &runs)
    }
}

/// The BookSim comparison configuration for `benches/torus.rs`: k×k torus,
/// dimension-order routing, `vcs` VCs with `buffer`-flit buffers,
/// `omega`-flit messages, uniform Bernoulli injection at `rate`, run for
/// `msgs` delivered messages after `warmup`. Returns (cycles, flits delivered).
pub fn bench_run(
    k: u32,
    vcs: usize,
    buffer: usize,
    omega: u32,
    rate: f64,
    warmup: u64,
    msgs: u64,
) -> Result<(u64, u64), SolveError> {
    bench_run_timed(k, vcs, buffer, omega, rate, warmup, msgs, None)
}

/// [`bench_run`] with every channel's (latency, period) in cycles, to time
/// the engine's real-valued link timing (SIM-5); `None` = the torus's 1, 1.
#[allow(clippy::too_many_arguments)]
pub fn bench_run_timed(
    k: u32,
    vcs: usize,
    buffer: usize,
    omega: u32,
    rate: f64,
    warmup: u64,
    msgs: u64,
    timing: Option<(f64, f64)>,
) -> Result<(u64, u64), SolveError> {
    let ctx = TaskContext::new(1, crate::Fidelity::Full);
    let task = SimTask {
        k,
        duato: false,
        sc: Scenario {
            vcs,
            buffer,
            msg_len: omega,
            injection: Injection::PerVc,
            source: Source::Bernoulli { p: rate },
            run: RunLength::new(warmup, 10, msgs / 10),
            max_cycles: u64::MAX,
            backlog_limit: u64::MAX,
            stall_cycles: 100_000,
            seed: 1,
        },
        hotspot: None,
        reps: 1,
        replicate_above: 0.0,
    };
    let c = match timing {
        None => simulate(&task, &ctx)?,
        Some((latency, period)) => {
            let topo = KaryNcube::new(k, 2);
            let routing = Dor {
                topo: &topo,
                vcs: vcs as u32,
            };
            let dests = Uniform {
                nodes: topo.nodes() as u32,
            };
            let timing = crate::engines::flit::UniformTiming { latency, period };
            run(&task.sc, &topo, &routing, &timing, &dests, &ctx)?
        }
    };
    if c.finish != Finish::Completed {
        return Err(SolveError::Numerical(format!("{:?}", c.finish)));
    }
    Ok((c.cycles, c.flits_delivered))
}

/// Message rates are per node per cycle: one message per cycle already
/// saturates any network, and a larger rate would only grow the source queues
/// (memory) before the saturation detector stops the run.
fn at_most_one_per_cycle(name: &str, x: f64) -> Result<(), SolveError> {
    if x > 1.0 {
        return Err(SolveError::param(
            name,
            format!("must be <= 1 message/node/cycle, got {x}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "sim_tests.rs"]
mod tests;
