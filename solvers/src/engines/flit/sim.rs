//! The cycle loop of the flit engine: state in flat arrays, messages in a
//! pool with a free list, flits and credits in flight in a timing wheel.
//!
//! Conventions (docs/models/torus.md, "Simulator"):
//! - A message generated during cycle g (continuous-time sources: g = the
//!   integer part of its time) can send its header at cycle g + 1 at the
//!   earliest: that cycle is the PE-to-router injection channel.
//! - A flit sent on a channel in cycle c lands in cycle c + latency; a flit
//!   landing at its destination is ejected at once. Latency = landing cycle of
//!   the tail − g, so an unblocked message over d hops of 1-cycle links takes
//!   exactly ω + d cycles. Real-valued latencies and flit periods
//!   ([`LinkTiming`]) keep each channel's virtual start time and round
//!   landings up to the clock; with period 1 and whole latencies that path
//!   is skipped and nothing changes.
//! - A VC holds one message at a time (atomic VC allocation): an output VC is
//!   free when no message owns it and the downstream buffer is empty, the
//!   assumption under which Duato's theorem guarantees deadlock freedom.
//! - Each output channel sends at most one flit per cycle, round robin over
//!   its VCs that have a flit and a credit. Input VCs are not otherwise
//!   restricted (the 5V-way crossbar of Wu Fig 3.1b).

use super::torus::below;
use super::{Destinations, Injection, LinkTiming, Routing, Scenario, Source, Topology};
use crate::des::{ci95, Stream};
use crate::traffic::sources::{ArrivalSource, Mmpp2Source, PoissonSource};
use crate::{SolveError, TaskContext};
use std::collections::VecDeque;

const NONE: u32 = u32::MAX;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Finish {
    /// All batches collected.
    Completed,
    /// Source backlog beyond the limit, or the cycle budget spent first.
    Saturated(String),
    /// No flit moved for `stall_cycles` while flits were in the network.
    Stalled { cycle: u64, flits_in_network: u64 },
}

/// What a run measured. Per-batch vectors hold one value per completed batch.
#[derive(Debug, Clone)]
pub struct Counters {
    pub finish: Finish,
    /// Mean latency (generation to tail landing) of each batch.
    pub latency: Vec<f64>,
    /// Mean network latency (header leaving the source, counted from the
    /// injection-channel cycle, to tail landing) of each batch.
    pub network_latency: Vec<f64>,
    pub hops: Vec<f64>,
    /// Delivered flits per node per cycle in each batch.
    pub throughput: Vec<f64>,
    /// Cycles simulated, warm-up included.
    pub cycles: u64,
    /// Cycles after the warm-up.
    pub measured_cycles: u64,
    /// Flits sent on each channel `(r * ports + p)` after the warm-up.
    pub channel_flits: Vec<u64>,
    // Whole-run accounting, warm-up included (conservation tests).
    pub msgs_generated: u64,
    pub msgs_delivered: u64,
    /// Messages at the sources that have not sent their header.
    pub msgs_waiting: u64,
    pub flits_injected: u64,
    pub flits_delivered: u64,
    /// Flits in buffers or on links at the end.
    pub flits_in_network: u64,
    /// Flits still at their sources, of messages that started injecting.
    pub flits_at_sources: u64,
}

impl Counters {
    /// (mean, 95% half-width) over batches.
    pub fn ci(v: &[f64]) -> (f64, f64) {
        ci95(v)
    }
}

#[derive(Debug, Clone, Copy)]
struct Msg {
    dst: u32,
    gen: u64,
    inject: u64,
    hops: u32,
}

enum Gen {
    Bernoulli(f64),
    Poisson(Vec<PoissonSource>),
    Mmpp(Vec<Mmpp2Source>),
}

/// Runs the network until `sc.run` is satisfied, the network saturates or
/// stalls. Errors on cancellation and on plug-ins that break their contract
/// (timing out of range, more nodes than routers).
pub fn run<T: Topology, R: Routing, L: LinkTiming, D: Destinations>(
    sc: &Scenario,
    topo: &T,
    routing: &R,
    timing: &L,
    dests: &D,
    ctx: &TaskContext,
) -> Result<Counters, SolveError> {
    let n_r = topo.routers();
    // Routers 0..n_src carry a processing element; the rest only switch.
    let n_src = dests.nodes() as usize;
    if n_src < 2 || n_src > n_r {
        return Err(SolveError::param(
            "destinations",
            format!("{n_src} nodes for {n_r} routers (need 2 ..= routers)"),
        ));
    }
    let ports = topo.ports();
    let v_n = sc.vcs;
    let buf = sc.buffer;
    let omega = sc.msg_len;
    let n_ch = n_r * ports;
    let n_ivc = n_ch * v_n; // network input VCs; injection VCs follow
    let n_inj = n_r * v_n;

    // Wiring: output VC o = (r * ports + p) * V + v feeds input VC down[o];
    // input VC i is fed by output VC up[i].
    let mut down = vec![NONE; n_ivc];
    let mut up = vec![NONE; n_ivc];
    let mut lat = vec![1.0f64; n_ch];
    let mut period = vec![1.0f64; n_ch];
    for r in 0..n_r as u32 {
        for p in 0..ports as u32 {
            let ch = r as usize * ports + p as usize;
            if let Some((r2, p2)) = topo.link(r, p) {
                for v in 0..v_n {
                    let o = ch * v_n + v;
                    let i = (r2 as usize * ports + p2 as usize) * v_n + v;
                    down[o] = i as u32;
                    up[i] = o as u32;
                }
                let (l, t) = (timing.latency(r, p), timing.period(r, p));
                if !(l.is_finite()
                    && l > 0.0
                    && l <= 1e6
                    && t.is_finite()
                    && (1.0..=1e6).contains(&t))
                {
                    return Err(SolveError::param(
                        "link timing",
                        format!(
                            "channel ({r}, {p}): latency {l} must lie in (0, 1e6] and period {t} in [1, 1e6] cycles"
                        ),
                    ));
                }
                lat[ch] = l;
                period[ch] = t;
            }
        }
    }
    // Whole latencies and one flit per cycle everywhere: no virtual times.
    let paced = lat.iter().any(|x| x.fract() != 0.0) || period.iter().any(|&t| t != 1.0);
    let lat_cycles: Vec<usize> = lat.iter().map(|x| (x.ceil() as usize).max(1)).collect();
    // Paced: a landing is at most ⌈latency⌉ + 1 cycles ahead.
    let wheel_len = lat_cycles.iter().copied().max().unwrap_or(1) + if paced { 2 } else { 1 };
    // Virtual start of each channel's next flit (paced only).
    let mut ready = vec![0.0f64; if paced { n_ch } else { 0 }];
    let ivc_router: Vec<u32> = (0..n_ivc).map(|i| (i / (ports * v_n)) as u32).collect();

    // Input VC state: network VCs 0..n_ivc with a ring buffer each, then
    // injection VCs n_ivc..n_ivc + n_inj holding the message being sent.
    let mut fl = vec![0u32; n_ivc * buf]; // flit = msg << 2 | head << 1 | tail
    let mut fl_head = vec![0u32; n_ivc];
    let mut fl_len = vec![0u32; n_ivc];
    let mut alloc = vec![NONE; n_ivc + n_inj];
    let mut inj_msg = vec![NONE; n_inj];
    let mut inj_left = vec![0u32; n_inj];
    // Output VC state.
    let mut owner = vec![NONE; n_ch * v_n];
    let mut credits = vec![buf as u32; n_ch * v_n];
    let mut rr = vec![0u32; n_ch];
    // Work per router: flits in its network input buffers + messages at its
    // source (waiting or being injected). Routers with none are skipped.
    let mut work = vec![0u64; n_r];
    // Headers waiting for an output VC per router, messages queued at each
    // router's source, owned output VCs per channel: the loops below skip
    // what has nothing to do.
    let mut hdr_wait = vec![0u32; n_r];
    let mut queued = vec![0u32; n_r];
    let mut owned = vec![0u32; n_ch];

    let queues = match sc.injection {
        Injection::PerVc => n_inj,
        Injection::Shared => n_r,
    };
    let mut queue: Vec<VecDeque<u32>> = vec![VecDeque::new(); queues];
    let mut msgs: Vec<Msg> = Vec::with_capacity(1024);
    let mut free_msgs: Vec<u32> = Vec::new();

    let mut wheel: Vec<Vec<(u32, u32)>> = vec![Vec::new(); wheel_len];
    let mut credit_now: Vec<u32> = Vec::new();
    let mut credit_next: Vec<u32> = Vec::new();

    let mut rng = Stream::new(sc.seed, 0);
    let mut gen = match sc.source {
        Source::Bernoulli { p } => Gen::Bernoulli(p),
        Source::Poisson { rate } => Gen::Poisson(
            (0..n_src)
                .map(|i| PoissonSource::new(rate, Stream::new(sc.seed, 1 + i as u64)))
                .collect::<Result<_, _>>()?,
        ),
        Source::Mmpp {
            phi1,
            phi2,
            lambda1,
            lambda2,
        } => Gen::Mmpp(
            (0..n_src)
                .map(|i| {
                    Mmpp2Source::new(
                        phi1,
                        phi2,
                        lambda1,
                        lambda2,
                        Stream::new(sc.seed, 1 + i as u64),
                    )
                })
                .collect::<Result<_, _>>()?,
        ),
    };
    // Next generation time of each node (Bernoulli: integer cycles).
    let mut next_t: Vec<f64> = match &mut gen {
        Gen::Bernoulli(p) => (0..n_src).map(|_| (rng.geometric(*p) - 1) as f64).collect(),
        Gen::Poisson(s) => s.iter_mut().map(|x| x.next_arrival()).collect(),
        Gen::Mmpp(s) => s.iter_mut().map(|x| x.next_arrival()).collect(),
    };

    let mut c = Counters {
        finish: Finish::Completed,
        latency: Vec::new(),
        network_latency: Vec::new(),
        hops: Vec::new(),
        throughput: Vec::new(),
        cycles: 0,
        measured_cycles: 0,
        channel_flits: vec![0; n_ch],
        msgs_generated: 0,
        msgs_delivered: 0,
        msgs_waiting: 0,
        flits_injected: 0,
        flits_delivered: 0,
        flits_in_network: 0,
        flits_at_sources: 0,
    };
    let mut ch_flits = vec![0u64; n_ch];
    let mut ch_flits_at_warm = vec![0u64; n_ch];
    let mut warm_done = sc.run.warmup == 0;
    let mut warm_count = 0u64;
    let mut warm_cycle = 0u64;
    // Current batch.
    let (mut b_n, mut b_lat, mut b_net, mut b_hops, mut b_flits, mut b_start) =
        (0u64, 0.0f64, 0.0f64, 0.0f64, 0u64, 0u64);
    let mut last_progress = 0u64;
    let mut in_net = 0u64;
    let mut order_rot = 0usize;
    let n_in = ports * v_n + v_n; // input VCs per router

    let mut next_min = next_t.iter().copied().fold(f64::INFINITY, f64::min);
    let mut cycle: u64 = 0;
    loop {
        // Every 64 cycles: one cycle of a 64×64 torus takes about half a
        // millisecond, and an atomic load is nothing beside a cycle.
        if cycle & 0x3F == 0 {
            ctx.check_cancel()?;
        }
        // Phase 1a: credits sent last cycle.
        std::mem::swap(&mut credit_now, &mut credit_next);
        for &o in &credit_now {
            credits[o as usize] += 1;
        }
        credit_now.clear();
        // Phase 1b: flits landing now; those at their destination leave.
        let slot = (cycle % wheel_len as u64) as usize;
        let mut landing = std::mem::take(&mut wheel[slot]);
        for &(i, f) in &landing {
            let r = ivc_router[i as usize] as usize;
            let m = (f >> 2) as usize;
            if msgs[m].dst as usize == r {
                in_net -= 1;
                c.flits_delivered += 1;
                b_flits += 1;
                credit_next.push(up[i as usize]);
                if f & 1 == 1 {
                    let msg = msgs[m];
                    c.msgs_delivered += 1;
                    free_msgs.push(m as u32);
                    if !warm_done {
                        warm_count += 1;
                        if warm_count >= sc.run.warmup {
                            warm_done = true;
                            warm_cycle = cycle;
                            ch_flits_at_warm.copy_from_slice(&ch_flits);
                            b_start = cycle;
                            b_flits = 0;
                        }
                    } else {
                        b_n += 1;
                        b_lat += (cycle - msg.gen) as f64;
                        b_net += (cycle + 1 - msg.inject) as f64;
                        b_hops += msg.hops as f64;
                        if b_n >= sc.run.batch_len {
                            let span = (cycle + 1 - b_start).max(1) as f64;
                            c.latency.push(b_lat / b_n as f64);
                            c.network_latency.push(b_net / b_n as f64);
                            c.hops.push(b_hops / b_n as f64);
                            c.throughput.push(b_flits as f64 / (n_src as f64 * span));
                            b_n = 0;
                            b_lat = 0.0;
                            b_net = 0.0;
                            b_hops = 0.0;
                            b_flits = 0;
                            b_start = cycle + 1;
                        }
                    }
                }
            } else {
                let at = i as usize;
                let mut pos = (fl_head[at] + fl_len[at]) as usize;
                if pos >= buf {
                    pos -= buf;
                }
                fl[at * buf + pos] = f;
                if fl_len[at] == 0 && alloc[at] == NONE {
                    hdr_wait[r] += 1;
                }
                fl_len[at] += 1;
                work[r] += 1;
            }
        }
        landing.clear();
        wheel[slot] = landing;
        if c.latency.len() >= sc.run.batches as usize {
            break;
        }
        // Generation: messages generated before this cycle start.
        let now = cycle as f64;
        if now > next_min {
            next_min = f64::INFINITY;
            for n in 0..n_src {
                while next_t[n] < now {
                    let g = next_t[n].floor() as u64;
                    let dst = dests.pick(n as u32, &mut rng);
                    debug_assert!(dst as usize != n && (dst as usize) < n_src);
                    let msg = Msg {
                        dst,
                        gen: g,
                        inject: 0,
                        hops: 0,
                    };
                    let id = match free_msgs.pop() {
                        Some(id) => {
                            msgs[id as usize] = msg;
                            id
                        }
                        None => {
                            msgs.push(msg);
                            (msgs.len() - 1) as u32
                        }
                    };
                    let q = match sc.injection {
                        Injection::PerVc => n * v_n + below(&mut rng, v_n),
                        Injection::Shared => n,
                    };
                    queue[q].push_back(id);
                    c.msgs_generated += 1;
                    c.msgs_waiting += 1;
                    work[n] += 1;
                    queued[n] += 1;
                    next_t[n] = match &mut gen {
                        Gen::Bernoulli(p) => next_t[n] + rng.geometric(*p) as f64,
                        Gen::Poisson(s) => s[n].next_arrival(),
                        Gen::Mmpp(s) => s[n].next_arrival(),
                    };
                }
                next_min = next_min.min(next_t[n]);
            }
        }
        if c.msgs_waiting > sc.backlog_limit {
            c.finish = Finish::Saturated(format!(
                "{} messages waiting at the sources at cycle {cycle} (limit {})",
                c.msgs_waiting, sc.backlog_limit
            ));
            break;
        }
        if cycle >= sc.max_cycles {
            c.finish = Finish::Saturated(format!(
                "cycle budget {} spent with {} of {} batches",
                sc.max_cycles,
                c.latency.len(),
                sc.run.batches
            ));
            break;
        }
        // Phase 2: per router, VC allocation then one flit per output channel.
        order_rot += 1;
        if order_rot == n_in {
            order_rot = 0;
        }
        let mut moved = false;
        for r in 0..n_r {
            if work[r] == 0 {
                continue;
            }
            let r32 = r as u32;
            let ivc0 = r * ports * v_n;
            // Idle injection VCs take their next message.
            for v in 0..v_n {
                if queued[r] == 0 {
                    break;
                }
                let j = r * v_n + v;
                if inj_msg[j] == NONE {
                    let q = match sc.injection {
                        Injection::PerVc => j,
                        Injection::Shared => r,
                    };
                    if let Some(m) = queue[q].pop_front() {
                        inj_msg[j] = m;
                        inj_left[j] = omega;
                        queued[r] -= 1;
                        hdr_wait[r] += 1;
                    }
                }
            }
            // VC allocation for waiting headers, starting at a rotating VC.
            // Stop once every waiting header has been seen (no division in
            // the index: this loop is the engine's hottest).
            let mut seen = 0;
            let waiting = hdr_wait[r];
            let mut k = order_rot;
            for _ in 0..n_in {
                if seen >= waiting {
                    break;
                }
                let kk = k;
                k += 1;
                if k == n_in {
                    k = 0;
                }
                let k = kk;
                let (i, m, is_head) = if k < ports * v_n {
                    let i = ivc0 + k;
                    if alloc[i] != NONE || fl_len[i] == 0 {
                        continue;
                    }
                    let f = fl[i * buf + fl_head[i] as usize];
                    (i, (f >> 2) as usize, f & 2 != 0)
                } else {
                    let j = r * v_n + (k - ports * v_n);
                    let i = n_ivc + j;
                    if alloc[i] != NONE || inj_msg[j] == NONE {
                        continue;
                    }
                    (i, inj_msg[j] as usize, inj_left[j] == omega)
                };
                debug_assert!(is_head);
                if !is_head {
                    continue;
                }
                seen += 1;
                let chosen = routing.route(r32, msgs[m].dst, &mut rng, |p, v| {
                    let o = (r * ports + p as usize) * v_n + v as usize;
                    owner[o] == NONE && credits[o] == buf as u32
                });
                if let Some((p, v)) = chosen {
                    let o = (r * ports + p as usize) * v_n + v as usize;
                    owner[o] = i as u32;
                    alloc[i] = o as u32;
                    owned[r * ports + p as usize] += 1;
                    hdr_wait[r] -= 1;
                }
            }
            // Switch traversal: one flit per output channel.
            for p in 0..ports {
                let ch = r * ports + p;
                if owned[ch] == 0 || (paced && ready[ch] >= cycle as f64 + 1.0) {
                    continue;
                }
                let start = rr[ch] as usize;
                for s in 0..v_n {
                    let v = if start + s >= v_n {
                        start + s - v_n
                    } else {
                        start + s
                    };
                    let o = ch * v_n + v;
                    let i = owner[o];
                    if i == NONE || credits[o] == 0 {
                        continue;
                    }
                    let i = i as usize;
                    let f = if i < n_ivc {
                        if fl_len[i] == 0 {
                            continue;
                        }
                        let f = fl[i * buf + fl_head[i] as usize];
                        fl_head[i] = if fl_head[i] + 1 == buf as u32 {
                            0
                        } else {
                            fl_head[i] + 1
                        };
                        fl_len[i] -= 1;
                        work[r] -= 1;
                        credit_next.push(up[i]);
                        f
                    } else {
                        let j = i - n_ivc;
                        let m = inj_msg[j];
                        let left = inj_left[j];
                        let head = left == omega;
                        let tail = left == 1;
                        if head {
                            msgs[m as usize].inject = cycle;
                            c.msgs_waiting -= 1;
                        }
                        c.flits_injected += 1;
                        in_net += 1;
                        inj_left[j] = left - 1;
                        if tail {
                            inj_msg[j] = NONE;
                            work[r] -= 1;
                        }
                        (m << 2) | (u32::from(head) << 1) | u32::from(tail)
                    };
                    credits[o] -= 1;
                    let ahead = if paced {
                        let s = ready[ch].max(cycle as f64);
                        ready[ch] = s + period[ch];
                        (((s + lat[ch]).ceil() as u64).saturating_sub(cycle) as usize).max(1)
                    } else {
                        lat_cycles[ch]
                    };
                    let mut when = slot + ahead;
                    if when >= wheel_len {
                        when -= wheel_len;
                    }
                    wheel[when].push((down[o], f));
                    ch_flits[ch] += 1;
                    if f & 2 != 0 {
                        msgs[(f >> 2) as usize].hops += 1;
                    }
                    if f & 1 != 0 {
                        owner[o] = NONE;
                        alloc[i] = NONE;
                        owned[ch] -= 1;
                        // The next message's header, if already here, waits.
                        if i < n_ivc && fl_len[i] > 0 {
                            hdr_wait[r] += 1;
                        }
                    }
                    rr[ch] = if v + 1 == v_n { 0 } else { v as u32 + 1 };
                    moved = true;
                    break;
                }
            }
        }
        if moved || in_net == 0 {
            last_progress = cycle;
        } else if cycle - last_progress > sc.stall_cycles {
            c.finish = Finish::Stalled {
                cycle,
                flits_in_network: in_net,
            };
            break;
        }
        cycle += 1;
    }
    c.cycles = cycle + 1;
    if warm_done {
        c.measured_cycles = c.cycles - warm_cycle;
        for (x, (a, b)) in c
            .channel_flits
            .iter_mut()
            .zip(ch_flits.iter().zip(&ch_flits_at_warm))
        {
            *x = a - b;
        }
    }
    c.flits_in_network = in_net;
    c.flits_at_sources = inj_left
        .iter()
        .filter(|&&x| x < omega)
        .map(|&x| x as u64)
        .sum();
    Ok(c)
}
