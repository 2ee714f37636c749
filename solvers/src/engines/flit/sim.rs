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

#[path = "relay.rs"]
mod relay;

use super::batch::Batches;
use super::torus::below;
use super::worm;
use super::{Destinations, Injection, Leg, LinkTiming, Routing, Scenario, Source, Topology};
use crate::des::{ci95, Stream};
use crate::traffic::sources::{ArrivalSource, Mmpp2Source, PoissonSource};
use crate::{SolveError, TaskContext};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub(super) const NONE: u32 = u32::MAX;

/// The next landing of a scheduled leg at its target: cycle, send cycle,
/// channel (the wheel's order within a cycle) and the leg.
type LegLanding = (u64, u64, u32, u32);

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

impl Finish {
    /// What a solver reports for a run that did not complete: `Ok(None)`
    /// when it completed, `Ok(Some(saturated, with the reason as note))`, or
    /// the deadlock error naming the stall window (`stall_cycles`).
    pub fn unfinished(&self, stall_cycles: u64) -> Result<Option<crate::Outcome>, SolveError> {
        match self {
            Finish::Completed => Ok(None),
            Finish::Saturated(why) => Ok(Some(crate::Outcome::saturated_because(why.clone()))),
            Finish::Stalled {
                cycle,
                flits_in_network,
            } => Err(SolveError::Numerical(format!(
                "deadlock: no flit moved for {stall_cycles} cycles up to cycle {cycle} with {flits_in_network} flits in the network"
            ))),
        }
    }
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
    /// Flits absorbed by relays (re-injected from there: they count again
    /// in `flits_injected`).
    pub flits_relayed: u64,
    /// Per batch, per group ([`Destinations::groups`]): latency sum and
    /// message count (empty with one group).
    pub group_latency: Vec<Vec<(f64, u64)>>,
    /// Per batch, per group: the sum of the source waits (generation to the
    /// header leaving its node: latency minus network latency) of the
    /// messages counted in `group_latency`.
    pub group_wait: Vec<Vec<f64>>,
    /// Per batch, per relay slot: sum of the waits in the relay FIFO (header
    /// landing, or tail landing when store-and-forward, to the header
    /// leaving the relay) and their count.
    pub relay_wait: Vec<Vec<(f64, u64)>>,
    /// Per relay slot: the longest FIFO (messages queued, not in service).
    pub relay_max_queue: Vec<u64>,
    /// Cycles actually stepped (the rest were skipped: nothing could move).
    pub stepped_cycles: u64,
}

impl Counters {
    /// Empty counters of a run with `n_ch` channels and `n_slots` relay
    /// statistic slots.
    pub(super) fn new(n_ch: usize, n_slots: usize) -> Counters {
        Counters {
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
            flits_relayed: 0,
            group_latency: Vec::new(),
            group_wait: Vec::new(),
            relay_wait: Vec::new(),
            relay_max_queue: vec![0; n_slots],
            stepped_cycles: 0,
        }
    }

    /// (mean, 95% half-width) over batches.
    pub fn ci(v: &[f64]) -> (f64, f64) {
        ci95(v)
    }
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Msg {
    /// Target of the current leg.
    pub(super) dst: u32,
    pub(super) tag: u32,
    pub(super) group: u32,
    pub(super) aux: u32,
    pub(super) gen: u64,
    pub(super) inject: u64,
    pub(super) hops: u32,
    /// Relays still absorbing this message's flits (NONE = free slot) and
    /// the flits landed at each: a relay injects only flits that landed. A
    /// long message may span two relays at once (a concentrator and the
    /// dispatcher after it); a third at once is refused.
    rel: [u32; 2],
    got: [u32; 2],
    /// Whether the flits landing at each relay come from a scheduled leg
    /// (counted from its landing cycles, `relay::flits_here`).
    lazy_in: [bool; 2],
    /// Legs started (0 until the header leaves the node).
    pub(super) legs: u16,
    /// When it joined a relay's FIFO.
    enq: u64,
}

/// Bytes of one pooled message and of the largest per-node generator
/// (`bounds::state_bytes`).
pub(super) const MSG_BYTES: usize = std::mem::size_of::<Msg>();
pub(super) const GEN_BYTES: usize = {
    let (a, b, c) = (
        std::mem::size_of::<super::onoff::OnOff>(),
        std::mem::size_of::<PoissonSource>(),
        std::mem::size_of::<Mmpp2Source>(),
    );
    let ab = if a > b { a } else { b };
    if ab > c {
        ab
    } else {
        c
    }
};

/// The message sources of every node.
pub(super) enum Gen {
    Bernoulli(f64),
    OnOff(Vec<super::onoff::OnOff>),
    Poisson(Vec<PoissonSource>),
    Mmpp(Vec<Mmpp2Source>),
}

impl Msg {
    /// A message generated in cycle `gen` whose first leg is `leg`.
    pub(super) fn new(leg: &Leg, gen: u64) -> Msg {
        Msg {
            dst: leg.dst,
            tag: leg.tag,
            group: leg.group,
            aux: leg.aux,
            gen,
            inject: 0,
            hops: 0,
            rel: [NONE; 2],
            got: [0; 2],
            lazy_in: [false; 2],
            legs: 0,
            enq: 0,
        }
    }
}

impl Gen {
    /// The sources of nodes `0..n_src` and the time of each one's first
    /// message (Bernoulli: integer cycles; the draws come from `rng`).
    pub(super) fn new<D: Destinations>(
        sc: &Scenario,
        dests: &D,
        n_src: usize,
        rng: &mut Stream,
    ) -> Result<(Gen, Vec<f64>), SolveError> {
        let mut gen = match sc.source {
            Source::Bernoulli { p } => Gen::Bernoulli(p),
            Source::Poisson { rate } => Gen::Poisson(
                (0..n_src)
                    .map(|i| {
                        let s = dests.rate_scale(i as u32);
                        PoissonSource::new(rate * s, Stream::new(sc.seed, 1 + i as u64))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Source::Mmpp {
                phi1,
                phi2,
                lambda1,
                lambda2,
            } if lambda2 == 0.0 && lambda1 > 0.0 => {
                crate::traffic::mmpp::Mmpp2::new(phi1, phi2, lambda1, lambda2)?;
                Gen::OnOff(
                    (0..n_src)
                        .map(|i| {
                            let s = dests.rate_scale(i as u32);
                            super::onoff::OnOff::new(
                                phi1,
                                phi2,
                                lambda1 * s,
                                Stream::new(sc.seed, 1 + i as u64),
                            )
                        })
                        .collect(),
                )
            }
            Source::Mmpp {
                phi1,
                phi2,
                lambda1,
                lambda2,
            } => Gen::Mmpp(
                (0..n_src)
                    .map(|i| {
                        let s = dests.rate_scale(i as u32);
                        Mmpp2Source::new(
                            phi1,
                            phi2,
                            lambda1 * s,
                            lambda2 * s,
                            Stream::new(sc.seed, 1 + i as u64),
                        )
                    })
                    .collect::<Result<_, _>>()?,
            ),
        };
        // Next generation time of each node (Bernoulli: integer cycles).
        let next_t: Vec<f64> = match &mut gen {
            Gen::Bernoulli(p) => {
                if (0..n_src as u32).any(|i| dests.rate_scale(i) != 1.0) {
                    return Err(SolveError::param(
                        "source",
                        "per-node rate scaling needs a Poisson or MMPP source",
                    ));
                }
                (0..n_src).map(|_| (rng.geometric(*p) - 1) as f64).collect()
            }
            Gen::Poisson(s) => s.iter_mut().map(|x| x.next_arrival()).collect(),
            Gen::Mmpp(s) => s.iter_mut().map(|x| x.next_arrival()).collect(),
            Gen::OnOff(s) => s.iter_mut().map(|x| x.next_arrival()).collect(),
        };
        Ok((gen, next_t))
    }

    /// The time of node `n`'s message after the one at `t`.
    #[inline]
    pub(super) fn next(&mut self, n: usize, t: f64, rng: &mut Stream) -> f64 {
        match self {
            Gen::Bernoulli(p) => t + rng.geometric(*p) as f64,
            Gen::Poisson(s) => s[n].next_arrival(),
            Gen::Mmpp(s) => s[n].next_arrival(),
            Gen::OnOff(s) => s[n].next_arrival(),
        }
    }
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
    run_with(sc, topo, routing, timing, dests, ctx, Mode::DEFAULT)
}

/// The channel layout of a run: router r's ports are channels `base[r] ..
/// base[r + 1]`, output VC o = channel · V + v feeds input VC `down[o]`,
/// input VC i is fed by output VC `up[i]` (`NONE`: no link).
pub(super) struct Wiring {
    pub(super) n_r: usize,
    /// Routers `0..n_src` carry a processing element.
    pub(super) n_src: usize,
    pub(super) base: Vec<usize>,
    pub(super) down: Vec<u32>,
    pub(super) up: Vec<u32>,
    /// VCs per channel and injection VCs per router.
    pub(super) v_n: usize,
    pub(super) inj_per: usize,
}

/// Which of the general loop's shortcuts a run takes (all by default; the
/// tests turn them off one by one and compare every counter).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mode {
    /// Networks of unit channels stay on this loop instead of `unit.rs`'s.
    pub(crate) general: bool,
    /// Legs are advanced per message once their header is at the leg's
    /// target (`worm.rs`), instead of every flit one by one.
    pub(crate) worms: bool,
    /// With `worms`, on a routing with fixed paths: a leg whose buffers
    /// hold fewer than ω flits together moves as a train (`worm::Train`),
    /// the flits behind its header scheduled when the header lands.
    pub(crate) trains: bool,
    /// Cycles in which nothing is due are jumped over while messages exist.
    pub(crate) jumps: bool,
}

impl Mode {
    pub(crate) const DEFAULT: Mode = Mode {
        general: false,
        worms: true,
        trains: true,
        jumps: true,
    };
}

/// [`run`] with the shortcuts of `mode`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_with<T: Topology, R: Routing, L: LinkTiming, D: Destinations>(
    sc: &Scenario,
    topo: &T,
    routing: &R,
    timing: &L,
    dests: &D,
    ctx: &TaskContext,
    mode: Mode,
) -> Result<Counters, SolveError> {
    let Mode {
        general,
        worms,
        trains: trains_mode,
        jumps,
    } = mode;
    let n_r = topo.routers();
    // Routers 0..n_src carry a processing element; the rest only switch.
    let n_src = dests.nodes() as usize;
    if n_src < 2 || n_src > n_r {
        return Err(SolveError::param(
            "destinations",
            format!("{n_src} nodes for {n_r} routers (need 2 ..= routers)"),
        ));
    }
    // Channel layout: router r's ports are channels base[r] .. base[r + 1].
    let mut base = Vec::with_capacity(n_r + 1);
    base.push(0usize);
    for r in 0..n_r as u32 {
        let p = topo.ports_of(r);
        base.push(base[r as usize] + p);
    }
    let v_n = sc.vcs;
    if !(1..=64).contains(&v_n) {
        return Err(SolveError::param(
            "vcs",
            format!("{v_n} virtual channels per port (need 1 ..= 64)"),
        ));
    }
    let buf = sc.buffer;
    let omega = sc.msg_len;
    let n_ch = base[n_r];
    let n_ivc = n_ch * v_n; // network input VCs; injection VCs follow
                            // Injection VCs (and queues with PerVc / Classes) per router.
    let inj_per = match sc.injection {
        Injection::PerVc | Injection::Shared => v_n,
        Injection::Classes(k) => k,
    };
    if inj_per == 0 {
        return Err(SolveError::param("injection", "at least one class"));
    }
    let n_inj = n_r * inj_per;

    // Wiring: output VC o = (base[r] + p) * V + v feeds input VC down[o];
    // input VC i is fed by output VC up[i].
    let mut down = vec![NONE; n_ivc];
    let mut up = vec![NONE; n_ivc];
    let mut lat = vec![1.0f64; n_ch];
    let mut period = vec![1.0f64; n_ch];
    // Depth of the input buffer behind each output VC and of each input VC
    // (`Topology::buffer_of`; `buf` unless the plug-in deepens one).
    let mut cap_ov = vec![buf as u32; n_ch * v_n];
    let mut cap_iv = vec![buf as u32; n_ivc];
    for r in 0..n_r as u32 {
        for p in 0..(base[r as usize + 1] - base[r as usize]) as u32 {
            let ch = base[r as usize] + p as usize;
            if let Some((r2, p2)) = topo.link(r, p) {
                let r2u = r2 as usize;
                if r2u >= n_r || base[r2u] + p2 as usize >= base[r2u + 1] {
                    return Err(SolveError::param(
                        "topology",
                        format!(
                            "channel ({r}, {p}) leads to a port ({r2}, {p2}) that does not exist"
                        ),
                    ));
                }
                let depth = topo.buffer_of(r, p, buf, omega);
                if !(1..=1 << 20).contains(&depth) {
                    return Err(SolveError::param(
                        "topology",
                        format!("channel ({r}, {p}): a buffer of {depth} flits (need 1 ..= 2^20)"),
                    ));
                }
                for v in 0..v_n {
                    let o = ch * v_n + v;
                    let i = (base[r2u] + p2 as usize) * v_n + v;
                    cap_ov[o] = depth as u32;
                    cap_iv[i] = depth as u32;
                    if up[i] != NONE {
                        return Err(SolveError::param(
                            "topology",
                            format!("two channels enter input port ({r2}, {p2})"),
                        ));
                    }
                    down[o] = i as u32;
                    up[i] = o as u32;
                }
                let (l, t) = timing.timing(r, p);
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
    let uniform_buf = cap_iv.iter().all(|&d| d as usize == buf);
    if !general && !paced && uniform_buf && lat_cycles.iter().all(|&l| l == 1) && !dests.relays() {
        let w = Wiring {
            n_r,
            n_src,
            base,
            down,
            up,
            v_n,
            inj_per,
        };
        return super::unit::run(sc, w, routing, dests, ctx);
    }
    // Paced: a landing is at most ⌈latency⌉ + 1 cycles ahead.
    let wheel_len = lat_cycles.iter().copied().max().unwrap_or(1) + if paced { 2 } else { 1 };
    // Virtual start of each channel's next flit (paced only).
    let mut ready = vec![0.0f64; if paced { n_ch } else { 0 }];
    let mut ivc_router = vec![0u32; n_ivc];
    for r in 0..n_r {
        for x in &mut ivc_router[base[r] * v_n..base[r + 1] * v_n] {
            *x = r as u32;
        }
    }

    // Input VC state: network VCs 0..n_ivc with a ring buffer each, then
    // injection VCs n_ivc..n_ivc + n_inj holding the message being sent.
    // Input VC i's ring holds cap_iv[i] flits from fl[fl_off[i]].
    let mut fl_off = Vec::with_capacity(n_ivc);
    let mut fl_total = 0usize;
    for &d in &cap_iv {
        fl_off.push(fl_total);
        fl_total += d as usize;
    }
    let mut fl = vec![0u32; fl_total]; // flit = msg << 2 | head << 1 | tail
    let mut fl_head = vec![0u32; n_ivc];
    let mut fl_len = vec![0u32; n_ivc];
    let mut alloc = vec![NONE; n_ivc + n_inj];
    let mut inj_msg = vec![NONE; n_inj];
    let mut inj_left = vec![0u32; n_inj];
    // Output VC state.
    let mut owner = vec![NONE; n_ch * v_n];
    let mut credits = cap_ov.clone();
    let mut rr = vec![0u32; n_ch];
    // Work per router: flits in its network input buffers + messages at its
    // source (waiting or being injected). Routers with none are skipped.
    let mut work = vec![0u64; n_r];
    // Headers waiting for an output VC per router, messages queued at each
    // router's source, owned output VCs per channel: the loops below skip
    // what has nothing to do.
    let mut hdr_wait = vec![0u32; n_r];
    // The same as bit sets, so a router with many ports (a concentrator or
    // dispatcher has one per switch of its cluster) visits only what has
    // something: `hw` has a bit per input of each router in allocation
    // order (router r's inputs from bit base[r]·V + r·I: its network VCs,
    // then its I injection VCs), set while that input holds a header
    // waiting for an output VC; `ch_owned` a bit per channel with an owned
    // output VC.
    let mut hw = vec![0u64; (n_ivc + n_inj).div_ceil(64)];
    let mut ch_owned = vec![0u64; n_ch.div_ceil(64)];
    let mut queued = vec![0u32; n_r];
    // Owned output VCs of each channel as a bit set (bit v: VC v has an
    // owner), so switch traversal visits only those, in round-robin order.
    let mut owned = vec![0u64; n_ch];
    // Routers to visit this cycle (bit set, visited in index order) and next
    // cycle. A visit that changes nothing is skipped: a router is marked when
    // something reaches it (a flit lands, a credit returns, a message is
    // queued), when its last visit left work for the next cycle, or, on paced
    // links, by a timer at the first cycle in which a channel that has a flit
    // and a credit may start it. A router left unmarked would change nothing
    // if visited (its state is the one its last visit left, and every step of
    // a visit depends only on that state and on the pacing times), so the
    // results are those of visiting every router with work every cycle.
    let words = n_r.div_ceil(64);
    let mut act = Marks::new(words);
    let mut act_next = Marks::new(words);
    // Paced timers: routers to mark in cycle t, at slot t mod len (a paced
    // channel's next start is at most ⌈period⌉ + 1 cycles ahead).
    let max_period = period.iter().copied().fold(1.0f64, f64::max);
    let timer_len = if paced {
        max_period.ceil() as usize + 3
    } else {
        1
    };
    let mut timers: Vec<Vec<u32>> = vec![Vec::new(); timer_len];

    let queues = sc.injection.queues(n_r, n_inj);
    // Queue a relay uses at router r (its class 0; no random draw).
    let relay_queue = |r: usize| match sc.injection {
        Injection::PerVc | Injection::Classes(_) => r * inj_per,
        Injection::Shared => r,
    };
    let cut_through = dests.cut_through();
    let n_groups = dests.groups().max(1);
    let n_slots = dests.relay_slots();
    // Built one by one: `vec![VecDeque::new(); n]` clones, which costs
    // about 80 instructions per queue (one queue per router and class).
    let mut queue: Vec<VecDeque<u32>> = (0..queues).map(|_| VecDeque::new()).collect();
    let mut msgs: Vec<Msg> = Vec::with_capacity(1024);
    let mut free_msgs: Vec<u32> = Vec::new();

    // A flit in flight: the input VC it lands in, the flit and the cycle
    // it was sent (scheduled legs' landings are merged by send cycle).
    let mut wheel: Vec<Vec<(u32, u32, u64)>> = vec![Vec::new(); wheel_len];
    let mut credit_now: Vec<u32> = Vec::new();
    let mut credit_next: Vec<u32> = Vec::new();

    let mut rng = Stream::new(sc.seed, 0);
    let (mut gen, next_t) = Gen::new(sc, dests, n_src, &mut rng)?;
    let mut arrivals = Arrivals::new(next_t);
    let mut c = Counters::new(n_ch, n_slots);
    let mut batches = Batches::new(sc, n_src, n_groups, n_slots, n_ch);
    let mut ch_flits = vec![0u64; n_ch];
    let mut last_progress = 0u64;
    let mut in_net = 0u64;
    let mut order_rot = 0usize;
    // Input VCs of the router with the most (the allocation order rotates
    // over these; routers with fewer take it modulo their own count).
    let n_in = (0..n_r)
        .map(|r| (base[r + 1] - base[r]) * v_n + inj_per)
        .max()
        .unwrap_or(1);

    // Legs advanced per message (worm.rs): with one VC per channel, and
    // when a scheduled leg cannot go quiet for a stall window (its gaps are
    // a few link times), the deadlock detector then sees the same progress.
    let max_lat = lat_cycles.iter().copied().max().unwrap_or(1) as u64;
    let buf_max = cap_iv.iter().copied().max().unwrap_or(buf as u32);
    let sched_on = worms
        && v_n == 1
        && sc.stall_cycles >= 4 * (buf_max as u64 + 2) * (max_period.ceil() as u64 + max_lat + 2);
    // The next landing at each scheduled leg's target (its flits land in
    // order): (cycle, send cycle, channel, leg); releases: (cycle, index
    // into `rels`).
    let mut ev_land: BinaryHeap<Reverse<LegLanding>> = BinaryHeap::new();
    let mut ev_rel: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    // Relays to visit in a given cycle, beyond the paced timers' reach: a
    // relay's injection VC waiting for a flit that a scheduled leg lands
    // there (those landings are no events): (cycle, router).
    let mut ev_wake: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    let mut rels: Vec<worm::Release> = Vec::new();
    let mut rels_free: Vec<u32> = Vec::new();
    // Scheduled legs still running (for the counter corrections), and
    // their last send (progress for the deadlock detector).
    let mut legs: Vec<Option<(worm::Leg, u64)>> = Vec::new();
    let mut legs_free: Vec<u32> = Vec::new();
    let mut legs_pool: Vec<worm::Leg> = Vec::new();
    let mut n_active = 0usize;
    // Input VCs whose landings a scheduled leg accounts for.
    let mut skipv = vec![false; if sched_on { n_ivc } else { 0 }];
    let mut gmap = vec![NONE; if sched_on { n_ivc } else { 0 }];
    // Landing cycles at a relay of a scheduled leg's flits, per message
    // and relay slot, with the relay and the message's generation cycle.
    let mut arr: Vec<Vec<f64>> = Vec::new();
    let mut arr_tag: Vec<(u32, u64)> = Vec::new();
    let mut cand: Vec<(u32, u32)> = Vec::new();
    let mut st_buf: Vec<worm::ChanState> = Vec::new();
    let mut infl: Vec<Vec<u64>> = Vec::new();
    let mut chain: Vec<u32> = Vec::new();
    let (mut s_buf, mut l_buf, mut c_buf) = (Vec::new(), Vec::new(), Vec::new());
    let mut src_buf: Vec<f64> = Vec::new();
    let mut warm_seen = batches.warm();
    // Legs moved as trains (worm::Train): per message its train (NONE:
    // none), the trains (an empty `chans`: a free slot) and their count.
    let trains_on = sched_on && trains_mode && routing.fixed_path();
    let mut trains: Vec<worm::Train> = Vec::new();
    let mut trains_free: Vec<u32> = Vec::new();
    let mut msg_train: Vec<u32> = Vec::new();
    let mut n_trains = 0usize;
    let mut path_rng = Stream::new(0, 0);
    let mut tm_buf: Vec<worm::ChanTiming> = Vec::new();
    let mut part_buf: Vec<f64> = Vec::new();
    // The sends made behind each active train's header before cycle `e`
    // (those before `e`, or at most `e` with `upto`), per channel, through
    // `$f(channel index, channel, count, last such send)`.
    macro_rules! train_sends {
        ($e:expr, $upto:expr, $f:expr) => {{
            let e = $e as f64;
            for tr in trains.iter().filter(|t| !t.chans.is_empty()) {
                tm_buf.clear();
                tm_buf.extend(tr.chans.iter().map(|&o| {
                    let o = o as usize;
                    worm::ChanTiming {
                        period: period[o],
                        latency: lat[o],
                        lat_cycles: lat_cycles[o] as u64,
                        buf: cap_ov[o],
                    }
                }));
                tr.partial_sends(omega, paced, &tm_buf, &mut part_buf);
                let w = omega as usize;
                for (j, &o) in tr.chans.iter().enumerate() {
                    let row = &part_buf[j * w + 1..(j + 1) * w];
                    let mut n = 0u64;
                    let mut last = f64::NEG_INFINITY;
                    for &x in row {
                        if x < e || ($upto && x == e) {
                            n += 1;
                            if x > last {
                                last = x;
                            }
                        }
                    }
                    ($f)(j, o as usize, n, last, tr.inj);
                }
            }
        }};
    }

    let mut next_min = arrivals.min();
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
            let r = ivc_router[o as usize] as usize;
            act.mark(r);
        }
        credit_now.clear();
        // Scheduled legs' releases due (after the credits: the tail's
        // credit is the last; a cycle skipped while idle counts as here).
        while let Some(&Reverse((t, x))) = ev_rel.peek() {
            if t > cycle {
                break;
            }
            ev_rel.pop();
            let rel = rels[x as usize];
            rels_free.push(x);
            match rel {
                worm::Release::Channel {
                    o,
                    ready: rd,
                    fed,
                    skip,
                    last,
                } => {
                    let o = o as usize;
                    owner[o] = NONE;
                    credits[o] = cap_ov[o];
                    if paced {
                        ready[o] = rd;
                    }
                    if fed != NONE {
                        alloc[fed as usize] = NONE;
                    }
                    if skip != NONE {
                        skipv[skip as usize] = false;
                    }
                    // Its router can act on the release only by allocating
                    // it to a waiting header (or a queued message's).
                    let r = ivc_router[o] as usize;
                    if hdr_wait[r] > 0 || queued[r] > 0 {
                        act.mark(r);
                    }
                    if last != NONE {
                        let (leg, s_last) = legs[last as usize].take().expect("active leg");
                        legs_free.push(last);
                        legs_pool.push(leg);
                        n_active -= 1;
                        last_progress = last_progress.max(s_last);
                    }
                }
                worm::Release::Source { inj } => {
                    let j = inj as usize;
                    alloc[n_ivc + j] = NONE;
                    inj_msg[j] = NONE;
                    inj_left[j] = 0;
                    let r = j / inj_per;
                    work[r] -= 1;
                    if queued[r] > 0 {
                        act.mark(r);
                    }
                }
            }
        }
        // Phase 1b: flits landing now; those at their destination leave,
        // merged with scheduled legs' landings at their targets in the
        // wheel's order (send cycle, then channel).
        let slot = (cycle % wheel_len as u64) as usize;
        let mut landing = std::mem::take(&mut wheel[slot]);
        let mut li = 0usize;
        loop {
            let next_ev = match ev_land.peek() {
                Some(&Reverse((l, s, ch, _))) if l == cycle => Some((s, ch)),
                _ => None,
            };
            // The landing's place in the wheel's order: send cycle, channel.
            let (i, f, key, scheduled) = match (landing.get(li), next_ev) {
                (None, None) => break,
                (Some(&(i, f, s)), ev) if ev.is_none_or(|e| e >= (s, up[i as usize])) => {
                    li += 1;
                    if sched_on && skipv[i as usize] {
                        continue;
                    }
                    (i, f, (s, up[i as usize]), false)
                }
                // A scheduled leg's tail lands: the flits before it landed
                // uncounted, and are counted now.
                (_, ev) => {
                    let Some(Reverse((_, _, _, id))) = ev_land.pop() else {
                        unreachable!("a landing was peeked")
                    };
                    let (leg, _) = legs[id as usize].as_mut().expect("active leg");
                    let t = leg.omega as usize - 1;
                    let n = (t - leg.next as usize) as u64;
                    leg.next = t as u32 + 1;
                    in_net -= n;
                    if leg.relay {
                        c.flits_relayed += n;
                        let m = leg.msg as usize;
                        let sl = relay::slot_of(&msgs[m], ivc_router[leg.target as usize]);
                        // (`got` may be ahead: read from the landing cycles.)
                        debug_assert!(msgs[m].got[sl] as usize <= t);
                        msgs[m].got[sl] = t as u32;
                    } else {
                        batches.flits(n, &mut c);
                    }
                    (leg.target, (leg.msg << 2) | 1, ev.expect("peeked"), true)
                }
            };
            let r = ivc_router[i as usize] as usize;
            act.mark(r);
            let m = (f >> 2) as usize;
            let r32 = r as u32;
            let slot = relay::slot_of(&msgs[m], r32);
            if msgs[m].dst == r32 || slot < 2 {
                if sched_on && f & 3 == 2 && msgs[m].dst == r32 {
                    cand.push((m as u32, i));
                }
                in_net -= 1;
                // A scheduled leg's last channel takes no credit: nothing
                // reads its count before its release (cycle landing + 1
                // for the tail), which sets it whole and marks its router.
                // Nor does a train's header (its release does the same).
                let silent = scheduled
                    || (trains_on && f & 2 != 0 && msg_train.get(m).is_some_and(|&t| t != NONE));
                if !silent {
                    credit_next.push(up[i as usize]);
                }
                let mut st = relay::RelayState {
                    queue: &mut queue,
                    work: &mut work,
                    queued: &mut queued,
                };
                if relay::land(
                    m,
                    r,
                    slot,
                    f,
                    relay_queue(r),
                    cycle,
                    cut_through,
                    &mut msgs,
                    dests,
                    &mut st,
                    &mut c,
                )? {
                    continue;
                }
                batches.flit(&mut c);
                if f & 1 == 1 {
                    free_msgs.push(m as u32);
                    if batches.ends_next() {
                        // The warm-up or a batch ends: the flits of scheduled
                        // legs that landed before this one count in it.
                        for (leg, _) in legs.iter_mut().flatten() {
                            if !leg.relay {
                                let n = leg.landed_before(cycle, key.0, key.1);
                                leg.next += n;
                                in_net -= n as u64;
                                batches.flits(n as u64, &mut c);
                            }
                        }
                    }
                    batches.message(&msgs[m], cycle, &ch_flits, &mut c);
                    if !warm_seen && batches.warm() {
                        // The snapshot counts sends made before this cycle.
                        warm_seen = true;
                        for (leg, _) in legs.iter().flatten() {
                            for (j, &o) in leg.chans.iter().enumerate() {
                                batches.warm_sub(o as usize, leg.due_from(j, cycle));
                            }
                        }
                        // Trains: the sends behind their headers made so far.
                        if n_trains > 0 {
                            train_sends!(cycle, false, |_, o, n, _, _| batches.warm_add(o, n));
                        }
                    }
                }
            } else {
                let at = i as usize;
                let mut pos = fl_head[at] + fl_len[at];
                if pos >= cap_iv[at] {
                    pos -= cap_iv[at];
                }
                fl[fl_off[at] + pos as usize] = f;
                if fl_len[at] == 0 && alloc[at] == NONE {
                    hdr_wait[r] += 1;
                    set_bit(&mut hw, at + r * inj_per);
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
        // Legs whose header reached the leg's target this cycle: advanced
        // per message from here on (worm.rs).
        for (m, it) in cand.drain(..) {
            let mu = m as usize;
            let tid = if trains_on {
                msg_train.get(mu).copied().unwrap_or(NONE)
            } else {
                NONE
            };
            let (inj, h, w) = if tid != NONE {
                // A train: its header is here, every flit behind it is
                // still to be scheduled, from the leg's start.
                let tr = &trains[tid as usize];
                chain.clear();
                chain.extend_from_slice(&tr.chans);
                let h = chain.len();
                debug_assert!(tr.reached as usize == h && down[chain[h - 1] as usize] == it);
                st_buf.clear();
                for (j, &o) in chain.iter().enumerate() {
                    let o = o as usize;
                    st_buf.push(worm::ChanState {
                        sent: 1,
                        returned: 0,
                        pending: 0,
                        landed: 1,
                        ready: if paced { ready[o] } else { 0.0 },
                        first: tr.hsend[j] + 1.0,
                        period: period[o],
                        latency: lat[o],
                        lat_cycles: lat_cycles[o] as u64,
                        buf: cap_ov[o],
                    });
                }
                worm::schedule_train(
                    tr,
                    omega,
                    paced,
                    &mut st_buf,
                    &mut s_buf,
                    &mut l_buf,
                    &mut c_buf,
                );
                let inj = tr.inj;
                trains[tid as usize].chans.clear();
                trains_free.push(tid);
                msg_train[mu] = NONE;
                n_trains -= 1;
                (inj, h, omega as usize)
            } else {
                // The channels back to the injection VC that still sends this
                // message (none of them released: its tail is at the source).
                chain.clear();
                let mut i = it as usize;
                let inj = loop {
                    let o = up[i];
                    if o == NONE || owner[o as usize] == NONE {
                        break NONE;
                    }
                    chain.push(o);
                    let own = owner[o as usize] as usize;
                    if own >= n_ivc {
                        break (own - n_ivc) as u32;
                    }
                    i = own;
                };
                if inj == NONE || inj_msg[inj as usize] != m {
                    continue;
                }
                chain.reverse();
                let h = chain.len();
                let o0 = chain[0] as usize;
                let r0 = ivc_router[o0];
                let mu = m as usize;
                // Where the source's flits come from: all there, or landing at
                // this relay from a scheduled earlier leg.
                let here = relay::flits_here(&mut msgs, mu, r0, omega, cycle, &arr);
                let (got, from) = if here == omega {
                    (omega, NONE)
                } else {
                    let s = relay::slot_of(&msgs[mu], r0);
                    let key = mu * 2 + s;
                    if s < 2 && arr_tag.get(key) == Some(&(r0, msgs[mu].gen)) {
                        (here, key as u32)
                    } else {
                        continue;
                    }
                };
                // In flight on the leg's channels: their landing cycles.
                if infl.len() < h {
                    infl.resize(h, Vec::new());
                }
                for (j, &o) in chain.iter().enumerate() {
                    gmap[down[o as usize] as usize] = j as u32;
                    infl[j].clear();
                }
                for (x, list) in wheel.iter().enumerate() {
                    let off = (x + wheel_len - slot) % wheel_len;
                    for &(iv, _, _) in list {
                        let j = gmap[iv as usize];
                        if j != NONE {
                            infl[j as usize].push(cycle + off as u64);
                        }
                    }
                }
                st_buf.clear();
                let mut sent = omega - inj_left[inj as usize];
                let mut ok = true;
                for (j, &o) in chain.iter().enumerate() {
                    let o = o as usize;
                    let iv = down[o] as usize;
                    gmap[iv] = NONE;
                    infl[j].sort_unstable();
                    let nf = infl[j].len() as u32;
                    let ret = (credits[o] + sent) as i64 - cap_ov[o] as i64;
                    let pending = if j + 1 == h {
                        credit_next.iter().filter(|&&x| x as usize == o).count() as u32
                    } else {
                        0
                    };
                    if nf > sent || ret < 0 {
                        ok = false;
                    }
                    let landed = sent.saturating_sub(nf);
                    st_buf.push(worm::ChanState {
                        sent,
                        returned: ret.max(0) as u32,
                        pending,
                        landed,
                        ready: if paced { ready[o] } else { 0.0 },
                        first: 0.0,
                        period: period[o],
                        latency: lat[o],
                        lat_cycles: lat_cycles[o] as u64,
                        buf: cap_ov[o],
                    });
                    if j + 1 < h {
                        if fl_len[iv] > landed {
                            ok = false;
                        }
                        sent = landed.saturating_sub(fl_len[iv]);
                    }
                }
                debug_assert!(ok, "inconsistent leg state at cycle {cycle}");
                if !ok {
                    continue;
                }
                let w = omega as usize;
                src_buf.clear();
                src_buf.resize(w, cycle as f64);
                if from != NONE {
                    let g = got as usize;
                    src_buf[g..].copy_from_slice(&arr[from as usize][g..w]);
                }
                worm::schedule(
                    cycle,
                    omega,
                    paced,
                    &mut st_buf,
                    &infl[..h],
                    &src_buf,
                    &mut s_buf,
                    &mut l_buf,
                    &mut c_buf,
                );
                (inj, h, w)
            };
            let lw = (h - 1) * w;
            debug_assert!(
                l_buf[lw..lw + w].iter().all(|x| !x.is_nan())
                    && (0..h)
                        .all(|j| !c_buf[j * w + w - 1].is_nan() && !s_buf[j * w + w - 1].is_nan()),
                "unset schedule values"
            );
            // Counters of sends, added now (corrected where read early).
            for (j, &o) in chain.iter().enumerate() {
                let o = o as usize;
                let n_new = (omega - st_buf[j].sent) as u64;
                ch_flits[o] += n_new;
                if j == 0 {
                    c.flits_injected += n_new;
                    in_net += n_new;
                }
                owned[o] = 0;
                ch_owned[o >> 6] &= !(1u64 << (o & 63));
                if j + 1 < h {
                    let iv = down[o] as usize;
                    let ri = ivc_router[iv] as usize;
                    work[ri] -= fl_len[iv] as u64;
                    fl_len[iv] = 0;
                    skipv[iv] = true;
                }
            }
            let first = st_buf[h - 1].sent as usize;
            // A relay target: the next leg may start from these landings.
            let rt = ivc_router[it as usize];
            let s = relay::slot_of(&msgs[mu], rt);
            let s_last = s_buf[h * w - 1] as u64;
            let leg_id = match legs_free.pop() {
                Some(x) => x,
                None => {
                    legs.push(None);
                    (legs.len() - 1) as u32
                }
            };
            if s < 2 {
                let key = mu * 2 + s;
                if arr.len() <= key {
                    arr.resize(key + 2, Vec::new());
                    arr_tag.resize(key + 2, (NONE, 0));
                }
                arr[key].clear();
                arr[key].extend_from_slice(&l_buf[lw..lw + w]);
                arr_tag[key] = (rt, msgs[mu].gen);
            }
            if s < 2 {
                // A relay reads these landings from `arr` (flits_here).
                msgs[mu].lazy_in[s] = true;
            }
            // The leg's only landing event: its tail's.
            if first < w {
                ev_land.push(Reverse((
                    l_buf[lw + w - 1] as u64,
                    s_buf[lw + w - 1] as u64,
                    chain[h - 1],
                    leg_id,
                )));
            }
            let mut push_rel = |t: u64, rel: worm::Release| {
                let x = match rels_free.pop() {
                    Some(x) => {
                        rels[x as usize] = rel;
                        x
                    }
                    None => {
                        rels.push(rel);
                        (rels.len() - 1) as u32
                    }
                };
                ev_rel.push(Reverse((t, x)));
            };
            push_rel(s_buf[w - 1] as u64 + 1, worm::Release::Source { inj });
            for (j, &o) in chain.iter().enumerate() {
                let t = c_buf[j * w + w - 1] as u64;
                let fed = if j + 1 < h { down[o as usize] } else { NONE };
                push_rel(
                    t,
                    worm::Release::Channel {
                        o,
                        ready: st_buf[j].ready,
                        fed,
                        skip: fed,
                        last: if j + 1 == h { leg_id } else { NONE },
                    },
                );
            }
            let mut leg = legs_pool.pop().unwrap_or_default();
            leg.chans.clear();
            leg.chans.extend_from_slice(&chain);
            // The sends and landings move to the leg; its old vectors are
            // the next buffers.
            std::mem::swap(&mut leg.send, &mut s_buf);
            std::mem::swap(&mut leg.land, &mut l_buf);
            leg.inj = inj;
            leg.omega = omega;
            leg.msg = m;
            leg.target = it;
            leg.next = first as u32;
            leg.relay = s < 2;
            legs[leg_id as usize] = Some((leg, s_last));
            n_active += 1;
        }
        // Generation: messages generated before this cycle start.
        let now = cycle as f64;
        generate(
            cycle,
            &mut arrivals,
            &mut next_min,
            &mut gen,
            sc,
            dests,
            &mut rng,
            &mut c,
            &mut msgs,
            &mut free_msgs,
            &mut queue,
            |n| {
                work[n] += 1;
                queued[n] += 1;
                act.mark(n);
            },
        );
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
        let next_cycle = (cycle + 1) as f64;
        if paced {
            let ts = (cycle % timer_len as u64) as usize;
            for &r in &timers[ts] {
                act.mark(r as usize);
            }
            timers[ts].clear();
        }
        while let Some(&Reverse((t, r))) = ev_wake.peek() {
            if t > cycle {
                break;
            }
            ev_wake.pop();
            act.mark(r as usize);
        }
        // Whether output channel `ch` has a flit to start: an owning VC with
        // a credit and a flit (a relay's injection VC: a flit that landed).
        // A relay's injection VC waiting for a flit of a scheduled leg,
        // whose landing is no event, sets `$wake` to that landing's cycle.
        macro_rules! eligible {
            ($ch:expr, $r32:expr, $wake:ident) => {{
                let ch: usize = $ch;
                let mut any = false;
                let mut bits = owned[ch];
                while bits != 0 {
                    let o = ch * v_n + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let i = owner[o];
                    if credits[o] == 0 {
                        continue;
                    }
                    let i = i as usize;
                    if i < n_ivc {
                        if fl_len[i] > 0 {
                            any = true;
                            break;
                        }
                    } else {
                        let j = i - n_ivc;
                        let m = inj_msg[j] as usize;
                        let avail = relay::flits_here(&mut msgs, m, $r32, omega, cycle, &arr);
                        if omega - inj_left[j] < avail {
                            any = true;
                            break;
                        }
                        if let Some(t) = relay::next_landing(&msgs, m, $r32, &arr) {
                            $wake = $wake.min(t);
                        }
                    }
                }
                any
            }};
        }
        // The marked routers in index order: the words the summary marks.
        for sw in 0..act.sum.len() {
            let mut sbits = std::mem::take(&mut act.sum[sw]);
            while sbits != 0 {
                let w = sw * 64 + sbits.trailing_zeros() as usize;
                sbits &= sbits - 1;
                let mut bits = std::mem::take(&mut act.words[w]);
                while bits != 0 {
                    let r = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if work[r] == 0 {
                        continue;
                    }
                    // Visit again next cycle / first paced cycle a channel may send.
                    let mut wake_next = false;
                    let mut wake_at = u64::MAX;
                    let r32 = r as u32;
                    let ivc0 = base[r] * v_n;
                    let net_in = (base[r + 1] - base[r]) * v_n;
                    let n_in_r = net_in + inj_per;
                    // Idle injection VCs take their next message.
                    for v in 0..inj_per {
                        if queued[r] == 0 {
                            break;
                        }
                        let j = r * inj_per + v;
                        if inj_msg[j] == NONE {
                            let q = sc.injection.queue_of(j, r);
                            if let Some(m) = queue[q].pop_front() {
                                inj_msg[j] = m;
                                inj_left[j] = omega;
                                queued[r] -= 1;
                                hdr_wait[r] += 1;
                                set_bit(&mut hw, base[r + 1] * v_n + j);
                            }
                        }
                    }
                    // VC allocation for waiting headers, from a rotating input
                    // on: the set bits of `hw` at or above it, then below.
                    let waiting = hdr_wait[r];
                    if waiting > 0 {
                        let start = if order_rot < n_in_r {
                            order_rot
                        } else {
                            order_rot % n_in_r
                        };
                        let kb = ivc0 + r * inj_per;
                        for (lo, hi) in [(kb + start, kb + n_in_r), (kb, kb + start)] {
                            bits_in!(hw, lo, hi, pos => {
                                let k = pos - kb;
                                let (i, m) = if k < net_in {
                                    let i = ivc0 + k;
                                    debug_assert!(alloc[i] == NONE && fl_len[i] > 0);
                                    let f = fl[fl_off[i] + fl_head[i] as usize];
                                    debug_assert!(f & 2 != 0);
                                    (i, (f >> 2) as usize)
                                } else {
                                    let j = r * inj_per + (k - net_in);
                                    debug_assert!(alloc[n_ivc + j] == NONE && inj_msg[j] != NONE);
                                    debug_assert!(inj_left[j] == omega);
                                    (n_ivc + j, inj_msg[j] as usize)
                                };
                                let chosen =
                                    routing.route(r32, msgs[m].dst, msgs[m].tag, &mut rng, |p, v| {
                                        let o = (base[r] + p as usize) * v_n + v as usize;
                                        owner[o] == NONE && credits[o] == cap_ov[o]
                                    });
                                if let Some((p, v)) = chosen {
                                    debug_assert!((p as usize) < base[r + 1] - base[r]);
                                    let ch = base[r] + p as usize;
                                    let o = ch * v_n + v as usize;
                                    owner[o] = i as u32;
                                    alloc[i] = o as u32;
                                    owned[ch] |= 1 << v;
                                    set_bit(&mut ch_owned, ch);
                                    hdr_wait[r] -= 1;
                                    hw[pos >> 6] &= !(1u64 << (pos & 63));
                                }
                            });
                        }
                    }
                    // Switch traversal: one flit per output channel (those
                    // with an owned VC, in channel order).
                    bits_in!(ch_owned, base[r], base[r + 1], ch => {
                        if paced && ready[ch] >= next_cycle {
                            if !wake_next && wake_at > cycle + 1 && eligible!(ch, r32, wake_at) {
                                wake_at = wake_at.min(ready[ch] as u64);
                            }
                            continue;
                        }
                        // Owned VCs from the round-robin pointer on: those at
                        // or above it, then those below (the order of a scan of
                        // every VC from the pointer, skipping unowned ones).
                        let start = rr[ch];
                        let mask = owned[ch];
                        let mut bits = mask >> start << start;
                        let mut wrapped = false;
                        loop {
                            if bits == 0 {
                                if wrapped {
                                    break;
                                }
                                wrapped = true;
                                bits = mask & ((1u64 << start) - 1);
                                if bits == 0 {
                                    break;
                                }
                            }
                            let v = bits.trailing_zeros() as usize;
                            bits &= bits - 1;
                            let o = ch * v_n + v;
                            let i = owner[o];
                            debug_assert!(i != NONE);
                            if credits[o] == 0 {
                                continue;
                            }
                            let i = i as usize;
                            let f = if i < n_ivc {
                                if fl_len[i] == 0 {
                                    continue;
                                }
                                let f = fl[fl_off[i] + fl_head[i] as usize];
                                fl_head[i] = if fl_head[i] + 1 == cap_iv[i] {
                                    0
                                } else {
                                    fl_head[i] + 1
                                };
                                fl_len[i] -= 1;
                                work[r] -= 1;
                                // A train's header returns no credit: the
                                // channel behind it is its train's until the
                                // release, which sets its credits whole.
                                if !(trains_on
                                    && f & 2 != 0
                                    && msg_train.get((f >> 2) as usize).is_some_and(|&t| t != NONE))
                                {
                                    credit_next.push(up[i]);
                                }
                                f
                            } else {
                                let j = i - n_ivc;
                                let m = inj_msg[j];
                                let left = inj_left[j];
                                // A cut-through relay sends only flits that landed.
                                let avail =
                                    relay::flits_here(&mut msgs, m as usize, r32, omega, cycle, &arr);
                                if omega - left >= avail {
                                    continue;
                                }
                                let head = left == omega;
                                let tail = left == 1;
                                if head {
                                    let msg = &mut msgs[m as usize];
                                    if msg.legs == 0 {
                                        msg.inject = cycle;
                                    } else if n_slots > 0 {
                                        batches.relay_wait(dests.relay_slot(r32), cycle - msg.enq);
                                    }
                                    msg.legs += 1;
                                    c.msgs_waiting -= 1;
                                }
                                c.flits_injected += 1;
                                in_net += 1;
                                inj_left[j] = left - 1;
                                if tail {
                                    inj_msg[j] = NONE;
                                    work[r] -= 1;
                                    // The next queued message takes the VC.
                                    wake_next |= queued[r] > 0;
                                }
                                (m << 2) | (u32::from(head) << 1) | u32::from(tail)
                            };
                            credits[o] -= 1;
                            let ready_before = if paced { ready[ch] } else { 0.0 };
                            let ahead = if paced {
                                let s = ready[ch].max(now);
                                ready[ch] = s + period[ch];
                                (ceil_u64(s + lat[ch]).saturating_sub(cycle) as usize).max(1)
                            } else {
                                lat_cycles[ch]
                            };
                            let mut when = slot + ahead;
                            if when >= wheel_len {
                                when -= wheel_len;
                            }
                            wheel[when].push((down[o], f, cycle));
                            ch_flits[ch] += 1;
                            if f & 2 != 0 {
                                msgs[(f >> 2) as usize].hops += 1;
                            }
                            if trains_on && f & 2 != 0 {
                                let mu = (f >> 2) as usize;
                                // A leg starts: a train if its source's flits
                                // are known and its buffers hold fewer than ω.
                                if i >= n_ivc {
                                    let sl = relay::slot_of(&msgs[mu], r32);
                                    let key = mu * 2 + sl;
                                    if sl == 2
                                        || (msgs[mu].lazy_in[sl]
                                            && arr_tag.get(key) == Some(&(r32, msgs[mu].gen)))
                                    {
                                        let (dst, tag) = (msgs[mu].dst, msgs[mu].tag);
                                        chain.clear();
                                        chain.push(o as u32);
                                        let mut sum = cap_ov[o] as u64;
                                        let mut cur = ivc_router[down[o] as usize];
                                        let mut ok = true;
                                        while cur != dst {
                                            if sum >= omega as u64 || chain.len() > n_r {
                                                ok = false;
                                                break;
                                            }
                                            let cu = cur as usize;
                                            match routing.route(cur, dst, tag, &mut path_rng, |_, _| true) {
                                                Some((p, vv)) => {
                                                    let o2 = (base[cu] + p as usize) * v_n + vv as usize;
                                                    if down[o2] == NONE {
                                                        ok = false;
                                                        break;
                                                    }
                                                    chain.push(o2 as u32);
                                                    sum += cap_ov[o2] as u64;
                                                    cur = ivc_router[down[o2] as usize];
                                                }
                                                None => {
                                                    ok = false;
                                                    break;
                                                }
                                            }
                                        }
                                        if ok && sum < omega as u64 {
                                            let id = match trains_free.pop() {
                                                Some(x) => x,
                                                None => {
                                                    trains.push(worm::Train::default());
                                                    (trains.len() - 1) as u32
                                                }
                                            };
                                            let tr = &mut trains[id as usize];
                                            let h = chain.len();
                                            tr.chans.clear();
                                            tr.chans.extend_from_slice(&chain);
                                            tr.hsend.clear();
                                            tr.hsend.resize(h, f64::INFINITY);
                                            tr.hland.clear();
                                            tr.hland.resize(h, f64::INFINITY);
                                            tr.ready0.clear();
                                            tr.ready0.resize(h, 0.0);
                                            tr.reached = 0;
                                            tr.src.clear();
                                            if sl == 2 {
                                                tr.src.resize(omega as usize, 0.0);
                                            } else {
                                                tr.src.extend_from_slice(&arr[key][..omega as usize]);
                                            }
                                            tr.inj = (i - n_ivc) as u32;
                                            if msg_train.len() < msgs.len() {
                                                msg_train.resize(msgs.len(), NONE);
                                            }
                                            msg_train[mu] = id;
                                            n_trains += 1;
                                        }
                                    }
                                }
                                // A train's header took this channel: the
                                // flits behind it wait for the schedule.
                                let t = msg_train.get(mu).copied().unwrap_or(NONE);
                                if t != NONE {
                                    let tr = &mut trains[t as usize];
                                    let j = tr.reached as usize;
                                    debug_assert_eq!(tr.chans[j], o as u32);
                                    tr.hsend[j] = cycle as f64;
                                    tr.hland[j] = (cycle + ahead as u64) as f64;
                                    tr.ready0[j] = ready_before;
                                    tr.reached += 1;
                                    owned[ch] &= !(1 << v);
                                    if owned[ch] == 0 {
                                        ch_owned[ch >> 6] &= !(1u64 << (ch & 63));
                                    }
                                }
                            }
                            if f & 1 != 0 {
                                owner[o] = NONE;
                                alloc[i] = NONE;
                                owned[ch] &= !(1 << v);
                                if owned[ch] == 0 {
                                    ch_owned[ch >> 6] &= !(1u64 << (ch & 63));
                                }
                                // The next message's header, if already here, waits.
                                if i < n_ivc && fl_len[i] > 0 {
                                    hdr_wait[r] += 1;
                                    set_bit(&mut hw, i + r * inj_per);
                                    wake_next = true;
                                }
                            }
                            rr[ch] = if v + 1 == v_n { 0 } else { v as u32 + 1 };
                            moved = true;
                            break;
                        }
                        // The channel's next flit, if it has one now (no need
                        // to look once the router is due next cycle anyway).
                        // Unpaced (the torus): an owned channel keeps its router
                        // awake, which costs less than looking.
                        if owned[ch] > 0 && !wake_next && wake_at > cycle + 1 {
                            if !paced {
                                wake_next = true;
                            } else if eligible!(ch, r32, wake_at) {
                                wake_at = wake_at.min(ready[ch] as u64);
                            }
                        }
                    });
                    if wake_next || wake_at <= cycle + 1 {
                        act_next.mark(r);
                    } else if wake_at != u64::MAX {
                        if wake_at - cycle < timer_len as u64 {
                            timers[(wake_at % timer_len as u64) as usize].push(r32);
                        } else {
                            // A relay waiting for a scheduled leg's landing.
                            ev_wake.push(Reverse((wake_at, r32)));
                        }
                    }
                }
            }
        }
        std::mem::swap(&mut act, &mut act_next);
        if moved || in_net == 0 {
            last_progress = cycle;
        } else if n_active == 0 && cycle - last_progress > sc.stall_cycles {
            // Trains: the last send behind a header, made by now.
            if n_trains > 0 {
                let mut lp = last_progress as f64;
                train_sends!(cycle, true, |_, _, _, last: f64, _| lp = lp.max(last));
                last_progress = lp as u64;
            }
            if cycle - last_progress > sc.stall_cycles {
                c.finish = Finish::Stalled {
                    cycle,
                    flits_in_network: in_net,
                };
                break;
            }
        }
        c.stepped_cycles += 1;
        // Nothing anywhere (every message delivered, so no flit in a buffer,
        // on a link or at a source): jump to the cycle before the first one
        // in which a message is due, c > next_min. Nothing drawn from a
        // stream or visited in the skipped cycles would have changed, so
        // this only saves time; the allocation order advances as if stepped.
        if c.msgs_generated == c.msgs_delivered {
            let due = floor_time(next_min) + 1.0;
            let target = if due >= sc.max_cycles as f64 {
                sc.max_cycles
            } else {
                due as u64
            };
            if target > cycle + 1 {
                let skip = target - 1 - cycle;
                order_rot = ((order_rot as u64 + skip % n_in as u64) % n_in as u64) as usize;
                cycle += skip;
                ctx.check_cancel()?;
            }
        } else if jumps && act.is_empty() && credit_next.is_empty() {
            // Messages exist but nothing is due next cycle (no router marked,
            // no credit): jump to the cycle before the first one in which
            // something is, a landing (timing wheel or scheduled leg), a
            // release, a paced timer, a generation, the cycle budget or the
            // deadlock detector's verdict. A skipped cycle would have visited
            // nothing and moved nothing, so this only saves time; the
            // allocation order, the detector's last progress and the stepped
            // cycles advance as if stepped.
            let mut due = sc.max_cycles;
            let g = floor_time(next_min) + 1.0;
            if g < due as f64 {
                due = g as u64;
            }
            if let Some(&Reverse((t, _))) = ev_rel.peek() {
                due = due.min(t);
            }
            if let Some(&Reverse((t, ..))) = ev_land.peek() {
                due = due.min(t);
            }
            if let Some(&Reverse((t, _))) = ev_wake.peek() {
                due = due.min(t);
            }
            if in_net > 0 && n_active == 0 {
                due = due.min(last_progress + sc.stall_cycles + 1);
            }
            // (Slots found by a wrapping index, not a division per slot.)
            let mut d = 1;
            let mut x = slot;
            while d < wheel_len && cycle + (d as u64) < due {
                x = if x + 1 == wheel_len { 0 } else { x + 1 };
                if !wheel[x].is_empty() {
                    due = cycle + d as u64;
                }
                d += 1;
            }
            if paced {
                let mut d = 1;
                let mut x = (cycle % timer_len as u64) as usize;
                while d < timer_len && cycle + (d as u64) < due {
                    x = if x + 1 == timer_len { 0 } else { x + 1 };
                    if !timers[x].is_empty() {
                        due = cycle + d as u64;
                    }
                    d += 1;
                }
            }
            if due > cycle + 1 {
                let skip = due - 1 - cycle;
                order_rot = ((order_rot as u64 + skip % n_in as u64) % n_in as u64) as usize;
                if in_net == 0 {
                    last_progress = due - 1;
                }
                c.stepped_cycles += skip;
                if (cycle ^ (cycle + skip)) >> 6 != 0 {
                    ctx.check_cancel()?;
                }
                cycle += skip;
            }
        }
        cycle += 1;
    }
    c.cycles = cycle + 1;
    // Scheduled legs still running: their sends from this cycle on were
    // not made.
    for (leg, _) in legs.iter().flatten() {
        // Flits landed by now that wait for the tail to be counted.
        let n = leg.landed_before(cycle + 1, 0, 0) as u64;
        in_net -= n;
        if leg.relay {
            c.flits_relayed += n;
        } else {
            c.flits_delivered += n;
        }
        for (j, &o) in leg.chans.iter().enumerate() {
            let n = leg.due_from(j, cycle);
            ch_flits[o as usize] -= n;
            if j == 0 {
                c.flits_injected -= n;
                in_net -= n;
                if n > 0 {
                    inj_left[leg.inj as usize] = n as u32;
                }
            }
        }
    }
    // Trains still running: the sends behind their headers made before
    // this cycle.
    if n_trains > 0 {
        train_sends!(cycle, false, |j, o, n, _, inj: u32| {
            ch_flits[o] += n;
            if j == 0 {
                c.flits_injected += n;
                in_net += n;
                inj_left[inj as usize] = omega - 1 - n as u32;
            }
        });
    }
    batches.finish(&ch_flits, &mut c);
    c.flits_in_network = in_net;
    c.flits_at_sources = inj_left
        .iter()
        .filter(|&&x| x < omega)
        .map(|&x| x as u64)
        .sum();
    Ok(c)
}

/// The next generation time of each node, and the nodes ordered by it, so
/// that a cycle in which few nodes generate reads few of them.
pub(super) struct Arrivals {
    t: Vec<f64>,
    /// (time as bits, node) of every node: the bits of non-negative times
    /// order as the times do.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
    due: Vec<u32>,
}

impl Arrivals {
    pub(super) fn new(t: Vec<f64>) -> Arrivals {
        debug_assert!(t.iter().all(|&x| x >= 0.0));
        let heap = t
            .iter()
            .enumerate()
            .map(|(n, &x)| Reverse((x.to_bits(), n as u32)))
            .collect();
        Arrivals {
            t,
            heap,
            due: Vec::new(),
        }
    }

    /// The earliest next generation time.
    pub(super) fn min(&self) -> f64 {
        self.heap
            .peek()
            .map_or(f64::INFINITY, |&Reverse((b, _))| f64::from_bits(b))
    }
}

/// Generation: the messages of every source generated before cycle `cycle`
/// join their queues (pooled in `msgs`), `queued(node)` once for each; stops
/// past the backlog limit (the run then ends as saturated: a source far
/// past saturation would otherwise fill memory within one cycle). Nodes
/// generate in index order, each all its messages before the next, as a
/// scan of every node would (the destinations draw from the shared stream).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn generate<D: Destinations>(
    cycle: u64,
    arrivals: &mut Arrivals,
    next_min: &mut f64,
    gen: &mut Gen,
    sc: &Scenario,
    dests: &D,
    rng: &mut Stream,
    c: &mut Counters,
    msgs: &mut Vec<Msg>,
    free_msgs: &mut Vec<u32>,
    queue: &mut [VecDeque<u32>],
    mut queued: impl FnMut(usize),
) {
    let now = cycle as f64;
    if now <= *next_min {
        return;
    }
    let Arrivals { t, heap, due } = arrivals;
    due.clear();
    while let Some(&Reverse((b, n))) = heap.peek() {
        if f64::from_bits(b) >= now {
            break;
        }
        heap.pop();
        due.push(n);
    }
    due.sort_unstable();
    for &n in due.iter() {
        let n = n as usize;
        let t = &mut t[n];
        while *t < now {
            if c.msgs_waiting > sc.backlog_limit {
                return;
            }
            let g = t.floor() as u64;
            let leg = dests.route(n as u32, rng);
            debug_assert!(leg.dst as usize != n);
            let msg = Msg::new(&leg, g);
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
                Injection::PerVc => n * sc.vcs + below(rng, sc.vcs),
                Injection::Shared => n,
                Injection::Classes(k) => n * k + (leg.class as usize).min(k - 1),
            };
            queue[q].push_back(id);
            c.msgs_generated += 1;
            c.msgs_waiting += 1;
            queued(n);
            *t = gen.next(n, *t, rng);
        }
        heap.push(Reverse((t.to_bits(), n as u32)));
    }
    *next_min = arrivals.min();
}

/// ⌈x⌉ for 0 <= x < 2^53 (a cycle count): what `x.ceil() as u64` gives,
/// without the libm call the baseline x86-64 target makes for `ceil`.
#[inline]
pub(super) fn ceil_u64(x: f64) -> u64 {
    let t = x as u64;
    if (t as f64) < x {
        t + 1
    } else {
        t
    }
}

/// A set of routers to visit: a bit per router, and a bit per word of those
/// that may be non-zero, so that a cycle with few marks reads few words.
struct Marks {
    words: Vec<u64>,
    sum: Vec<u64>,
}

impl Marks {
    fn new(words: usize) -> Marks {
        Marks {
            words: vec![0; words],
            sum: vec![0; words.div_ceil(64)],
        }
    }

    fn is_empty(&self) -> bool {
        self.sum.iter().all(|&x| x == 0)
    }

    #[inline]
    fn mark(&mut self, r: usize) {
        self.words[r >> 6] |= 1 << (r & 63);
        self.sum[r >> 12] |= 1 << ((r >> 6) & 63);
    }
}

#[inline]
pub(super) fn set_bit(words: &mut [u64], pos: usize) {
    words[pos >> 6] |= 1u64 << (pos & 63);
}

/// Runs `$body` with `$pos` bound to each set bit of the bit set `$words` in
/// [`$lo`, `$hi`), in increasing order; each word is read when its turn
/// comes, so the body may clear bits it has visited (and `continue` goes on
/// to the next bit).
macro_rules! bits_in {
    ($words:expr, $lo:expr, $hi:expr, $pos:ident => $body:block) => {{
        let (lo, hi): (usize, usize) = ($lo, $hi);
        if lo < hi {
            let last = (hi - 1) >> 6;
            let mut w = lo >> 6;
            while w <= last {
                let mut bits = $words[w];
                if w == lo >> 6 {
                    bits &= !0u64 << (lo & 63);
                }
                if w == last && hi & 63 != 0 {
                    bits &= (1u64 << (hi & 63)) - 1;
                }
                while bits != 0 {
                    let $pos = (w << 6) | bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    $body
                }
                w += 1;
            }
        }
    }};
}
pub(super) use bits_in;

/// ⌊x⌋ of a time x ≥ 0 (infinite when nothing more is due) without a call
/// to the library's `floor`, which the loop asked for in every jump: below
/// 2^52 by [`worm::floor`], above it x itself (every such f64 is whole).
#[inline]
fn floor_time(x: f64) -> f64 {
    if (0.0..worm::TWO52).contains(&x) {
        worm::floor(x)
    } else {
        x.floor()
    }
}
