//! `multicluster.sim`: Wu ch.4–5 multi-cluster systems on the flit engine
//! (catalogue §6 SIM-5). The shared parameters ([`super::params`]) are
//! validated into a typed [`System`]; this file maps it to the engine's
//! multi-cluster plug-in ([`crate::engines::flit::fattree`]) on a clock of
//! `cycles_per_flit` cycles per fastest link time, and the counters to an
//! outcome in the paper's time units.

use super::params::{parse_with_extras, Locality as PLocality, SourceLaw, System, Variants};
use crate::des::{ci95, RunLength};
use crate::engines::flit::fattree::{
    CdQueue, ClusterSpec, Locality, MultiCluster, NetTiming, Spec, Tree, MAX_OUTPUT_CLUSTERS,
};
use crate::engines::flit::{run, state_bytes, Counters, Finish, Injection, Scenario, Source};
use crate::params::{count, show};
use crate::{Kind, Outcome, ParamDoc, SolveError, Solver, SolverDoc, TaskContext};

/// Catalogue §3.2: 80k messages per point (8,000 warm-up, 10 × 8,000).
const FULL: RunLength = RunLength::new(8_000, 10, 8_000);
const QUICK: RunLength = RunLength::new(500, 10, 800);
const EXTRAS: &[&str] = &[
    "warmup",
    "batches",
    "batch_len",
    "cycles_per_flit",
    "relay",
    "buffer",
    "loads",
    "cd_queue",
    "max_rel_half_width",
];

/// Largest engine state `multicluster.sim` accepts (bytes of the flit
/// engine's arrays, message pool and accumulators by
/// [`crate::engines::flit::state_bytes`], an upper bound); the test
/// `largest_accepted_inputs_stay_under_the_memory_bound` checks the resident
/// set of the largest accepted inputs against it.
pub const MAX_STATE_BYTES: u64 = 1 << 30;

/// Most messages waiting (at sources and in C/D FIFOs) before a run is
/// declared saturated, whatever the batch length.
const MAX_BACKLOG: u64 = 1_000_000;

/// A validated simulation task.
#[derive(Debug, Clone)]
pub(crate) struct SimTask {
    pub spec: Spec,
    pub sc: Scenario,
    /// Time units per cycle.
    pub dt: f64,
    pub ch5: bool,
    /// `false` when `loads` is given and `lambda1` is not one of them: the
    /// point is not simulated (outcome `undefined`).
    pub simulate: bool,
    /// A single-server station whose offered load is >= 1 (the run could
    /// only grow its queue): the outcome is `saturated` without simulating.
    pub overload: Option<String>,
    /// The stop rule of catalogue §0 (`max_rel_half_width`): a completed run
    /// whose latency half-width exceeds this fraction of its mean is not a
    /// steady point; the outcome is `undefined`, the numbers in its note.
    pub max_rel_hw: Option<f64>,
}

fn num(
    extra: &serde_json::Map<String, serde_json::Value>,
    k: &str,
) -> Result<Option<f64>, SolveError> {
    match extra.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| SolveError::param(k, "must be a number")),
    }
}

pub(crate) fn validate(
    params: &serde_json::Value,
    ctx: &TaskContext,
) -> Result<SimTask, SolveError> {
    let (sys, extra) = parse_with_extras(params, EXTRAS)?;
    if sys.variants != Variants::default() {
        return Err(SolveError::param(
            "channels",
            "model variants (channels, cd, ecn_num, stage_map, inflow, weights, dispatcher, ecn_leg2) are not simulator parameters: the simulated system is one",
        ));
    }
    let cpf = match num(&extra, "cycles_per_flit")? {
        Some(x) => count("cycles_per_flit", x, 1)?,
        None => 8,
    };
    if cpf > 1000 {
        return Err(SolveError::param("cycles_per_flit", "must be <= 1000"));
    }
    let cut_through = match extra.get("relay") {
        None => true,
        Some(v) => match v.as_str() {
            Some("cut_through") => true,
            Some("store_forward") => false,
            _ => {
                return Err(SolveError::param(
                    "relay",
                    "cut_through (default) or store_forward",
                ))
            }
        },
    };
    let cd_queue = match extra.get("cd_queue") {
        None => CdQueue::Fifo,
        Some(v) => match v.as_str() {
            Some("fifo") => CdQueue::Fifo,
            Some("output") => CdQueue::Output,
            _ => {
                return Err(SolveError::param(
                    "cd_queue",
                    "fifo (default: the ICN tree, C/D FIFOs held by blocking) or output (a lane per cluster pair, output-queued dispatchers)",
                ))
            }
        },
    };
    if cd_queue == CdQueue::Output && sys.num_clusters() as u32 > MAX_OUTPUT_CLUSTERS {
        return Err(SolveError::param(
            "cd_queue",
            format!(
                "output builds a lane per ordered cluster pair: at most {MAX_OUTPUT_CLUSTERS} clusters, got {}",
                sys.num_clusters()
            ),
        ));
    }
    let buffer = match num(&extra, "buffer")? {
        Some(x) => count("buffer", x, 1)?,
        None => 2,
    };
    if buffer > 4096 {
        return Err(SolveError::param("buffer", "must be <= 4096 flits"));
    }
    let run_len = RunLength::resolve(
        num(&extra, "warmup")?,
        num(&extra, "batches")?,
        num(&extra, "batch_len")?,
        ctx.fidelity,
        FULL,
        QUICK,
    )?;
    let msgs = run_len.warmup as f64 + run_len.batches as f64 * run_len.batch_len as f64;
    if msgs > 1e8 {
        return Err(SolveError::param(
            "batch_len",
            format!("warmup + batches x batch_len = {msgs} messages exceeds 1e8"),
        ));
    }
    let simulate = match extra.get("loads") {
        None => true,
        Some(v) => {
            let xs = v
                .as_array()
                .filter(|a| !a.is_empty() && a.len() <= 10_000)
                .ok_or_else(|| {
                    SolveError::param("loads", "a list of 1 to 10000 values of lambda1")
                })?;
            let mut hit = false;
            for x in xs {
                let x = x
                    .as_f64()
                    .filter(|x| x.is_finite() && *x > 0.0)
                    .ok_or_else(|| SolveError::param("loads", "every value a number > 0"))?;
                hit |= (x - sys.source.lambda1).abs() <= 1e-9 * x;
            }
            hit
        }
    };
    let max_rel_hw = match num(&extra, "max_rel_half_width")? {
        None => None,
        Some(x) if x.is_finite() && x > 0.0 => Some(x),
        Some(_) => {
            return Err(SolveError::param(
                "max_rel_half_width",
                "a number > 0 (e.g. 0.1: the catalogue's stop rule)",
            ))
        }
    };
    let mut t = build(&sys, cpf, cut_through, run_len, ctx.seed)?;
    t.max_rel_hw = max_rel_hw;
    t.spec.cd_queue = cd_queue;
    t.sc.buffer = buffer;
    t.simulate = simulate;
    t.overload = overload(&sys);
    Ok(t)
}

/// The first single-server station whose offered load (mean rate × its
/// least time per message) is >= 1, named, or `None`: a node's injection
/// channel into its ACN (ω·t_cn^A per message) or ECN (ω·t_cn^E), a
/// concentrator (ω·t_cs^I: its output link's flit time), a dispatcher (the
/// same). Such a queue grows without bound whatever the rest of the system
/// does, so the point is saturated without a run (issue 32: a load far past
/// saturation ends at once instead of growing a queue).
pub(crate) fn overload(sys: &System) -> Option<String> {
    let lam = sys.source.mean_rate();
    let w = sys.omega as f64;
    let n_tot = sys.total_nodes() as f64;
    let scale = |i: usize| 1.0 / (1.0 - sys.clusters[i].user_level);
    let t_i = sys.icn.times.t_cs;
    let mut inbound = vec![0.0; sys.num_clusters()];
    for (v, cv) in sys.clusters.iter().enumerate() {
        inbound[v] = match sys.locality {
            PLocality::Ch4 { xi, .. } => cv.nodes as f64 * xi * lam * scale(v),
            PLocality::Ch5 => (0..sys.num_clusters())
                .filter(|&u| u != v)
                .map(|u| {
                    sys.clusters[u].nodes as f64 * lam * scale(u) * cv.nodes as f64 / (n_tot - 1.0)
                })
                .sum(),
        };
    }
    for (i, c) in sys.clusters.iter().enumerate() {
        let (x, node) = (sys.xi(i), lam * scale(i));
        let loads = [
            (
                "a node's ACN injection channel",
                (1.0 - x) * node * w * c.acn.times.t_cn,
            ),
            (
                "a node's ECN injection channel",
                x * node * w * sys.ecn.times.t_cn,
            ),
            ("the concentrator", c.nodes as f64 * x * node * w * t_i),
            ("the dispatcher", inbound[i] * w * t_i),
        ];
        for (what, rho) in loads {
            // An overflow to infinity or NaN counts as overloaded.
            if rho.is_nan() || rho >= 1.0 {
                return Some(format!(
                    "offered load {rho:.4} >= 1 at {what} of cluster {i}: its queue grows without bound (not simulated)"
                ));
            }
        }
    }
    None
}

/// Refuses a task whose engine state would exceed [`MAX_STATE_BYTES`],
/// naming the parameter that makes it large, before the engine allocates.
pub(crate) fn check_memory(task: &SimTask, mc: &MultiCluster) -> Result<(), SolveError> {
    let b = state_bytes(&task.sc, mc, mc, mc);
    let total = b.total();
    if total <= MAX_STATE_BYTES {
        return Ok(());
    }
    let gib = |x: u64| x as f64 / (1u64 << 30) as f64;
    let (param, what) = if b.buffers > b.network / 2 && task.sc.buffer > 2 {
        (
            "buffer",
            format!("{} flits per input buffer", task.sc.buffer),
        )
    } else if b.batches >= total / 2 {
        (
            "batches",
            format!(
                "{} batches × {} clusters' accumulators",
                task.sc.run.batches,
                mc.clusters()
            ),
        )
    } else {
        let (n, sw, icn, cd) = mc.counts();
        (
            if task.ch5 { "clusters" } else { "m" },
            format!(
                "{n} nodes, {} switches and {cd} concentrators/dispatchers",
                sw + icn
            ),
        )
    };
    Err(SolveError::param(
        param,
        format!(
            "the simulation would need about {:.2} GiB ({what}: network {:.2}, messages {:.2}, per-batch {:.2} GiB); the limit is {:.0} GiB",
            gib(total),
            gib(b.network),
            gib(b.messages),
            gib(b.batches),
            gib(MAX_STATE_BYTES)
        ),
    ))
}

/// The engine scenario of a validated system.
pub(crate) fn build(
    sys: &System,
    cpf: usize,
    cut_through: bool,
    run_len: RunLength,
    seed: u64,
) -> Result<SimTask, SolveError> {
    // The clock: the fastest link time over cpf.
    let mut fastest = sys
        .ecn
        .times
        .t_cn
        .min(sys.ecn.times.t_cs)
        .min(sys.icn.times.t_cs);
    for c in &sys.clusters {
        fastest = fastest.min(c.acn.times.t_cn).min(c.acn.times.t_cs);
    }
    if !(fastest.is_finite() && fastest > 0.0) {
        return Err(SolveError::param(
            "acn",
            "every per-flit link time t_cn, t_cs must be > 0",
        ));
    }
    let dt = fastest / cpf as f64;
    let cyc = |t: f64| t / dt;
    let net = |n: &super::params::Network| NetTiming {
        t_cn: cyc(n.times.t_cn),
        t_cs: cyc(n.times.t_cs),
    };
    let tree = |t: &super::params::Tree| Tree::new(t.m, t.n).map_err(|e| SolveError::param("m", e));
    let clusters = sys
        .clusters
        .iter()
        .map(|c| {
            Ok(ClusterSpec {
                tree: tree(&c.tree)?,
                acn: net(&c.acn),
                rate_scale: 1.0 / (1.0 - c.user_level),
            })
        })
        .collect::<Result<Vec<_>, SolveError>>()?;
    let (locality, ch5) = match sys.locality {
        PLocality::Ch4 { xi, eta_in } => (Locality::Ch4 { xi, eta_in }, false),
        PLocality::Ch5 => (Locality::Uniform, true),
    };
    let spec = Spec {
        clusters,
        icn: tree(&sys.icn_tree)?,
        ecn: net(&sys.ecn),
        icn_cs: cyc(sys.icn.times.t_cs),
        locality,
        cut_through,
        cd_queue: CdQueue::Fifo,
    };
    let s = sys.source;
    if s.mean_rate() <= 0.0 {
        return Err(SolveError::param(
            "lambda1",
            "the simulator needs a mean rate > 0",
        ));
    }
    let source = match sys.source_law {
        SourceLaw::Poisson => Source::Poisson {
            rate: s.mean_rate() * dt,
        },
        SourceLaw::Mmpp => Source::Mmpp {
            phi1: s.phi1 * dt,
            phi2: s.phi2 * dt,
            lambda1: s.lambda1 * dt,
            lambda2: s.lambda2 * dt,
        },
    };
    let n_tot = sys.total_nodes() as f64;
    let mean_scale = sys
        .clusters
        .iter()
        .map(|c| c.nodes as f64 / (1.0 - c.user_level))
        .sum::<f64>()
        / n_tot;
    let msgs = run_len.warmup as f64 + run_len.batches as f64 * run_len.batch_len as f64;
    let expect = msgs / (n_tot * source.mean_rate() * mean_scale);
    let max_cycles = 4.0 * expect + 100_000.0 * cpf as f64;
    if max_cycles > 1e13 {
        // The mean rate is made of all four source parameters: a vanishing
        // weight of phase 1 (phi1 far above phi2) makes it tiny whatever
        // lambda1 is (issue 32: `phi1: 1e308` blamed lambda1).
        let blame = if s.phi2 / s.tau() < 1e-3 {
            "phi1"
        } else {
            "lambda1"
        };
        return Err(SolveError::param(
            blame,
            format!(
                "the mean rate (lambda1 phi2 + lambda2 phi1) / (phi1 + phi2) = {} messages per node and time unit (lambda1 = {}, lambda2 = {}, phi1 = {}, phi2 = {}) is too low: {msgs} messages would take {max_cycles:.3e} cycles, the limit is 1e13",
                show(s.mean_rate()),
                show(s.lambda1),
                show(s.lambda2),
                show(s.phi1),
                show(s.phi2)
            ),
        ));
    }
    let slowest = spec
        .clusters
        .iter()
        .map(|c| c.acn.t_cn.max(c.acn.t_cs))
        .fold(spec.ecn.t_cn.max(spec.ecn.t_cs).max(spec.icn_cs), f64::max);
    Ok(SimTask {
        sc: Scenario {
            vcs: 1,
            buffer: 2,
            msg_len: sys.omega,
            injection: Injection::Classes(2),
            source,
            run: run_len,
            max_cycles: max_cycles as u64,
            // Messages waiting at sources and in C/D FIFOs: a concentrator
            // past its bound grows its FIFO without limit while the
            // network around it stays fluid, so the limit is one batch.
            backlog_limit: (20 * n_tot as u64 + 1000)
                .min(run_len.batch_len.max(100))
                .min(MAX_BACKLOG),
            stall_cycles: 20_000 + (100.0 * sys.omega as f64 * slowest) as u64,
            seed,
        },
        spec,
        dt,
        ch5,
        simulate: true,
        overload: None,
        max_rel_hw: None,
    })
}

pub(crate) fn topology(task: &SimTask) -> Result<MultiCluster, SolveError> {
    MultiCluster::new(task.spec.clone()).map_err(|e| SolveError::param("clusters", e))
}

pub(crate) fn simulate(
    task: &SimTask,
    ctx: &TaskContext,
) -> Result<(Counters, MultiCluster), SolveError> {
    let mc = topology(task)?;
    let c = run(&task.sc, &mc, &mc, &mc, &mc, ctx)?;
    Ok((c, mc))
}

/// Batch means of the slots selected by `pick` (per batch, per slot: sum
/// and count), in time units; `None` if some batch saw none of them.
fn slot_means(
    batches: &[Vec<(f64, u64)>],
    dt: f64,
    pick: impl Fn(usize) -> bool,
) -> Option<Vec<f64>> {
    batches
        .iter()
        .map(|b| {
            let (s, n) = b
                .iter()
                .enumerate()
                .filter(|(g, _)| pick(*g))
                .fold((0.0, 0u64), |a, (_, x)| (a.0 + x.0, a.1 + x.1));
            (n > 0).then(|| s / n as f64 * dt)
        })
        .collect()
}

/// Latency means of the destination groups selected by `pick`.
fn group_means(c: &Counters, dt: f64, pick: impl Fn(usize) -> bool) -> Option<Vec<f64>> {
    slot_means(&c.group_latency, dt, pick)
}

/// Source-wait means (generation to the header leaving the node) of the
/// destination groups selected by `pick`, per batch.
fn source_waits(c: &Counters, dt: f64, pick: impl Fn(usize) -> bool) -> Option<Vec<f64>> {
    c.group_latency
        .iter()
        .zip(&c.group_wait)
        .map(|(b, w)| {
            let (s, n) = b
                .iter()
                .zip(w)
                .enumerate()
                .filter(|(g, _)| pick(*g))
                .fold((0.0, 0u64), |a, (_, (x, w))| (a.0 + w, a.1 + x.1));
            (n > 0).then(|| s / n as f64 * dt)
        })
        .collect()
}

/// C/D FIFO wait means of the relay slots selected by `pick`.
fn wait_means(c: &Counters, dt: f64, pick: impl Fn(usize) -> bool) -> Option<Vec<f64>> {
    slot_means(&c.relay_wait, dt, pick)
}

pub(crate) fn outcome(task: &SimTask, c: &Counters) -> Result<Outcome, SolveError> {
    if let Some(o) = c.finish.unfinished(task.sc.stall_cycles)? {
        return Ok(o);
    }
    let dt = task.dt;
    let mut o = Outcome::new();
    let est = |o: Outcome, name: &str, v: Option<Vec<f64>>| match v {
        Some(v) if v.len() >= 2 => {
            let (m, h) = ci95(&v);
            o.with_estimate(name, m, h, v.len() as u64)
        }
        _ => o,
    };
    let scaled = |v: &[f64], f: f64| v.iter().map(|x| x * f).collect::<Vec<_>>();
    o = est(o, "latency", Some(scaled(&c.latency, dt)));
    o = est(o, "network_latency", Some(scaled(&c.network_latency, dt)));
    // Flits delivered per node per time unit.
    o = est(o, "throughput", Some(scaled(&c.throughput, 1.0 / dt)));
    o = est(o, "hops", Some(c.hops.clone()));
    o = est(o, "latency_in", group_means(c, dt, |g| g % 2 == 0));
    o = est(o, "latency_out", group_means(c, dt, |g| g % 2 == 1));
    o = est(o, "W_c", wait_means(c, dt, |s| s % 2 == 0));
    o = est(o, "W_d", wait_means(c, dt, |s| s % 2 == 1));
    // The model's parts (docs "Metrics"): source waits W_in, W_out, and the
    // network part net_in = latency_in − W_in, net_out = latency_out −
    // W_out − W_c − W_d, per batch.
    let w_in = source_waits(c, dt, |g| g % 2 == 0);
    let w_out = source_waits(c, dt, |g| g % 2 == 1);
    let minus = |a: Option<Vec<f64>>, parts: &[&Option<Vec<f64>>]| {
        let mut a = a?;
        for p in parts {
            let p = p.as_ref()?;
            for (x, y) in a.iter_mut().zip(p) {
                *x -= y;
            }
        }
        Some(a)
    };
    let net_in = minus(group_means(c, dt, |g| g % 2 == 0), &[&w_in]);
    let (wc, wd) = (
        wait_means(c, dt, |s| s % 2 == 0),
        wait_means(c, dt, |s| s % 2 == 1),
    );
    let net_out = minus(group_means(c, dt, |g| g % 2 == 1), &[&w_out, &wc, &wd]);
    o = est(o, "W_in", w_in);
    o = est(o, "W_out", w_out);
    o = est(o, "net_in", net_in);
    o = est(o, "net_out", net_out);
    if task.ch5 {
        for i in 0..task.spec.clusters.len() {
            o = est(
                o,
                &format!("latency_{i}"),
                group_means(c, dt, |g| g / 2 == i),
            );
            o = est(o, &format!("W_c_{i}"), wait_means(c, dt, |s| s == 2 * i));
            o = est(
                o,
                &format!("W_d_{i}"),
                wait_means(c, dt, |s| s == 2 * i + 1),
            );
        }
    }
    let qmax = |odd: usize| {
        c.relay_max_queue
            .iter()
            .enumerate()
            .filter(|(s, _)| s % 2 == odd)
            .map(|(_, &q)| q)
            .max()
            .unwrap_or(0) as f64
    };
    o = o
        .with("Q_c_max", qmax(0))
        .with("Q_d_max", qmax(1))
        .with("cycle_length", dt)
        .with("cycles", c.cycles as f64)
        .with("stepped_cycles", c.stepped_cycles as f64)
        .with("flits", c.flits_delivered as f64);
    o.checked("multicluster.sim")
}

/// Flit utilisations (flits × period / measured cycles) of the channels
/// around the ICN, averaged over clusters: `U_c` C_i → ICN, `U_d` ICN → D_i,
/// `U_icn_max` the busiest ICN switch-to-switch channel, and `U_max` the
/// busiest channel anywhere. A channel that carried no flit adds nothing
/// (its utilisation is +0.0, and the sums and maxima start at +0.0), so
/// only the others are looked up.
fn with_utilisations(o: Outcome, mc: &MultiCluster, c: &Counters) -> Outcome {
    use crate::engines::flit::{LinkTiming, Topology};
    if c.measured_cycles == 0 {
        return o;
    }
    let cl = mc.clusters() as u32;
    let cd = mc.conc(0)..=mc.disp(cl - 1);
    let is_disp = |r: u32| cd.contains(&r) && (r - mc.conc(0)) % 2 == 1;
    let is_conc = |r: u32| cd.contains(&r) && (r - mc.conc(0)).is_multiple_of(2);
    let is_icn = |r: u32| r > mc.disp(cl - 1);
    let (mut uc, mut ud, mut icn_max, mut all_max) = (0.0, 0.0, 0.0f64, 0.0f64);
    let mut ch = 0usize;
    for r in 0..mc.routers() as u32 {
        for p in 0..mc.ports_of(r) as u32 {
            if c.channel_flits[ch] == 0 {
                ch += 1;
                continue;
            }
            if let Some((r2, _)) = mc.link(r, p) {
                let u = c.channel_flits[ch] as f64 * mc.period(r, p) / c.measured_cycles as f64;
                all_max = all_max.max(u);
                if is_conc(r) {
                    uc += u / cl as f64;
                } else if is_disp(r2) {
                    ud += u / cl as f64;
                } else if is_icn(r) && is_icn(r2) {
                    icn_max = icn_max.max(u);
                }
            }
            ch += 1;
        }
    }
    o.with("U_c", uc)
        .with("U_d", ud)
        .with("U_icn_max", icn_max)
        .with("U_max", all_max)
}

pub(super) struct MulticlusterSim;

impl Solver for MulticlusterSim {
    fn name(&self) -> &'static str {
        "multicluster.sim"
    }
    fn version(&self) -> u32 {
        // 2: metrics U_c, U_d, U_icn_max, U_max; parameters buffer, loads.
        // 3: parameter cd_queue; metrics W_in, W_out, net_in, net_out; loads
        // with a station offered >= 1 saturated without a run; memory bound.
        // (Parameter max_rel_half_width added in 3: without it every result
        // is unchanged.)
        // 4: cd_queue: output, a dispatcher's channels into its ECN feed
        // buffers of a whole message (D serves in ω·t_cs^I, not held by a
        // slower ECN); fifo results unchanged.
        4
    }
    fn kind(&self) -> Kind {
        Kind::Simulation
    }
    fn doc(&self) -> SolverDoc {
        SolverDoc {
            summary: "Flit-level wormhole simulation of Wu ch.4–5 multi-cluster systems (SIM-5): per-cluster ACN/ECN m-port n-trees, Up*/Down* d-mod-k routing, MMPP or Poisson sources, batch means in time units. Our choices where the thesis gives none (catalogue §3.2): 2-flit buffers, no VCs, the ICN as an m_c-port n_c-tree with FIFO concentrators/dispatchers (cd_queue: fifo) or the model's output-queued C/D (cd_queue: output). The system parameters are multicluster.model's; its model-variant flags (channels, cd, ecn_num, stage_map, inflow, weights, dispatcher, ecn_leg2) are accepted only at their defaults",
            params: [
                super::param_docs(),
                vec![
                ParamDoc { name: "cycles_per_flit", doc: "clock resolution: cycles per fastest per-flit link time (integer >= 1, default 8); rounding adds < 1 cycle per hop to a header" },
                ParamDoc { name: "relay", doc: "cut_through (default: C/D forward a message while it arrives) or store_forward" },
                ParamDoc { name: "cd_queue", doc: "fifo (default: the ICN as an m_c-port n_c-tree, wormhole, one VC; a message blocked in it holds its concentrator) or output (the model's C/D assumption: a private lane of 2q ICN-speed channels per ordered cluster pair, so a concentrator is never held downstream and messages reach the dispatcher's FIFO without contending for an input link; the dispatcher's channels into its ECN feed buffers of a whole message, so it serves a message in omega*t_cs^I however slow the ECN after it; docs/models/multicluster.md)" },
                ParamDoc { name: "buffer", doc: "diagnostic: flits per input buffer on every channel (integer 1..=4096, default 2: our choice, the thesis gives no buffer size; >= omega makes the network virtual cut-through)" },
                ParamDoc { name: "loads", doc: "simulate only where lambda1 is one of these values (relative 1e-9; default: every point); elsewhere the outcome is `undefined` (not simulated), so a manifest can show a dense model grid with the simulation at a few of its loads" },
                ParamDoc { name: "max_rel_half_width", doc: "stop rule (catalogue §0: a simulated series stops where its CI exceeds 10 %): a completed run whose latency 95% half-width exceeds this fraction of the mean is not a steady point, outcome `undefined` with the value and half-width in its note (default: none, every completed run reports)" },
                ParamDoc { name: "warmup", doc: "delivered messages discarded (default 8000; quick 500)" },
                ParamDoc { name: "batches", doc: "number of batches (default 10)" },
                ParamDoc { name: "batch_len", doc: "delivered messages per batch (default 8000; quick 800)" },
                ],
            ]
            .concat(),
            metrics: vec![
                "latency",
                "latency_in",
                "latency_out",
                "W_c",
                "W_d",
                "W_in",
                "W_out",
                "net_in",
                "net_out",
                "latency_<i> (ch.5)",
                "W_c_<i>, W_d_<i> (ch.5)",
                "Q_c_max",
                "Q_d_max",
                "network_latency",
                "throughput",
                "hops",
                "cycle_length",
                "cycles",
                "stepped_cycles",
                "flits",
                "U_c",
                "U_d",
                "U_icn_max",
                "U_max",
            ],
        }
    }
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError> {
        let task = validate(params, ctx)?;
        if !task.simulate {
            return Ok(Outcome::undefined(
                "not simulated: lambda1 is not one of `loads`",
            ));
        }
        if let Some(why) = &task.overload {
            return Ok(Outcome::saturated_because(why.clone()));
        }
        let mc = topology(&task)?;
        check_memory(&task, &mc)?;
        let c = run(&task.sc, &mc, &mc, &mc, &mc, ctx)?;
        let o = outcome(&task, &c)?;
        if c.finish != Finish::Completed {
            return Ok(o);
        }
        if let (Some(max), Some(l)) = (task.max_rel_hw, o.metrics.get("latency")) {
            let hw = l.half_width.unwrap_or(f64::INFINITY);
            if hw > max * l.value {
                return Ok(Outcome::undefined(format!(
                    "not a steady point (stop rule, max_rel_half_width {max}): latency {:.4} ± {:.4} ({:.1} % of the mean)",
                    l.value,
                    hw,
                    100.0 * hw / l.value
                )));
            }
        }
        Ok(with_utilisations(o, &mc, &c))
    }
}

/// The speed benchmark (`benches/fattree.rs`): the Wu ch.4 256-node system
/// (16 clusters of 4-port 3-trees) at `lambda1` (Poisson), `msgs`
/// delivered messages. Returns (cycles, stepped cycles, flit-hops).
pub fn bench_run(lambda: f64, omega: u32, msgs: u64) -> Result<(u64, u64, u64), SolveError> {
    let params = serde_json::json!({
        "m": 4, "n": 3, "C": 16, "omega": omega, "Lf": 512,
        "lambda1": lambda, "source": "poisson", "xi": 0.5, "eta_in": 0.6,
        "warmup": 0, "batches": 10, "batch_len": msgs / 10,
    });
    let ctx = TaskContext::new(1, crate::Fidelity::Full);
    let task = validate(&params, &ctx)?;
    let (c, _) = simulate(&task, &ctx)?;
    if c.finish != Finish::Completed {
        return Err(SolveError::Numerical(format!("{:?}", c.finish)));
    }
    Ok((c.cycles, c.stepped_cycles, c.channel_flits.iter().sum()))
}

#[cfg(test)]
#[path = "sim_tests.rs"]
mod tests;
