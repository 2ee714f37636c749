//! What a run of the flit engine will allocate, computed from the plug-ins
//! before anything is allocated (issue 32: a solver refuses an input whose
//! state would not fit, instead of aborting on a failed allocation).
//!
//! [`state_bytes`] mirrors the allocations of [`super::run`] (sim.rs): the
//! per-VC, per-channel, per-router, per-injection-queue and per-node arrays,
//! the message pool, the timing and timer wheels and the per-batch
//! accumulators. Growing vectors are counted at twice their largest content
//! (capacity doubling). Whoever adds an array to `run` adds it here; the
//! multi-cluster solver's test `largest_accepted_inputs_stay_under_the_memory_bound`
//! measures the resident set of its largest accepted inputs against it.

use super::{Destinations, Injection, LinkTiming, Scenario, Topology};

const MSG_BYTES: u64 = super::sim::MSG_BYTES as u64;
const GEN_BYTES: u64 = super::sim::GEN_BYTES as u64;

/// The parts of [`state_bytes`], so that a refusal can name what is large.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StateBytes {
    /// Channel and VC arrays, flit buffers included.
    pub network: u64,
    /// Of `network`: the flit buffers alone (VCs × buffer × 4 bytes).
    pub buffers: u64,
    /// Message pool, source and relay queues (up to the backlog limit).
    pub messages: u64,
    /// Per-node sources and per-router state.
    pub nodes: u64,
    /// Per-batch accumulators (batches × groups and relay slots).
    pub batches: u64,
    /// Timing and timer wheels with the flits in flight.
    pub wheels: u64,
}

impl StateBytes {
    pub fn total(&self) -> u64 {
        [self.messages, self.nodes, self.batches, self.wheels]
            .iter()
            .fold(self.network, |a, &b| a.saturating_add(b))
    }
}

/// An upper bound of the bytes [`super::run`] allocates for this scenario
/// and these plug-ins; walks the routers and channels (no allocation).
pub fn state_bytes<T: Topology, L: LinkTiming, D: Destinations>(
    sc: &Scenario,
    topo: &T,
    timing: &L,
    dests: &D,
) -> StateBytes {
    // In f64: a bound near u64::MAX (a test's unlimited backlog) must not
    // overflow; the result converts back saturating.
    let n_r = topo.routers() as f64;
    let v = sc.vcs.max(1) as f64;
    let buf = sc.buffer as f64;
    let mut n_ch = 0.0f64;
    // Flits of buffer per VC summed over the channels (`buffer_of`).
    let mut depth = 0.0f64;
    let (mut max_lat, mut max_period) = (1.0f64, 1.0f64);
    for r in 0..topo.routers() as u32 {
        let p = topo.ports_of(r) as u32;
        n_ch += p as f64;
        for q in 0..p {
            if topo.link(r, q).is_none() {
                depth += buf;
            } else {
                depth += topo.buffer_of(r, q, sc.buffer, sc.msg_len) as f64;
                let (l, t) = timing.timing(r, q);
                if l.is_finite() {
                    max_lat = max_lat.max(l);
                }
                if t.is_finite() {
                    max_period = max_period.max(t);
                }
            }
        }
    }
    let inj_per = match sc.injection {
        Injection::PerVc | Injection::Shared => v,
        Injection::Classes(k) => k as f64,
    };
    let n_ivc = n_ch * v;
    let n_inj = n_r * inj_per;
    let queues = match sc.injection {
        Injection::Shared => n_r,
        _ => n_inj,
    };
    let n_src = dests.nodes() as f64;
    let bits = |n: f64| (n / 64.0).ceil() * 8.0;
    // Per VC: down, up, ivc_router, fl_head, fl_len, alloc, owner, credits,
    // the two buffer depths (4 bytes each), the ring's offset (8) and the
    // flit buffer; per channel: lat, period,
    // lat_cycles, ready, owned, three flit counters (8 bytes each) and rr.
    let buffers = depth * v * 4.0;
    let network = buffers + n_ivc * 48.0 + n_ch * 68.0 + bits(n_ivc + n_inj) + bits(n_ch);
    // Messages alive: at most the backlog limit (+1) waiting at sources and
    // relays, plus one per VC holding flits (atomic VC allocation: a VC's
    // buffer holds one message at a time) and per injection VC.
    let backlog = sc.backlog_limit as f64 + 1.0;
    let alive = backlog + n_ivc + n_inj;
    let messages = 2.0 * alive * (MSG_BYTES as f64 + 4.0)
        + 2.0 * backlog * 4.0
        + queues * (32.0 + 16.0)
        + n_inj * 12.0;
    let nodes = n_src * (GEN_BYTES as f64 + 8.0) + n_r * 24.0 + 2.0 * bits(n_r);
    let batches_n = sc.run.batches as f64;
    let groups = dests.groups().max(1) as f64;
    let slots = dests.relay_slots() as f64;
    let batches = batches_n * 64.0
        + if groups > 1.0 {
            batches_n * (groups * 24.0 + 48.0) * 2.0
        } else {
            0.0
        }
        + if slots > 0.0 {
            batches_n * (slots * 16.0 + 24.0) * 2.0
        } else {
            0.0
        }
        + groups * 24.0
        + 2.0 * slots * 16.0;
    // Timing wheel: ⌈max latency⌉ + 2 slots; a slot receives at most one flit
    // per channel, and flits in flight are bounded by the credits.
    let wheel_len = max_lat.min(1e7).ceil().max(1.0) + 2.0;
    let in_flight = (depth * v).min(n_ch * wheel_len);
    let timer_len = max_period.min(1e7).ceil() + 3.0;
    let wheels =
        (wheel_len + timer_len) * 24.0 + 2.0 * in_flight * 8.0 + 2.0 * n_r * 4.0 + 4.0 * n_ch * 4.0;
    let (network, buffers, messages, nodes, batches, wheels) = (
        network as u64,
        buffers as u64,
        messages as u64,
        nodes as u64,
        batches as u64,
        wheels as u64,
    );
    StateBytes {
        network,
        buffers,
        messages,
        nodes,
        batches,
        wheels,
    }
}
