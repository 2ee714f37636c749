//! The event loop of the InfiniBand engine (catalogue §6 SIM-3).
//!
//! Entities live in flat arrays indexed by global port, host, flow or VoQ
//! number; packets come from a pool with a free list and are chained through
//! `Pkt::next` into VoQs, CNP queues and sink FIFOs, so the loop never
//! allocates once the pool has grown to the network's population.
//!
//! Semantics (docs/models/ibcc.md):
//! - Credits per VL in 64-byte blocks: an output sends a data packet only if
//!   it holds credits for all its blocks; the downstream input buffer returns
//!   them when the packet's tail has left it, one link latency later.
//! - Virtual cut-through: a packet is routable at a switch once its head has
//!   arrived (plus the switch latency); its onward transmission cannot end
//!   before its tail has arrived. Store-and-forward waits for the tail.
//! - A switch output sends queued CNPs first; otherwise its VL arbitration
//!   (IBA 1.2.1 §7.6.9: high- and low-priority tables of (VL, weight),
//!   `Scenario::vl_arb`, by default round robin over the VLs) chooses the
//!   VL, and within the VL the input ports take turns (round robin over the
//!   VoQs of that VL whose head packet has credits, one pointer per output
//!   and VL, so traffic on one VL never moves another VL's turn).
//! - An HCA sends CNPs first, then picks among its flows that hold credits
//!   and whose inter-packet delay (the plug-in's gap) has elapsed; injection
//!   is paced at the end-node cap and the sink drains at the sink cap.
//! - With configured tables (`Scenario::vl_arb`: IBA's tables, or Yan's
//!   admission control as a weighted low-priority table) HCAs choose the VL
//!   by the same arbitration, then draw among that VL's eligible flows.
//! - ACK-based plug-ins (Yan): the destination returns an ACK per data packet
//!   through the same priority path as CNPs; on its arrival the source's
//!   state changes and the flow's next packet is re-timed from the new gap
//!   (last injection + paced time + gap), so the rate in force governs the
//!   spacing; a window caps the unacknowledged packets.
//!
//! Events that would change nothing observable stay out of the calendar
//! (issue 21, docs/models/ibcc.md "A cheaper engine"): a switch output's end
//! of transmission while nothing waits for it; a host's end of transmission
//! when it has nothing else queued to send (a quiet host's only before its
//! next paced injection; a host that replies gets its LinkFree back in the
//! calendar if a reply is queued meanwhile: `gated_while_busy`); every
//! credit return (an output adds the credits due when it arbitrates; a
//! `CreditWake` only where an idle output waits for credits); a data
//! packet's arrival at its destination's sink (settled at its
//! transmission: `sink_arrival`); the end of the drain of a packet the host
//! does not reply to (delivery and credit return settled then too: at a
//! quiet host every packet, with IBA CC the unmarked ones); at a host
//! without flows, the end of drain of a packet it replies to and the
//! reply's transmission (`settle_reply`: only the reply's arrival at the
//! switch is an event); and, at a host whose end of transmission was
//! settled, the wake-ups that would find nothing to send
//! (`wake_when_ready`). Settled events are still counted in
//! `Counters::events`, so it approximates the events of an engine without
//! these shortcuts. The busy state of an output follows the reserved
//! sequence number of its LinkFree, so simultaneous events keep their
//! order except against a credit return, a sink's end of drain, a reply
//! settled in advance or a host's wake-up at exactly the same time (such
//! ties are rare: docs/models/ratecc.md "Fewer events per packet").

use super::cc::{CongestionControl, PortView, Reply};
use super::topology::NodeRef;
use super::{Counters, Dest, Scenario, VlArbitration};
use crate::des::{Calendar, Stream};
use crate::{SolveError, TaskContext};
use std::collections::VecDeque;

const NIL: u32 = u32::MAX;
/// Number of SLs an HCA keeps CC timers for.
pub const SLS: u32 = 16;

/// Eight bytes (a 24-byte calendar entry): the port a packet arrives at is
/// kept in the packet.
#[derive(Debug, Clone, Copy)]
enum Ev {
    LinkFree(u32),
    /// Packet `k` arrives at the input port `Pkt::at`.
    Arrive(u32),
    /// Credits due at an idle output that may be waiting for them (see
    /// `Engine::credit`).
    CreditWake(u32),
    /// Data packet `k` has drained from its destination's sink (only where
    /// the host replies to this packet; see `sink_arrival`).
    SinkDone(u32),
    HostWake(u32),
    FlowStart(u32),
    CcTimer(u32),
    Sample,
}

#[derive(Debug, Clone, Copy)]
struct Pkt {
    next: u32,
    flow: u32,
    src: u32,
    dst: u32,
    bytes: u32,
    blocks: u32,
    vl: u8,
    /// A control packet (CNP or ACK): priority, no credits.
    cnp: bool,
    /// The control packet is an ACK (its `fecn` echoes the data packet's ECN).
    ack: bool,
    fecn: bool,
    live: bool,
    /// Input port the packet is heading for (set when it is put on a wire).
    at: u32,
    /// Time the tail has fully arrived in the buffer the packet sits in.
    tail: f64,
}

/// Credits on their way back to an output port.
#[derive(Clone, Copy)]
struct Returning {
    time: f64,
    vl: u8,
    blocks: u32,
}

/// An output port's state that transmission and arbitration read together
/// (one element, one bounds check, mostly one cache line).
#[derive(Clone, Copy)]
struct PortState {
    busy: bool,
    /// Whether the `LinkFree` ending the transmission in progress is in the
    /// calendar, and its time and reserved sequence number. Switch outputs
    /// put it there only once something waits for the port (see
    /// `transmit`); until then the port is busy while the event would not
    /// have fired.
    free_real: bool,
    free_time: f64,
    free_seq: u64,
    /// The earliest time of the credits returning (`Engine::returning`) and
    /// the time of the port's pending `CreditWake` (infinite if none).
    returning_min: f64,
    credit_wake: f64,
    /// Control packets waiting (sent first).
    prio: Queue,
    /// Where the VL arbitration tables stand.
    arb: ArbState,
    /// Data packets waiting in the VoQs for this output.
    waiting: u32,
}

impl PortState {
    const IDLE: PortState = PortState {
        busy: false,
        free_real: false,
        free_time: 0.0,
        free_seq: 0,
        returning_min: f64::INFINITY,
        credit_wake: f64::INFINITY,
        prio: EMPTY,
        arb: ArbState {
            high: TablePos { entry: 0, used: 0 },
            low: TablePos { entry: 0, used: 0 },
            high_sent: 0,
        },
        waiting: 0,
    };
}

/// The VL arbitration in force at every output: `Scenario::vl_arb` or the
/// round robin over VLs, weights as 64-byte blocks.
struct Arb {
    high: Vec<(u8, u32)>,
    low: Vec<(u8, u32)>,
    /// High-priority blocks that may be sent before the low-priority table
    /// has its turn (`u32::MAX`: unbounded; 1: one packet).
    high_limit: u32,
    /// HCAs arbitrate VLs by the tables (else a lottery over all flows).
    at_hcas: bool,
    /// The tables are the round robin over VLs (`VlArbitration::round_robin`):
    /// switch outputs take the direct path.
    plain: bool,
}

impl Arb {
    fn new(t: Option<&VlArbitration>, vls: u8) -> Self {
        let rr = VlArbitration::round_robin(vls);
        let t0 = t.unwrap_or(&rr);
        let plain = *t0 == rr;
        let w = |e: &[super::VlArbEntry]| e.iter().map(|e| (e.vl, u32::from(e.weight))).collect();
        Arb {
            high: w(&t0.high),
            low: w(&t0.low),
            high_limit: match t0.high_limit {
                255 => u32::MAX,
                0 => 1,
                l => u32::from(l) * 64,
            },
            at_hcas: t.is_some(),
            plain,
        }
    }

    /// The VL to serve next and what `avail` found on it (`avail(vl)`: what
    /// VL vl can send now, if anything), with the table position it came
    /// from; `None` if no VL of either table can send. The high-priority
    /// table goes first while it has sent less than its limit since the
    /// low-priority table's last turn.
    #[inline]
    fn pick<T>(
        &self,
        st: &ArbState,
        mut avail: impl FnMut(u8) -> Option<T>,
    ) -> Option<(u8, T, Pick)> {
        if self.high.is_empty() {
            return walk(&self.low, st.low, avail).map(|(p, vl, x)| (vl, x, Pick::Low(p)));
        }
        let first = st.high_sent < self.high_limit;
        if first {
            if let Some((p, vl, x)) = walk(&self.high, st.high, &mut avail) {
                return Some((vl, x, Pick::High(p, false)));
            }
        }
        if let Some((p, vl, x)) = walk(&self.low, st.low, &mut avail) {
            return Some((vl, x, Pick::Low(p)));
        }
        if !first {
            // The low-priority table had its turn and nothing to send.
            if let Some((p, vl, x)) = walk(&self.high, st.high, &mut avail) {
                return Some((vl, x, Pick::High(p, true)));
            }
        }
        None
    }

    /// `blocks` were sent on the pick: the entry's weight is spent, the
    /// high-priority count kept.
    #[inline]
    fn spend(&self, st: &mut ArbState, pick: Pick, blocks: u32) {
        match pick {
            Pick::High(p, reset) => {
                st.high = spend(&self.high, p, blocks);
                let base = if reset { 0 } else { st.high_sent };
                st.high_sent = base.saturating_add(blocks);
            }
            Pick::Low(p) => {
                st.low = spend(&self.low, p, blocks);
                st.high_sent = 0;
            }
        }
    }
}

/// A position in a VL arbitration table: the entry and the blocks its VL has
/// sent since the entry's turn began.
#[derive(Clone, Copy)]
struct TablePos {
    entry: u8,
    used: u16,
}

/// An output's VL arbitration state.
#[derive(Clone, Copy)]
struct ArbState {
    high: TablePos,
    low: TablePos,
    /// High-priority blocks sent since the low-priority table's last turn
    /// (saturating).
    high_sent: u32,
}

/// Which table a VL was picked from, at which position; for the high table,
/// whether the low one has just had its turn (the count restarts).
#[derive(Clone, Copy)]
enum Pick {
    High(TablePos, bool),
    Low(TablePos),
}

/// A switch output's pick by the tables (VL, input, table position) in one
/// word, so that `pick_by_tables`, kept out of line, returns it in a
/// register: returned as a tuple it came back through memory, read with
/// loads wider than the stores that wrote it, which stalled the caller.
#[derive(Clone, Copy)]
struct PackedPick(u64);

impl PackedPick {
    const NONE: PackedPick = PackedPick(u64::MAX);

    /// Bits 0-31 the input, 32-39 the VL, 40-47 the entry, 48-55 the blocks
    /// it has used (below its weight, at most 255, when it is picked), 56
    /// the high-priority table, 57 the restart of its count.
    #[inline]
    fn new(vl: u8, i: usize, pick: Pick) -> Self {
        let (high, reset, p) = match pick {
            Pick::High(p, reset) => (1u64, u64::from(reset), p),
            Pick::Low(p) => (0, 0, p),
        };
        debug_assert!(i <= u32::MAX as usize && p.used <= 255);
        PackedPick(
            i as u64
                | u64::from(vl) << 32
                | u64::from(p.entry) << 40
                | u64::from(p.used) << 48
                | high << 56
                | reset << 57,
        )
    }

    #[inline]
    fn get(self) -> Option<(u8, usize, Pick)> {
        let x = self.0;
        if x == u64::MAX {
            return None;
        }
        let p = TablePos {
            entry: (x >> 40) as u8,
            used: u16::from((x >> 48) as u8),
        };
        let pick = if x >> 56 & 1 != 0 {
            Pick::High(p, x >> 57 & 1 != 0)
        } else {
            Pick::Low(p)
        };
        Some(((x >> 32) as u8, x as u32 as usize, pick))
    }
}

/// From `pos`, one round of `table`: the first entry with weight left whose
/// VL `avail` finds something on. An entry whose VL has nothing loses the
/// rest of its turn (the next entry starts with its full weight).
#[inline]
fn walk<T>(
    table: &[(u8, u32)],
    pos: TablePos,
    mut avail: impl FnMut(u8) -> Option<T>,
) -> Option<(TablePos, u8, T)> {
    let n = table.len();
    let mut p = pos;
    for _ in 0..n {
        let (vl, w) = table[p.entry as usize];
        if u32::from(p.used) < w {
            if let Some(x) = avail(vl) {
                return Some((p, vl, x));
            }
        }
        p.entry = if p.entry as usize + 1 == n {
            0
        } else {
            p.entry + 1
        };
        p.used = 0;
    }
    None
}

/// The position after `blocks` were sent from the entry at `p`: the same
/// entry while weight is left (a packet is sent whole even if it exceeds
/// the rest), else the next one.
#[inline]
fn spend(table: &[(u8, u32)], mut p: TablePos, blocks: u32) -> TablePos {
    // Weights are at most 255 and a packet at most a few hundred blocks.
    let used = u32::from(p.used) + blocks;
    p.used = used.min(u32::from(u16::MAX)) as u16;
    if used >= table[p.entry as usize].1 {
        p.entry = if p.entry as usize + 1 == table.len() {
            0
        } else {
            p.entry + 1
        };
        p.used = 0;
    }
    p
}

/// Credits on their way back to one port, in order of time: `list[head..]`.
#[derive(Default)]
struct Returns {
    list: Vec<Returning>,
    head: usize,
}

impl Returns {
    #[inline]
    fn front(&self) -> Option<Returning> {
        self.list.get(self.head).copied()
    }

    fn clear(&mut self) {
        self.list.clear();
        self.head = 0;
    }

    /// Usually the latest return: appended; otherwise placed by time.
    /// Inlined into its caller with the rare steps out of line, and an
    /// appended return is written field by field into a slot made first:
    /// pushed whole, it was built on the stack field by field and read back
    /// with one wider load, which the processor cannot forward from those
    /// stores (a stall at every return).
    #[inline(always)]
    fn push(&mut self, r: Returning) {
        if self.head > 32 && 2 * self.head > self.list.len() {
            self.compact();
        }
        match self.list.last() {
            Some(b) if b.time > r.time => self.insert_by_time(r),
            _ => {
                self.list.push(Returning {
                    time: 0.0,
                    vl: 0,
                    blocks: 0,
                });
                let slot = self.list.last_mut().expect("just pushed");
                slot.time = r.time;
                slot.vl = r.vl;
                slot.blocks = r.blocks;
            }
        }
    }

    /// Drops the returns already taken.
    #[inline(never)]
    fn compact(&mut self) {
        self.list.drain(..self.head);
        self.head = 0;
    }

    /// Places a return due before the latest one by its time.
    #[inline(never)]
    fn insert_by_time(&mut self, r: Returning) {
        let i = self.head + self.list[self.head..].partition_point(|c| c.time <= r.time);
        self.list.insert(i, r);
    }
}

#[derive(Clone, Copy)]
struct Queue {
    head: u32,
    tail: u32,
}

const EMPTY: Queue = Queue {
    head: NIL,
    tail: NIL,
};

/// The windows (`Scenario::windows`) that hold a time, as a bit set, kept
/// for the interval between the window bounds around the last time asked
/// about: every time in it is in the same windows (a bound inside it would
/// be above the one and at or below the other), so a flow's deliveries or
/// injections look the windows up once per interval, not once per packet.
#[derive(Clone, Copy)]
struct WindowCache {
    /// The bounds around the last time (`lo <= t < hi`) and its windows.
    lo: f64,
    hi: f64,
    set: u64,
}

impl WindowCache {
    /// Holds no time.
    const EMPTY: WindowCache = WindowCache {
        lo: f64::INFINITY,
        hi: f64::NEG_INFINITY,
        set: 0,
    };

    /// Calls `add(j)` for every window `j` holding `t` (`from <= t < to`).
    /// More than 64 windows are looked up at each call.
    #[inline]
    fn each(&mut self, windows: &[(f64, f64)], t: f64, mut add: impl FnMut(usize)) {
        if windows.len() <= 64 {
            let mut set = self.windows(windows, t);
            while set != 0 {
                add(set.trailing_zeros() as usize);
                set &= set - 1;
            }
        } else {
            for (j, &(from, to)) in windows.iter().enumerate() {
                if t >= from && t < to {
                    add(j);
                }
            }
        }
    }

    /// The windows holding `t`, bit `j` for window `j` (at most 64).
    #[inline]
    fn windows(&mut self, windows: &[(f64, f64)], t: f64) -> u64 {
        if !(t >= self.lo && t < self.hi) {
            let mut c = WindowCache {
                lo: f64::NEG_INFINITY,
                hi: f64::INFINITY,
                set: 0,
            };
            for (j, &(from, to)) in windows.iter().enumerate() {
                if t >= from && t < to {
                    c.set |= 1 << j;
                }
                for x in [from, to] {
                    if x <= t {
                        c.lo = c.lo.max(x);
                    } else {
                        c.hi = c.hi.min(x);
                    }
                }
            }
            *self = c;
        }
        self.set
    }
}

struct Engine<'a, C: CongestionControl> {
    sc: &'a Scenario,
    cc: &'a C,
    cal: Calendar<Ev>,
    pool: Vec<Pkt>,
    free: Vec<u32>,
    v: usize,
    data_bytes: u32,
    data_blocks: u32,
    /// Data packet times (divisions done once): serialisation per port,
    /// sink drain, injection pacing before jitter.
    ser_data: Vec<f64>,
    /// Serialisation of a control packet (`Scenario::cnp_bytes`) per port.
    ser_ctl: Vec<f64>,
    sink_data: f64,
    inject_data: f64,
    // Per port (output side).
    ps: Vec<PortState>,
    arb: Arb,
    /// Round-robin pointer over the input ports, per output port and VL
    /// (`port * V + vl`): the input to look at first.
    rr_in: Vec<u32>,
    credits: Vec<i64>,
    /// Credits returning to each port, in order of time.
    returning: Vec<Returns>,
    mark: Vec<C::PortVl>,
    port_cc: Vec<C::Port>,
    victim: Vec<bool>,
    // Per port (input side).
    in_used: Vec<u32>,
    // VoQs of switch s: voq_base[s] + (out_local * V + vl) * radix + in_local.
    voq_base: Vec<u32>,
    voq: Vec<Queue>,
    voq_blocks: Vec<u32>,
    // Per host.
    /// End of the sink's drain of the last packet sent to the host.
    sink_free: Vec<f64>,
    /// Packets in the host's input buffer: (end of drain, VL, blocks), in
    /// order (for `in_used` at the next arrival; see `sink_arrival`).
    sink_held: Vec<VecDeque<(f64, u8, u32)>>,
    next_inject: Vec<f64>,
    wake: Vec<f64>,
    /// The host's end of transmission is settled (`transmit`) and its
    /// wake-up follows its flows and credits (`wake_when_ready`).
    gated: Vec<bool>,
    /// The VLs (bit per VL) whose credits held back one of a gated host's
    /// flows at its last `wake_when_ready`: only their returns can bring
    /// its wake-up forward.
    credit_limited: Vec<u16>,
    host_flows: Vec<Vec<u32>>,
    rng: Vec<Stream>,
    // Per flow.
    started: Vec<bool>,
    next_allowed: Vec<f64>,
    /// Earliest next injection before the plug-in's gap (ACK re-timing).
    base_allowed: Vec<f64>,
    outstanding: Vec<u32>,
    state_of: Vec<u32>,
    /// Flows of each source state (level trace, ACK re-timing).
    state_flows: Vec<Vec<u32>>,
    src_state: Vec<C::Source>,
    timer_on: Vec<bool>,
    timer_members: Vec<Vec<u32>>,
    cand: Vec<u32>,
    /// The plug-in never replies to data packets: hosts send no control
    /// packets (see `transmit`).
    quiet_hosts: bool,
    /// Data VL of each flow (SL mod the data VLs).
    flow_vl: Vec<u8>,
    /// Per flow, the windows holding its last delivery and its last
    /// injection.
    win_delivered: Vec<WindowCache>,
    win_sent: Vec<WindowCache>,
    out: Counters,
    sample_k: usize,
}

/// Runs the scenario with congestion-control plug-in `cc` until `sc.duration`.
pub fn run<C: CongestionControl>(
    sc: &Scenario,
    cc: &C,
    ctx: &TaskContext,
) -> Result<Counters, SolveError> {
    let mut e = Engine::new(sc, cc, ctx.seed);
    e.start();
    let mut popped = 0u64;
    while let Some((t, ev)) = e.cal.pop() {
        if t > sc.duration {
            break;
        }
        e.out.events += 1;
        popped += 1;
        if popped & 0xFFFF == 0 {
            ctx.check_cancel()?;
            if e.out.events > sc.max_events {
                return Err(SolveError::param(
                    "duration",
                    format!(
                        "the run needs more than {} events (the limit); shorten it",
                        sc.max_events
                    ),
                ));
            }
        }
        e.handle(ev);
    }
    Ok(e.finish())
}

impl<'a, C: CongestionControl> Engine<'a, C> {
    fn new(sc: &'a Scenario, cc: &'a C, seed: u64) -> Self {
        let f = &sc.fabric;
        let np = f.ports.len();
        let v = sc.vls as usize;
        let switches = f.sw_first.len() - 1;
        let mut voq_base = Vec::with_capacity(switches + 1);
        let mut total = 0u32;
        for s in 0..switches as u32 {
            voq_base.push(total);
            let k = f.radix(s);
            total += k * k * v as u32;
        }
        voq_base.push(total);
        let hosts = f.hosts as usize;
        let mut host_flows = vec![Vec::new(); hosts];
        for (i, fl) in sc.flows.iter().enumerate() {
            host_flows[fl.src as usize].push(i as u32);
        }
        // CC state per flow (QP level) or per host SL (SL level).
        let nflows = sc.flows.len();
        let nstates = if sc.cc_per_sl {
            hosts * SLS as usize
        } else {
            nflows
        };
        let mut timer_members = vec![Vec::new(); hosts * SLS as usize];
        let mut state_of = Vec::with_capacity(nflows);
        for (i, fl) in sc.flows.iter().enumerate() {
            let key = fl.src * SLS + fl.sl as u32;
            let st = if sc.cc_per_sl { key } else { i as u32 };
            state_of.push(st);
            if !timer_members[key as usize].contains(&st) {
                timer_members[key as usize].push(st);
            }
        }
        let mut state_flows = vec![Vec::new(); nstates];
        let mut src_state = vec![C::Source::default(); nstates];
        for (i, fl) in sc.flows.iter().enumerate() {
            let st = state_of[i] as usize;
            if state_flows[st].is_empty() {
                src_state[st] = cc.init_source(fl.sl);
            }
            state_flows[st].push(i as u32);
        }
        let victim = (0..np)
            .map(|p| {
                sc.victim_mask_hca
                    && matches!(f.ports[p].node, NodeRef::Switch(_))
                    && matches!(f.ports[f.ports[p].peer as usize].node, NodeRef::Host(_))
            })
            .collect();
        let data_bytes = sc.mtu + sc.header;
        let nbins = ((sc.duration / sc.bin) * (1.0 - 1e-12)).ceil() as usize;
        Engine {
            sc,
            cc,
            cal: Calendar::new(),
            pool: Vec::new(),
            free: Vec::new(),
            v,
            data_bytes,
            data_blocks: data_bytes.div_ceil(64),
            ser_data: f
                .ports
                .iter()
                .map(|pt| data_bytes as f64 / pt.rate)
                .collect(),
            ser_ctl: f
                .ports
                .iter()
                .map(|pt| sc.cnp_bytes as f64 / pt.rate)
                .collect(),
            sink_data: data_bytes as f64 / sc.sink_rate,
            inject_data: data_bytes as f64 / sc.inject_rate,
            ps: vec![PortState::IDLE; np],
            arb: Arb::new(sc.vl_arb.as_ref(), sc.vls),
            rr_in: vec![0; np * v],
            returning: (0..np).map(|_| Returns::default()).collect(),
            credits: vec![sc.buffer_blocks as i64; np * v],
            mark: vec![C::PortVl::default(); np * v],
            port_cc: vec![C::Port::default(); np],
            victim,
            in_used: vec![0; np * v],
            voq_base,
            voq: vec![EMPTY; total as usize],
            voq_blocks: vec![0; total as usize],
            sink_free: vec![0.0; hosts],
            sink_held: vec![VecDeque::new(); hosts],
            next_inject: vec![0.0; hosts],
            wake: vec![f64::INFINITY; hosts],
            gated: vec![false; hosts],
            credit_limited: vec![0; hosts],
            host_flows,
            rng: (0..hosts as u64)
                .map(|h| Stream::new(seed, 1000 + h))
                .collect(),
            started: vec![false; nflows],
            next_allowed: vec![0.0; nflows],
            base_allowed: vec![0.0; nflows],
            outstanding: vec![0; nflows],
            state_of,
            state_flows,
            src_state,
            timer_on: vec![false; hosts * SLS as usize],
            timer_members,
            cand: Vec::new(),
            quiet_hosts: cc.reply(false) == Reply::Nothing && cc.reply(true) == Reply::Nothing,
            flow_vl: sc
                .flows
                .iter()
                .map(|fl| (fl.sl as usize % v) as u8)
                .collect(),
            win_delivered: vec![WindowCache::EMPTY; nflows],
            win_sent: vec![WindowCache::EMPTY; nflows],
            out: Counters::new(nflows, switches, nbins, sc.windows.len(), sc.samples),
            sample_k: 0,
        }
    }

    fn start(&mut self) {
        for (i, fl) in self.sc.flows.iter().enumerate() {
            self.cal.schedule(fl.start, Ev::FlowStart(i as u32));
        }
        if self.cc.trace_level() {
            for st in 0..self.src_state.len() {
                self.trace(st);
            }
        }
        if self.sc.samples {
            self.cal.schedule(self.sc.bin, Ev::Sample);
        } else {
            // Counted as the events they would have been (`sample`
            // schedules the next one a bin after each).
            let mut t = self.sc.bin;
            while t <= self.sc.duration {
                self.out.events += 1;
                t += self.sc.bin;
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev {
            Ev::LinkFree(p) => {
                self.ps[p as usize].busy = false;
                self.arbitrate(p);
            }
            Ev::Arrive(k) => self.arrive(k),
            Ev::CreditWake(p) => {
                // Not a model event: the credit returns were counted.
                self.out.events -= 1;
                if self.cal.now() == self.ps[p as usize].credit_wake {
                    self.ps[p as usize].credit_wake = f64::INFINITY;
                    self.arbitrate(p);
                }
            }
            Ev::SinkDone(k) => self.sink_done(k),
            Ev::HostWake(h) => {
                if self.cal.now() == self.wake[h as usize] {
                    self.wake[h as usize] = f64::INFINITY;
                    self.try_host(h);
                }
            }
            Ev::FlowStart(f) => {
                self.started[f as usize] = true;
                self.try_host(self.sc.flows[f as usize].src);
            }
            Ev::CcTimer(key) => self.cc_timer(key),
            Ev::Sample => self.sample(),
        }
    }

    fn arbitrate(&mut self, p: u32) {
        match self.sc.fabric.ports[p as usize].node {
            NodeRef::Host(h) => self.try_host(h),
            NodeRef::Switch(s) => self.try_switch(s, p),
        }
    }

    /// `blocks` credits of `vl` are due back at output port `p` at `t`.
    /// They are not an event of their own: the port adds the credits due by
    /// the time it next arbitrates (`take_returned`), and a `CreditWake` is
    /// scheduled only where arbitration at `t` could find something to send
    /// (an idle port with packets waiting for credits). The count is read
    /// only by arbitration, so it is the same as with an event per return,
    /// except against other events at exactly `t` (credits due at the
    /// current time count as arrived).
    fn credit(&mut self, t: f64, p: u32, vl: u8, blocks: u32) {
        let pi = p as usize;
        let r = Returning {
            time: t,
            vl,
            blocks,
        };
        self.returning[pi].push(r);
        if t < self.ps[pi].returning_min {
            self.ps[pi].returning_min = t;
        }
        // Counted as the model event it was.
        if t <= self.sc.duration {
            self.out.events += 1;
        }
        let waits = match self.sc.fabric.ports[pi].node {
            NodeRef::Switch(_) => self.ps[pi].waiting > 0 && !self.port_busy(pi),
            NodeRef::Host(h) => {
                let hi = h as usize;
                if self.gated[hi] {
                    // The host's wake-up follows the credits
                    // (`wake_when_ready`); a return due at `t` can bring it
                    // forward to `t` or its paced time, not before, and only
                    // if credits of its VL held a flow back.
                    if self.credit_limited[hi] >> vl & 1 != 0
                        && self.wake[hi] > t.max(self.next_inject[hi])
                    {
                        self.wake_when_ready(h);
                    }
                    false
                } else {
                    !self.port_busy(pi)
                        && self.credits[pi * self.v + vl as usize] < self.data_blocks as i64
                }
            }
        };
        if waits && t < self.ps[pi].credit_wake {
            self.ps[pi].credit_wake = t;
            self.cal.schedule(t, Ev::CreditWake(p));
        }
    }

    /// Adds the credits due at port `pi` by now.
    #[inline]
    fn take_returned(&mut self, pi: usize) {
        if self.cal.now() >= self.ps[pi].returning_min {
            self.add_returned(pi);
        }
    }

    fn add_returned(&mut self, pi: usize) {
        let now = self.cal.now();
        while let Some(c) = self.returning[pi].front() {
            if c.time > now {
                self.ps[pi].returning_min = c.time;
                return;
            }
            self.returning[pi].head += 1;
            self.add_credits(pi, c);
        }
        self.returning[pi].clear();
        self.ps[pi].returning_min = f64::INFINITY;
    }

    /// Returned credits back in port `pi`'s count (an overflow is flagged).
    fn add_credits(&mut self, pi: usize, c: Returning) {
        let i = pi * self.v + c.vl as usize;
        self.credits[i] += i64::from(c.blocks);
        if self.credits[i] > self.sc.buffer_blocks as i64 {
            self.out.credit_overflow = true;
        }
    }

    /// Port `p` has something that waits for credits: arbitrate again when
    /// the next credits are due (if none are on their way, their return
    /// schedules it).
    fn wake_for_credits(&mut self, p: u32) {
        let pi = p as usize;
        let t = self.ps[pi].returning_min;
        if t < self.ps[pi].credit_wake {
            self.ps[pi].credit_wake = t;
            self.cal.schedule(t, Ev::CreditWake(p));
        }
    }

    /// Whether output `pi` is sending (its LinkFree, in the calendar or
    /// not, has not fired).
    fn port_busy(&self, pi: usize) -> bool {
        self.ps[pi].busy
            && (self.ps[pi].free_real
                || !self.cal.fired(self.ps[pi].free_time, self.ps[pi].free_seq))
    }

    fn alloc(&mut self, pkt: Pkt) -> u32 {
        if let Some(k) = self.free.pop() {
            self.pool[k as usize] = pkt;
            k
        } else {
            self.pool.push(pkt);
            (self.pool.len() - 1) as u32
        }
    }

    fn release(&mut self, k: u32) {
        self.pool[k as usize].live = false;
        self.free.push(k);
    }

    fn push(pool: &mut [Pkt], q: &mut Queue, k: u32) {
        pool[k as usize].next = NIL;
        if q.tail == NIL {
            q.head = k;
        } else {
            pool[q.tail as usize].next = k;
        }
        q.tail = k;
    }

    fn pop(pool: &[Pkt], q: &mut Queue) -> u32 {
        let k = q.head;
        q.head = pool[k as usize].next;
        if q.head == NIL {
            q.tail = NIL;
        }
        k
    }

    /// Serialisation time of `bytes` on port `p`: the quotient computed once
    /// per port for data and control packets (the same value), at each call
    /// otherwise.
    #[inline]
    fn ser(&self, bytes: u32, p: u32) -> f64 {
        if bytes == self.data_bytes {
            self.ser_data[p as usize]
        } else if bytes == self.sc.cnp_bytes {
            self.ser_ctl[p as usize]
        } else {
            bytes as f64 / self.sc.fabric.ports[p as usize].rate
        }
    }

    /// Puts packet `k` on the wire of output port `p`; returns the end of transmission.
    fn transmit(&mut self, p: u32, k: u32) -> f64 {
        self.transmit_at(p, k, self.cal.now())
    }

    /// `transmit` from `now` on, which may lie ahead of the calendar's time
    /// for a reply settled in advance (`sink_arrival`).
    fn transmit_at(&mut self, p: u32, k: u32, now: f64) -> f64 {
        let port = self.sc.fabric.ports[p as usize];
        let pk = self.pool[k as usize];
        let ser = self.ser(pk.bytes, p);
        let end = (now + ser).max(pk.tail);
        self.ps[p as usize].busy = true;
        // The port's LinkFree takes its sequence number now, so simultaneous
        // events keep their order, but enters the calendar only if it can
        // change something (`settled`: counted as the event it stands for):
        // - a switch output: once something waits for the port (`try_switch`
        //   schedules it then);
        // - a host without control packets to send, paced beyond the end of
        //   this transmission: its LinkFree would only find the next
        //   injection due at `next` and schedule the wake-up for it, which is
        //   scheduled now instead.
        // The port is busy while a settled LinkFree would not have fired.
        let pi = p as usize;
        let seq = self.cal.reserve();
        self.ps[pi].free_time = end;
        self.ps[pi].free_seq = seq;
        let settled = match port.node {
            NodeRef::Switch(_) => self.ps[pi].waiting == 0 && self.ps[pi].prio.head == NIL,
            NodeRef::Host(h) => {
                // A quiet host paced beyond this transmission, or a host that
                // replies with nothing else to send: its LinkFree would only
                // look for the next injection. The caller (`inject`,
                // `try_host`) wakes the host when it can send instead
                // (`wake_when_ready`); a reply queued meanwhile puts the
                // LinkFree back in the calendar (`try_host`).
                let settle = if self.quiet_hosts {
                    end < self.next_inject[h as usize]
                } else {
                    self.ps[pi].prio.head == NIL
                };
                self.gated[h as usize] = settle;
                settle
            }
        };
        self.ps[pi].free_real = !settled;
        if !settled {
            self.cal.schedule_reserved(end, seq, Ev::LinkFree(p));
        } else if end <= self.sc.duration {
            self.out.events += 1;
        }
        if !pk.cnp {
            let i = p as usize * self.v + pk.vl as usize;
            self.credits[i] -= pk.blocks as i64;
            self.out.min_credits = self.out.min_credits.min(self.credits[i]);
        }
        let peer = port.peer;
        let tail = end + port.latency;
        self.pool[k as usize].tail = tail;
        self.pool[k as usize].at = peer;
        let (at, sink) = match self.sc.fabric.ports[peer as usize].node {
            NodeRef::Switch(s) => {
                let lat = self.sc.switch_latency;
                if self.sc.cut_through {
                    // Cut-through: routable once the head is in, but granted
                    // no earlier than the onward link can send without
                    // running ahead of the tail (a faster output would
                    // otherwise sit idle, held by a slow input).
                    let out = self.sc.fabric.next_port(s, pk.dst);
                    let ser_out = self.ser(pk.bytes, out);
                    let at = (end - ser + port.latency).max(tail - ser_out) + lat;
                    (at, None)
                } else {
                    (tail + lat, None)
                }
            }
            NodeRef::Host(h) => {
                let at = if self.sc.cut_through {
                    end - ser + port.latency
                } else {
                    tail
                };
                (at, (!pk.cnp).then_some(h))
            }
        };
        match sink {
            Some(h) => self.sink_arrival(h, k, at),
            None => self.cal.schedule(at, Ev::Arrive(k)),
        }
        end
    }

    fn try_switch(&mut self, s: u32, p: u32) {
        let pi = p as usize;
        if self.ps[pi].busy {
            if self.ps[pi].free_real {
                return;
            }
            if !self.cal.fired(self.ps[pi].free_time, self.ps[pi].free_seq) {
                if self.ps[pi].waiting > 0 || self.ps[pi].prio.head != NIL {
                    // Something now waits: the port's LinkFree must fire.
                    let t = self.ps[pi].free_time;
                    self.cal
                        .schedule_reserved(t, self.ps[pi].free_seq, Ev::LinkFree(p));
                    self.ps[pi].free_real = true;
                    if t <= self.sc.duration {
                        self.out.events -= 1;
                    }
                }
                return;
            }
            // The transmission ended with nothing waiting (no event).
            self.ps[pi].busy = false;
        }
        if self.ps[pi].prio.head != NIL {
            let k = Self::pop(&self.pool, &mut self.ps[pi].prio);
            self.transmit(p, k);
            self.release_after_send(k);
            return;
        }
        if self.ps[pi].waiting == 0 {
            return;
        }
        self.take_returned(pi);
        let f = &self.sc.fabric;
        let radix = f.radix(s) as usize;
        let out_local = f.ports[pi].local as usize;
        // VL arbitration picks the VL; within it the inputs take turns from
        // the VL's own pointer, skipping VoQs whose head lacks credits.
        let first = self.voq_base[s as usize] as usize + out_local * self.v * radix;
        // Per-(port, VL) arrays are indexed from `pv0`.
        let pv0 = pi * self.v;
        let picked = if self.arb.plain {
            // Round robin over the VLs (the default table, spelled out: the
            // entry is the next VL in turn, one packet per turn).
            let mut vl = self.ps[pi].arb.low.entry as usize;
            let mut found = None;
            for _ in 0..self.v {
                if let Some(i) = self.input_in_turn(pv0 + vl, first + vl * radix, radix) {
                    found = Some((vl as u8, i, None));
                    break;
                }
                vl += 1;
                if vl == self.v {
                    vl = 0;
                }
            }
            found
        } else {
            self.pick_by_tables(pi, first, radix)
                .get()
                .map(|(vl, i, pick)| (vl, i, Some(pick)))
        };
        let Some((vl, i, pick)) = picked else {
            // Packets wait for credits: wake the port when the next ones are due.
            self.wake_for_credits(p);
            return;
        };
        let vl = vl as usize;
        let pv = pv0 + vl;
        let credit = self.credits[pv];
        let base = first + vl * radix;
        let head = self.voq[base + i].head;
        let blocks = self.pool[head as usize].blocks;
        let k = Self::pop(&self.pool, &mut self.voq[base + i]);
        self.voq_blocks[base + i] -= blocks;
        if self.cc.enabled() {
            // The Port VL's state as the packet leaves: the VoQs
            // hold what still waits behind it.
            let view = PortView {
                voq_blocks: &self.voq_blocks[base..base + radix],
                capacity_blocks: self.sc.buffer_blocks,
                credits_available: credit - blocks as i64 >= self.data_blocks as i64,
                victim_mask: self.victim[pi],
                packet_blocks: blocks,
            };
            if self
                .cc
                .mark(&mut self.port_cc[pi], &mut self.mark[pv], &view)
            {
                self.pool[k as usize].fecn = true;
                self.out.marks += 1;
                self.out.flow_marks[self.pool[k as usize].flow as usize] += 1;
            }
        }
        self.ps[pi].waiting -= 1;
        let q = self.sc.fabric.sw_first[s as usize] + i as u32;
        self.in_used[q as usize * self.v + vl] -= blocks;
        let end = self.transmit(p, k);
        let inport = self.sc.fabric.ports[q as usize];
        self.credit(end + inport.latency, inport.peer, vl as u8, blocks);
        self.rr_in[pv] = if i + 1 == radix { 0 } else { i as u32 + 1 };
        match pick {
            Some(pick) => self.arb.spend(&mut self.ps[pi].arb, pick, blocks),
            // Round robin over the VLs: the next VL's turn.
            None => self.ps[pi].arb.low.entry = if vl + 1 == self.v { 0 } else { vl as u8 + 1 },
        }
    }

    /// Configured tables at switch output `pi` (VoQs of its VL v from
    /// `first + v * radix`): the VL and the input to serve. Kept out of
    /// `try_switch`'s body, which the round robin over VLs runs.
    #[inline(never)]
    fn pick_by_tables(&self, pi: usize, first: usize, radix: usize) -> PackedPick {
        let pv0 = pi * self.v;
        self.arb
            .pick(&self.ps[pi].arb, |vl| {
                let vl = vl as usize;
                self.input_in_turn(pv0 + vl, first + vl * radix, radix)
            })
            .map_or(PackedPick::NONE, |(vl, i, pick)| {
                PackedPick::new(vl, i, pick)
            })
    }

    /// The input in turn at an output on a VL (`pv`: the output and VL's
    /// index in the per-(port, VL) arrays; their VoQs `base..base + radix`):
    /// from the VL's pointer on, the first whose head packet has credits.
    #[inline]
    fn input_in_turn(&self, pv: usize, base: usize, radix: usize) -> Option<usize> {
        let credit = self.credits[pv];
        let mut i = self.rr_in[pv] as usize;
        for _ in 0..radix {
            let head = self.voq[base + i].head;
            if head != NIL && credit >= self.pool[head as usize].blocks as i64 {
                return Some(i);
            }
            i += 1;
            if i == radix {
                i = 0;
            }
        }
        None
    }

    /// CNPs are not buffered downstream (no credits); nothing to release here,
    /// the packet lives on until it arrives.
    fn release_after_send(&mut self, _k: u32) {}

    fn arrive(&mut self, k: u32) {
        let pk = self.pool[k as usize];
        let q = pk.at;
        match self.sc.fabric.ports[q as usize].node {
            NodeRef::Switch(s) => {
                let out = self.sc.fabric.next_port(s, pk.dst);
                if pk.cnp {
                    Self::push(&mut self.pool, &mut self.ps[out as usize].prio, k);
                } else {
                    let iu = q as usize * self.v + pk.vl as usize;
                    let before = self.in_used[iu];
                    self.in_used[iu] += pk.blocks;
                    self.out.max_in_used = self.out.max_in_used.max(self.in_used[iu]);
                    let f = &self.sc.fabric;
                    let radix = f.radix(s) as usize;
                    let idx = self.voq_base[s as usize] as usize
                        + (f.ports[out as usize].local as usize * self.v + pk.vl as usize) * radix
                        + f.ports[q as usize].local as usize;
                    Self::push(&mut self.pool, &mut self.voq[idx], k);
                    self.voq_blocks[idx] += pk.blocks;
                    self.ps[out as usize].waiting += 1;
                    if self.cc.watches_input_full() {
                        let room = |used: u32| used + self.data_blocks <= self.sc.buffer_blocks;
                        if room(before) && !room(self.in_used[iu]) {
                            self.input_full(s, q, pk.vl);
                        }
                    }
                }
                self.try_switch(s, out);
            }
            NodeRef::Host(h) => {
                if pk.ack {
                    self.out.acks_received += 1;
                    self.ack(h, pk.flow, pk.fecn);
                    self.release(k);
                } else {
                    // Data packets reach the sink without an event (`sink_arrival`).
                    debug_assert!(pk.cnp);
                    self.out.becns += 1;
                    self.becn(pk.flow);
                    self.release(k);
                }
            }
        }
    }

    /// Data packet `k`, just put on the wire to host `h`, reaches the host's
    /// sink at `at`. The sink is a FIFO fed by that one link and drained at
    /// a fixed rate, so nothing between now and `at` can change what happens
    /// to the packet there: its arrival is settled now, without an event
    /// (counted as the event it was), and its end of drain is computed as
    /// the arrival would have: it starts when the packet has arrived and the
    /// sink has drained the one before, and cannot end before its tail has
    /// arrived. Where the host replies to the packet (a CNP or an ACK; the
    /// packet's FECN bit, which decides it, is set before this last hop)
    /// the end of drain is a `SinkDone` event; otherwise nothing happens
    /// then but delivery and the credit return, which are settled now too
    /// (the credits are returned at the time they are due, see `credit`).
    fn sink_arrival(&mut self, h: u32, k: u32, at: f64) {
        let hi = h as usize;
        let pk = self.pool[k as usize];
        if at <= self.sc.duration {
            self.out.events += 1;
        }
        let drain = if pk.bytes == self.data_bytes {
            self.sink_data
        } else {
            pk.bytes as f64 / self.sc.sink_rate
        };
        let done = (at.max(self.sink_free[hi]) + drain).max(pk.tail);
        self.sink_free[hi] = done;
        // The input buffer at the arrival: the packets before it that have
        // not drained by then, and this one.
        let base = pk.at as usize * self.v;
        while let Some(&(t, vl, blocks)) = self.sink_held[hi].front() {
            if t > at {
                break;
            }
            self.in_used[base + vl as usize] -= blocks;
            self.sink_held[hi].pop_front();
        }
        let iu = base + pk.vl as usize;
        self.in_used[iu] += pk.blocks;
        self.out.max_in_used = self.out.max_in_used.max(self.in_used[iu]);
        self.sink_held[hi].push_back((done, pk.vl, pk.blocks));
        let replies = !self.quiet_hosts && self.cc.reply(pk.fecn) != Reply::Nothing;
        if replies && !self.host_flows[hi].is_empty() {
            self.cal.schedule(done, Ev::SinkDone(k));
        } else if done <= self.sc.duration {
            self.out.events += 1;
            self.deliver(k, done);
            if replies {
                self.settle_reply(h, k, done);
            }
            self.release(k);
        }
    }

    /// The reply to data packet `k`, drained at `done` by host `h`, which
    /// has no flows: its port sends only replies, in the order their packets
    /// drain (a FIFO), each from the end of its drain or of the reply before
    /// it, whichever is later. Nothing else touches that port, so the reply's
    /// transmission is settled now (its `SinkDone` and `LinkFree` counted as
    /// the events they were); only its arrival at the switch is an event.
    fn settle_reply(&mut self, h: u32, k: u32, done: f64) {
        let p = self.sc.fabric.host_port[h as usize];
        let pi = p as usize;
        let start = if self.ps[pi].busy {
            done.max(self.ps[pi].free_time)
        } else {
            done
        };
        let c = self.reply(k, done);
        self.pool[c as usize].tail = start;
        // Its LinkFree is settled too (`transmit`: nothing waits for the
        // port); a reply sent after the end stays in flight, as it would.
        self.transmit_at(p, c, start);
    }

    /// A reply (CNP or ACK, `Scenario::cnp_bytes`) to data packet `k`, made
    /// at `now` by its destination; counted.
    fn reply(&mut self, k: u32, now: f64) -> u32 {
        let pk = self.pool[k as usize];
        let ack = self.cc.reply(pk.fecn) == Reply::Ack;
        if ack {
            self.out.acks += 1;
        } else {
            self.out.cnps += 1;
        }
        let cnp = Pkt {
            next: NIL,
            flow: pk.flow,
            src: pk.dst,
            dst: pk.src,
            bytes: self.sc.cnp_bytes,
            blocks: self.sc.cnp_bytes.div_ceil(64),
            vl: pk.vl,
            cnp: true,
            ack,
            fecn: ack && pk.fecn,
            live: true,
            at: NIL,
            tail: now,
        };
        self.alloc(cnp)
    }

    /// Data packet `k` has drained from its destination's sink at `now`:
    /// counted as delivered, its credits returned.
    fn deliver(&mut self, k: u32, now: f64) {
        let pk = self.pool[k as usize];
        self.out.delivered += 1;
        self.out.delivered_bytes += self.sc.mtu as u64;
        let f = pk.flow as usize;
        if self.sc.samples {
            let b = ((now / self.sc.bin) as usize).min(self.out.nbins - 1);
            self.out.bin_bytes[f * self.out.nbins + b] += self.sc.mtu as f64;
        }
        let sc = self.sc;
        let bytes = &mut self.out.window_bytes[f * sc.windows.len()..];
        self.win_delivered[f].each(&sc.windows, now, |j| bytes[j] += sc.mtu as f64);
        let port = self.sc.fabric.ports[pk.at as usize];
        self.credit(now + port.latency, port.peer, pk.vl, pk.blocks);
    }

    /// `SinkDone(k)`: delivery, and the host's reply to the data packet.
    fn sink_done(&mut self, k: u32) {
        let now = self.cal.now();
        self.deliver(k, now);
        let pk = self.pool[k as usize];
        let h = pk.dst;
        let hp = pk.at;
        if self.cc.reply(pk.fecn) != Reply::Nothing {
            let c = self.reply(k, now);
            Self::push(&mut self.pool, &mut self.ps[hp as usize].prio, c);
            self.try_host(h);
        }
        self.release(k);
    }

    /// Input buffer (port `q`, `vl`) of switch `s` just filled: every output
    /// that packets in it wait for learns its count of waiting packets.
    fn input_full(&mut self, s: u32, q: u32, vl: u8) {
        self.out.input_full[s as usize] += 1;
        let f = &self.sc.fabric;
        let radix = f.radix(s) as usize;
        let in_local = f.ports[q as usize].local as usize;
        let first = f.sw_first[s as usize] as usize;
        for o in 0..radix {
            let idx =
                self.voq_base[s as usize] as usize + (o * self.v + vl as usize) * radix + in_local;
            if self.voq[idx].head != NIL {
                let p = first + o;
                self.cc
                    .on_input_full(&mut self.port_cc[p], self.ps[p].waiting);
            }
        }
    }

    /// An ACK of `flow` arrived at its source host `h`.
    fn ack(&mut self, h: u32, flow: u32, ecn: bool) {
        let fi = flow as usize;
        self.outstanding[fi] = self.outstanding[fi].saturating_sub(1);
        let st = self.state_of[fi] as usize;
        self.cc.on_ack(&mut self.src_state[st], ecn);
        if self.cc.trace_level() {
            self.trace(st);
        }
        let gap = self.cc.gap(&self.src_state[st]);
        for i in 0..self.state_flows[st].len() {
            let g = self.state_flows[st][i] as usize;
            self.next_allowed[g] = self.base_allowed[g] + gap;
        }
        self.try_host(h);
    }

    /// Appends the level of source state `st` to its flows' traces.
    fn trace(&mut self, st: usize) {
        let now = self.cal.now();
        let lv = self.cc.level(&self.src_state[st]);
        for &f in &self.state_flows[st] {
            self.out.level_trace[f as usize].push((now, lv));
        }
    }

    fn becn(&mut self, flow: u32) {
        let st = self.state_of[flow as usize] as usize;
        if self.cc.on_becn(&mut self.src_state[st]) {
            let fl = &self.sc.flows[flow as usize];
            let key = fl.src * SLS + fl.sl as u32;
            if !self.timer_on[key as usize] {
                self.timer_on[key as usize] = true;
                self.cal
                    .schedule_in(self.cc.timer_period(), Ev::CcTimer(key));
            }
        }
    }

    fn cc_timer(&mut self, key: u32) {
        let mut again = false;
        for i in 0..self.timer_members[key as usize].len() {
            let st = self.timer_members[key as usize][i] as usize;
            again |= self.cc.on_timer(&mut self.src_state[st]);
        }
        self.timer_on[key as usize] = again;
        if again {
            self.cal
                .schedule_in(self.cc.timer_period(), Ev::CcTimer(key));
        }
    }

    fn wake_at(&mut self, h: u32, t: f64) {
        if t < self.wake[h as usize] {
            self.wake[h as usize] = t;
            self.cal.schedule(t, Ev::HostWake(h));
        }
    }

    /// Host `h` after a transmission whose LinkFree is settled (`gated`):
    /// wakes it at the earliest time, from its next paced injection and the
    /// end of the transmission on, at which one of its
    /// flows may send and holds the credits for a packet, counting the
    /// credits known to be on their way; a new return of a VL whose credits
    /// held a flow back calls this again (`credit`), and so do a flow's
    /// start and an ACK's re-timing while the port sends
    /// (`gated_while_busy`); each can only bring the time forward (a wake-up
    /// that then finds nothing computes it again). Woken earlier (at the end
    /// of the transmission, the paced time, then at each credit return) it
    /// would only find nothing to send and wait again, so the one wake-up
    /// stands for those steps; it is counted as the paced wake-up it
    /// replaces.
    fn wake_when_ready(&mut self, h: u32) {
        let hi = h as usize;
        let pi = self.sc.fabric.host_port[hi] as usize;
        // Not before the port is free (its settled LinkFree fires first:
        // its number was reserved before this wake-up's) nor before now.
        let from = self.next_inject[hi]
            .max(self.ps[pi].free_time)
            .max(self.cal.now());
        let mut t = f64::INFINITY;
        let mut limited = 0u16;
        for &f in &self.host_flows[hi] {
            let fi = f as usize;
            if !self.started[fi] || self.outstanding[fi] >= self.cc.window() {
                continue;
            }
            let base = from.max(self.next_allowed[fi]);
            let vl = self.flow_vl[fi];
            let ready = self.credit_time(pi, vl);
            if ready > base {
                limited |= 1 << vl;
            }
            t = t.min(base.max(ready));
        }
        self.credit_limited[hi] = limited;
        if t.is_finite() {
            self.wake_at(h, t);
        }
    }

    /// Host `h`'s port `p` is sending and its LinkFree is settled (`gated`)
    /// when something may have changed what the host can do: a reply was
    /// queued (the LinkFree goes back in the calendar under its reserved
    /// number, so it sends the reply as it would have), or a flow started,
    /// an ACK re-timed a flow or a wake-up found the port busy (the wake-up
    /// is computed again).
    fn gated_while_busy(&mut self, h: u32, p: u32) {
        let pi = p as usize;
        if self.ps[pi].prio.head != NIL {
            let t = self.ps[pi].free_time;
            self.cal
                .schedule_reserved(t, self.ps[pi].free_seq, Ev::LinkFree(p));
            self.ps[pi].free_real = true;
            self.gated[h as usize] = false;
            if t <= self.sc.duration {
                self.out.events -= 1;
            }
        } else {
            self.wake_when_ready(h);
        }
    }

    /// When output `pi` holds the credits of `vl` for a data packet, by the
    /// returns known now (-inf: already; inf: not with these).
    fn credit_time(&self, pi: usize, vl: u8) -> f64 {
        let need = self.data_blocks as i64;
        let mut have = self.credits[pi * self.v + vl as usize];
        if have >= need {
            return f64::NEG_INFINITY;
        }
        let r = &self.returning[pi];
        for c in &r.list[r.head..] {
            if c.vl == vl {
                have += i64::from(c.blocks);
                if have >= need {
                    return c.time;
                }
            }
        }
        f64::INFINITY
    }

    fn try_host(&mut self, h: u32) {
        let p = self.sc.fabric.host_port[h as usize];
        let pi = p as usize;
        if self.ps[pi].busy {
            if self.port_busy(pi) {
                if self.gated[h as usize] {
                    self.gated_while_busy(h, p);
                }
                return;
            }
            // The transmission ended without a LinkFree event (`transmit`).
            self.ps[pi].busy = false;
        }
        if self.ps[pi].prio.head != NIL {
            let k = Self::pop(&self.pool, &mut self.ps[pi].prio);
            self.pool[k as usize].tail = self.cal.now();
            self.transmit(p, k);
            if self.gated[h as usize] {
                self.wake_when_ready(h);
            }
            return;
        }
        // From here on the host schedules its own wake-ups.
        self.gated[h as usize] = false;
        let now = self.cal.now();
        if now < self.next_inject[h as usize] {
            self.wake_at(h, self.next_inject[h as usize]);
            return;
        }
        self.take_returned(pi);
        self.cand.clear();
        let mut earliest = f64::INFINITY;
        let mut total_w = 0.0;
        let mut no_credit = false;
        for &f in &self.host_flows[h as usize] {
            let fi = f as usize;
            if !self.started[fi] {
                continue;
            }
            let vl = self.flow_vl[fi] as usize;
            if self.credits[pi * self.v + vl] < self.data_blocks as i64 {
                no_credit = true;
                continue;
            }
            if self.outstanding[fi] >= self.cc.window() {
                continue;
            }
            if self.next_allowed[fi] > now {
                earliest = earliest.min(self.next_allowed[fi]);
                continue;
            }
            self.cand.push(f);
            total_w += self.sc.flows[fi].weight;
        }
        if no_credit {
            self.wake_for_credits(p);
        }
        if self.cand.is_empty() {
            if earliest.is_finite() {
                self.wake_at(h, earliest);
            }
            return;
        }
        if self.arb.at_hcas {
            // VL arbitration by the tables among the VLs with a candidate;
            // a lottery among that VL's candidates only.
            let (vl, (), pick) = self
                .arb
                .pick(&self.ps[pi].arb, |vl| {
                    self.cand
                        .iter()
                        .any(|&c| self.flow_vl[c as usize] == vl)
                        .then_some(())
                })
                .expect("a candidate's VL is in the tables");
            let flow_vl = &self.flow_vl;
            self.cand.retain(|&c| flow_vl[c as usize] == vl);
            let flows = &self.sc.flows;
            total_w = self.cand.iter().map(|&c| flows[c as usize].weight).sum();
            self.arb.spend(&mut self.ps[pi].arb, pick, self.data_blocks);
        }
        let f = self.lottery(h, total_w);
        self.inject(h, p, f);
    }

    /// One candidate: no draw (keeps single-flow hosts free of randomness);
    /// several: a lottery by weight.
    fn lottery(&mut self, h: u32, total_w: f64) -> u32 {
        if self.cand.len() == 1 {
            return self.cand[0];
        }
        let mut u = self.rng[h as usize].uniform() * total_w;
        let mut pick = *self.cand.last().unwrap();
        for &c in &self.cand {
            let w = self.sc.flows[c as usize].weight;
            if u < w {
                pick = c;
                break;
            }
            u -= w;
        }
        pick
    }

    fn inject(&mut self, h: u32, p: u32, f: u32) {
        let now = self.cal.now();
        let fl = &self.sc.flows[f as usize];
        let dst = match &fl.dest {
            Dest::Host(d) => *d,
            Dest::HotSpot { hot, p_hot } => {
                // A hot spot with probability p_hot (unless it is the sender
                // itself), otherwise a uniformly chosen other host.
                let r = &mut self.rng[h as usize];
                let n = self.sc.fabric.hosts;
                let hot_pick = if r.uniform() < *p_hot {
                    Some(hot[(r.next_u64() % hot.len() as u64) as usize])
                } else {
                    None
                };
                match hot_pick {
                    Some(d) if d != h => d,
                    _ => {
                        let d = (r.next_u64() % (n as u64 - 1)) as u32;
                        if d >= h {
                            d + 1
                        } else {
                            d
                        }
                    }
                }
            }
        };
        let pkt = Pkt {
            next: NIL,
            flow: f,
            src: h,
            dst,
            bytes: self.data_bytes,
            blocks: self.data_blocks,
            vl: (fl.sl as usize % self.v) as u8,
            cnp: false,
            ack: false,
            fecn: false,
            live: true,
            at: NIL,
            tail: now,
        };
        let k = self.alloc(pkt);
        self.out.generated += 1;
        self.outstanding[f as usize] = self.outstanding[f as usize].saturating_add(1);
        let sc = self.sc;
        let sent = &mut self.out.window_sent[f as usize * sc.windows.len()..];
        self.win_sent[f as usize].each(&sc.windows, now, |j| sent[j] += 1);
        let mut paced = self.inject_data;
        if self.sc.pace_jitter > 0.0 {
            // Mean-preserving jitter of the PCIe pacing: breaks the phase
            // locking of a fully deterministic network (docs/models/ibcc.md).
            let u = self.rng[h as usize].uniform() - 0.5;
            paced *= 1.0 + self.sc.pace_jitter * u;
        }
        self.next_inject[h as usize] = now + paced;
        let end = self.transmit(p, k);
        let st = self.state_of[f as usize] as usize;
        let gap = if self.cc.enabled() {
            self.cc.gap(&self.src_state[st])
        } else {
            0.0
        };
        self.base_allowed[f as usize] = (now + paced).max(end);
        self.next_allowed[f as usize] = (now + paced).max(end) + gap;
        if self.gated[h as usize] {
            self.wake_when_ready(h);
        }
    }

    fn sample(&mut self) {
        let k = self.sample_k;
        if k < self.out.nbins {
            for f in 0..self.sc.flows.len() {
                let st = self.state_of[f] as usize;
                self.out.level[f * self.out.nbins + k] = self.cc.level(&self.src_state[st]);
            }
            let f = &self.sc.fabric;
            for s in 0..f.sw_first.len() - 1 {
                let r = f.switch_ports(s as u32);
                let used: u32 = self.in_used[r.start as usize * self.v..r.end as usize * self.v]
                    .iter()
                    .sum();
                self.out.occupancy[s * self.out.nbins + k] = used as f64 * 64.0;
            }
        }
        self.sample_k += 1;
        self.cal.schedule_in(self.sc.bin, Ev::Sample);
    }

    fn finish(mut self) -> Counters {
        // Credits due by the end (the overflow check).
        for p in 0..self.returning.len() {
            let r = std::mem::take(&mut self.returning[p]);
            for &c in &r.list[r.head..] {
                if c.time <= self.sc.duration {
                    self.add_credits(p, c);
                }
            }
        }
        self.out.live_data = self.pool.iter().filter(|p| p.live && !p.cnp).count() as u64;
        self.out.live_acks = self.pool.iter().filter(|p| p.live && p.ack).count() as u64;
        // Bookkeeping cross-check: VoQ contents equal the input-buffer counts.
        let f = &self.sc.fabric;
        for s in 0..f.sw_first.len() - 1 {
            let radix = f.radix(s as u32) as usize;
            for i in 0..radix {
                for vl in 0..self.v {
                    let mut sum = 0;
                    for o in 0..radix {
                        sum += self.voq_blocks
                            [self.voq_base[s] as usize + (o * self.v + vl) * radix + i];
                    }
                    let q = f.sw_first[s] as usize + i;
                    if sum != self.in_used[q * self.v + vl] {
                        self.out.bookkeeping_ok = false;
                    }
                }
            }
        }
        self.out.sim_time = self.sc.duration;
        self.out
    }
}
