//! Queueing-network simulation engine (catalogue §6, SIM-6), shared by the
//! Wu ch.6 and ch.7 wireless systems.
//!
//! A network of single-server FIFO entities (stations, AP uplink/downlink
//! queues, mesh routers) fed by two-state MMPP sources, one per station, with
//! the modulating phase drawn from its stationary law at the start of every
//! replication (W-51). Packets leave the network at an exit (a destination
//! station in ch.6, the gateway sink in ch.7).
//!
//! Plug-ins, used as generic parameters of [`run`] so that each combination
//! compiles to its own loop without virtual calls:
//! - [`Routing`]: where a packet goes when it leaves an entity ([`Markov`]:
//!   a per-entity table of next hops and probabilities, which covers the
//!   ch.6 random walk with exit probability σ and the ch.7 shortest-path tree
//!   with balanced or uniform split weights);
//! - [`Service`]: the service law and the link delay ([`Slotted`]: in each
//!   slot of length t the head packet succeeds with probability P, so the
//!   service time is Geom(P)·t and the successful slot *is* the transmission;
//!   [`Exponential`]: Exp(μ) service followed by a fixed, non-blocking
//!   transmission delay t, the model's assumption, W-52).
//!
//! State lives in flat arrays indexed by `u32` ids: one 64-byte record per
//! entity (its random stream, constants and FIFO) and per source, FIFO
//! queues as intrusive singly linked lists through a packet pool with a free
//! list, so nothing is allocated per event once the pool has grown to the
//! network's population. The calendar is three 4-ary heaps (`timers.rs`) over
//! a fixed set of timers: one per source, one per entity (its service
//! completion) and one per link (the earliest packet in flight on it; packets
//! on a link land in FIFO order because its delay is a constant, so they wait
//! in an intrusive list like a queue). Sources, fast entities and slow
//! entities have a heap each (`speed_classes`), and the event loop takes
//! the earliest of the three roots. Every heap change is to the root (the
//! timer that fired) or arms an idle timer, so the heaps need no position
//! map.
//!
//! Speed (9×9 ch.6 network, `cargo bench -p solvers --bench wireless`): the
//! hot path is one heap sift per event, one uniform and a table logarithm
//! ([`FastLn`]) per service, a guide-table routing draw. Each entity draws
//! its next service time as soon as a service begins, so a completion
//! updates the calendar from a stored value and the draw for the one after
//! runs beside it (≈ 5% less CPU than drawing on demand). Ties between equal
//! times (frequent with slotted service: two entities armed in the same
//! event with the same slot count) go fast heap first, then slow heap, then
//! sources, and within a heap by its layout: deterministic, but a change of
//! the calendar reorders them, which changes the results of the wireless
//! sims (bump their `version()`).
//!
//! The engine knows no serde, JSON or registry; `systems/wireless` builds a
//! [`Scenario`] and maps [`Counters`] to an outcome.

pub use crate::des::FastLn;
use crate::des::Stream;
use crate::{SolveError, TaskContext};
use timers::Heap;

#[cfg(test)]
mod tests;
mod timers;

/// Index of an entity (a FIFO queue with one server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntityId(pub u32);

/// Where a packet goes after leaving an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hop {
    To(EntityId),
    /// Leaves the network (delivered).
    Exit,
}

/// One queueing entity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entity {
    /// Slot length t (s): the transmission time of one packet on its medium.
    pub slot: f64,
    /// Success probability per slot (slotted service), in (0, 1].
    pub p: f64,
    /// Service rate (exponential service), > 0.
    pub mu: f64,
    /// Capacity counting the packet in service; `u32::MAX` = infinite.
    pub capacity: u32,
    /// Statistics group (e.g. station, AP uplink, MR ring 3).
    pub group: u16,
}

/// A two-state MMPP source attached to an entity. `phi = [0, 0]` with equal
/// rates is a Poisson source (the phase never changes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Source {
    pub entity: EntityId,
    /// Arrival rate in phase 1 and 2.
    pub lambda: [f64; 2],
    /// Rate of leaving phase 1 and 2.
    pub phi: [f64; 2],
    /// Class of the packets it creates (end-to-end statistics per class).
    pub class: u16,
}

/// The network to simulate.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    pub entities: Vec<Entity>,
    pub sources: Vec<Source>,
    pub groups: usize,
    pub classes: usize,
    /// A split warm-up, or `None`: the whole network runs from time 0.
    pub split: Option<Split>,
}

/// A split warm-up: before `start` only the `upstream` entities are
/// simulated, from `start` on the whole network (the other entities start
/// empty then). A packet that an upstream entity routes to an entity
/// outside `upstream` before `start` is discarded and counted
/// ([`Counters::discarded`]).
///
/// The system declares the set; [`run`] checks it ([`check_split`]): every
/// source feeds an upstream entity, and no routing edge leads from an entity
/// outside the set into it (closed under predecessors), so the upstream
/// part's sample path does not depend on the rest of the network. `start`
/// must lie in [0, warm-up], so the statistics (reset at the warm-up's end)
/// see the whole network only.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub upstream: Vec<EntityId>,
    pub start: f64,
}

/// Why a scenario's [`Split`] is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SplitError {
    #[error("upstream entity {entity} does not exist (the network has {entities})")]
    NoSuchEntity { entity: u32, entities: usize },
    #[error("source {source_index} feeds entity {entity}, which is not upstream")]
    SourceDownstream { source_index: usize, entity: u32 },
    #[error("entity {from} (not upstream) routes to upstream entity {to}: the upstream set is not closed under predecessors")]
    NotClosed { from: u32, to: u32 },
    #[error("the whole network starts at {start} s, which is not in [0, warm-up = {warmup} s]")]
    Start { start: f64, warmup: f64 },
}

impl From<SplitError> for SolveError {
    fn from(e: SplitError) -> Self {
        SolveError::BadParams(format!("qnet split warm-up: {e}"))
    }
}

/// Checks `sc.split` against the scenario, its routing and the warm-up
/// (see [`Split`]). Returns, per entity, whether it is upstream (all false
/// without a split).
pub fn check_split<R: Routing>(
    sc: &Scenario,
    routing: &R,
    warmup: f64,
) -> Result<Vec<bool>, SplitError> {
    let n = sc.entities.len();
    let mut up = vec![false; n];
    let Some(split) = &sc.split else {
        return Ok(up);
    };
    if !(split.start >= 0.0 && split.start <= warmup) {
        return Err(SplitError::Start {
            start: split.start,
            warmup,
        });
    }
    for e in &split.upstream {
        match up.get_mut(e.0 as usize) {
            Some(u) => *u = true,
            None => {
                return Err(SplitError::NoSuchEntity {
                    entity: e.0,
                    entities: n,
                })
            }
        }
    }
    for (i, s) in sc.sources.iter().enumerate() {
        if !up.get(s.entity.0 as usize).copied().unwrap_or(false) {
            return Err(SplitError::SourceDownstream {
                source_index: i,
                entity: s.entity.0,
            });
        }
    }
    for from in (0..n).filter(|&e| !up[e]) {
        for hop in routing.hops(EntityId(from as u32)) {
            if let Hop::To(to) = hop {
                if up.get(to.0 as usize).copied().unwrap_or(false) {
                    return Err(SplitError::NotClosed {
                        from: from as u32,
                        to: to.0,
                    });
                }
            }
        }
    }
    Ok(up)
}

/// Length of one replication, in simulated seconds, and the memory bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunLength {
    pub warmup: f64,
    pub horizon: f64,
    /// Most packets alive at once; beyond it the run stops as [`Stop::PoolFull`]
    /// (an infinite-buffer network past saturation).
    pub max_packets: u32,
}

/// Next-hop choice on departure (a plug-in).
pub trait Routing {
    fn next(&self, from: EntityId, rng: &mut Stream) -> Hop;
    /// Every hop `next` may return from `from` (the routing edges, for
    /// [`check_split`]).
    fn hops(&self, from: EntityId) -> Vec<Hop>;
}

/// Service law and link delay (a plug-in).
pub trait Service {
    /// A per-entity constant computed once per run (so the hot path does not
    /// recompute e.g. ln(1 − P) per packet).
    fn prepare(&self, e: &Entity) -> f64;
    /// One service time of an entity with slot length `slot` and
    /// `k = prepare(entity)`.
    fn service_time(&self, slot: f64, k: f64, rng: &mut Stream, ln: &FastLn) -> f64;
    /// Delay between leaving `e` and landing at the next hop (or exiting).
    fn link_delay(&self, e: &Entity) -> f64;
    /// Mean service time of `e` (sorts the entities into fast and slow
    /// timer heaps).
    fn mean_time(&self, e: &Entity) -> f64;
}

/// Slotted Bernoulli access: Geom(P) slots of length t; the last slot is the
/// transmission itself, so there is no further link delay.
pub struct Slotted;

impl Service for Slotted {
    /// 1 / ln(1 − P) (< 0), or 0 when P = 1 (always one slot).
    fn prepare(&self, e: &Entity) -> f64 {
        if e.p >= 1.0 {
            0.0
        } else {
            1.0 / (1.0 - e.p).ln()
        }
    }
    /// Geom(P) on {1, 2, …} by inversion with one log: 1 + ⌊ln U / ln(1 − P)⌋
    /// (the cast truncates, which is floor for the non-negative argument).
    /// [`FastLn::floor_ln_times`] gives the same slot count as `ln` from libm
    /// at about half the cost.
    #[inline]
    fn service_time(&self, slot: f64, k: f64, rng: &mut Stream, ln: &FastLn) -> f64 {
        if k == 0.0 {
            return slot;
        }
        let slots = 1.0 + ln.floor_ln_times(rng.uniform(), k);
        slots * slot
    }
    #[inline]
    fn link_delay(&self, _e: &Entity) -> f64 {
        0.0
    }
    fn mean_time(&self, e: &Entity) -> f64 {
        e.slot / e.p
    }
}

/// Exp(μ) service followed by a fixed transmission delay of one slot.
pub struct Exponential;

impl Service for Exponential {
    /// 1 / μ.
    fn prepare(&self, e: &Entity) -> f64 {
        1.0 / e.mu
    }
    #[inline]
    fn service_time(&self, _slot: f64, k: f64, rng: &mut Stream, _ln: &FastLn) -> f64 {
        -rng.uniform().ln() * k
    }
    #[inline]
    fn link_delay(&self, e: &Entity) -> f64 {
        e.slot
    }
    fn mean_time(&self, e: &Entity) -> f64 {
        1.0 / e.mu
    }
}

/// Markov routing: for each entity a list of (next hop, cumulative probability).
///
/// A draw is the first hop whose cumulative probability exceeds a uniform U
/// (inversion). A guide table per row (Chen and Asau's method, 2 buckets
/// per hop) gives a hop at or before the answer for U's bucket, so the scan is
/// about one step instead of half the row, and the answer is the same hop the
/// plain scan from the row's start would give.
#[derive(Debug, Clone, Default)]
pub struct Markov {
    rows: Vec<Row>,
    hops: Vec<Hop>,
    cdf: Vec<f64>,
    guide: Vec<u32>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Row {
    start: u32,
    len: u32,
    guide: u32,
}

/// Guide buckets per hop of a row.
const GUIDE_PER_HOP: u32 = 2;

impl Markov {
    /// `table[e]` lists (hop, weight) for entity e; weights are normalised.
    /// An entity with a single hop needs no random draw; one with none
    /// sends its packets out of the network.
    pub fn new(table: &[Vec<(Hop, f64)>]) -> Self {
        let mut m = Markov {
            rows: Vec::with_capacity(table.len()),
            ..Default::default()
        };
        for row in table {
            let start = m.hops.len();
            let total: f64 = row.iter().map(|(_, w)| w).sum();
            let mut acc = 0.0;
            for (h, w) in row {
                acc += w / total;
                m.hops.push(*h);
                m.cdf.push(acc);
            }
            if let Some(last) = m.cdf.last_mut() {
                if !row.is_empty() {
                    *last = 1.0;
                }
            }
            let guide = m.guide.len();
            if row.len() > 1 {
                // Bucket j holds the U with ⌊U·g⌋ = j (as computed in
                // floating point, so U ≥ j/g·(1 − 2⁻⁵²)): start at the
                // first hop whose cdf exceeds a bound just below j/g.
                let g = GUIDE_PER_HOP as usize * row.len();
                let last = m.hops.len() - 1;
                for j in 0..g {
                    let lo = j as f64 / g as f64 * (1.0 - 1e-12);
                    let mut k = start;
                    while k < last && m.cdf[k] <= lo {
                        k += 1;
                    }
                    m.guide.push(k as u32);
                }
            }
            m.rows.push(Row {
                start: start as u32,
                len: row.len() as u32,
                guide: guide as u32,
            });
        }
        m
    }

    /// The next hops of entity `e` with their probabilities.
    pub fn row(&self, e: EntityId) -> Vec<(Hop, f64)> {
        let r = self.rows[e.0 as usize];
        let (a, b) = (r.start as usize, (r.start + r.len) as usize);
        let mut prev = 0.0;
        (a..b)
            .map(|k| {
                let p = self.cdf[k] - prev;
                prev = self.cdf[k];
                (self.hops[k], p)
            })
            .collect()
    }
}

impl Routing for Markov {
    #[inline]
    fn next(&self, from: EntityId, rng: &mut Stream) -> Hop {
        let r = self.rows[from.0 as usize];
        if r.len <= 1 {
            return if r.len == 1 {
                self.hops[r.start as usize]
            } else {
                Hop::Exit
            };
        }
        // Bucket j = ⌊bits₃₂·g / 2³²⌋ from the top 32 of U's 53 bits: no
        // float-to-int conversion (a saturating cast, on the critical path),
        // j < g, and j ≤ U·g, so bucket j's start (a hop whose predecessors
        // have cdf ≤ j/g·(1 − 1e-12) < U) is at or before the answer and the
        // scan ends at the same hop.
        let (u, bits) = rng.uniform_and_bits();
        let g = GUIDE_PER_HOP * r.len;
        let j = (((bits >> 21) * u64::from(g)) >> 32) as u32;
        let mut k = self.guide[(r.guide + j) as usize] as usize;
        let last = (r.start + r.len - 1) as usize;
        while k < last && self.cdf[k] <= u {
            k += 1;
        }
        self.hops[k]
    }
    /// Every hop listed in the row, including those of weight 0.
    fn hops(&self, from: EntityId) -> Vec<Hop> {
        let r = self.rows[from.0 as usize];
        self.hops[r.start as usize..(r.start + r.len) as usize].to_vec()
    }
}

/// Statistics of one group of entities, over the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct GroupStats {
    pub arrivals: u64,
    pub drops: u64,
    pub departures: u64,
    /// Sum of the sojourn times (waiting + service) of the departures.
    pub sojourn_sum: f64,
}

/// End-to-end statistics of one packet class, over the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ClassStats {
    pub delivered: u64,
    pub delay_sum: f64,
}

/// Why a replication ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Completed,
    /// More than `max_packets` alive: the network is past saturation.
    PoolFull,
}

/// Counters of one replication.
#[derive(Debug, Clone, PartialEq)]
pub struct Counters {
    pub stop: Stop,
    pub groups: Vec<GroupStats>,
    pub classes: Vec<ClassStats>,
    /// Length of the measurement window actually simulated.
    pub window: f64,
    /// Lifetime totals (warm-up included) for the conservation check.
    pub generated: u64,
    pub delivered: u64,
    pub dropped: u64,
    /// Packets an upstream entity routed out of the upstream set before the
    /// whole network started ([`Split`]); 0 without a split.
    pub discarded: u64,
    /// Packets in queues plus packets on links at the end.
    pub inside: u64,
    pub events: u64,
}

const NIL: u32 = u32::MAX;

/// Stream ids: kind in the top bits, so adding a source never shifts an entity's stream.
fn stream_id(kind: u64, index: u32, replication: u32) -> u64 {
    (u64::from(replication) << 40) | (kind << 32) | u64::from(index)
}

/// What the hot loop touches of one entity, in one cache line: its random
/// stream, service constants and FIFO.
#[derive(Debug, Clone)]
#[repr(align(64))]
struct Ent {
    rng: Stream,
    /// `Service::prepare` of the entity.
    k: f64,
    slot: f64,
    /// The service time of the next service to begin, drawn in advance
    /// (right after the previous one began), so that an event does not
    /// wait for a draw before it updates the calendar.
    st: f64,
    head: u32,
    tail: u32,
    len: u32,
    capacity: u32,
    group: u16,
    /// Index of the heap holding its timers (0: fast, 1: slow).
    heap: u16,
}

/// A source's state; `rate[j]` = λ_j + φ_j, the rate of its events in phase j.
#[derive(Debug, Clone)]
#[repr(align(64))]
struct Src {
    rng: Stream,
    lambda: [f64; 2],
    rate: [f64; 2],
    entity: u32,
    class: u16,
    phase: u8,
}

/// A packet of the pool. While it is on a link, `arrived` holds its landing
/// time and `dest` its next hop (`NIL`: exit). The link that chains the
/// FIFO it is in, or the free list, is kept apart ([`Net::next`]).
#[derive(Debug, Clone, Copy)]
struct Pkt {
    birth: f64,
    arrived: f64,
    dest: u32,
    class: u32,
}

struct Net<'a, R, S> {
    routing: &'a R,
    service: &'a S,
    /// Source timers (id = source index): slow, touched once per packet.
    src: Heap,
    /// Entity timers: service end of entity e → e, its link → `land0 + e`.
    /// Kept apart from the sources so that the many service events sift
    /// through heaps of busy entities only, and split by time scale
    /// ([`speed_classes`]) so that the frequent short services sift through
    /// a heap of their own rather than past the long ones.
    ent: [Heap; 2],
    land0: u32,
    /// The entity timer that just fired (the root of `ent[vacant]`) is to be
    /// disarmed: the next timer armed in that heap during the same event
    /// takes its slot. `NIL`: none.
    vacant: u32,
    now: f64,
    ln: FastLn,
    pkts: Vec<Pkt>,
    /// Per packet, the next one in its FIFO (or the free list), `NIL` at
    /// the end: apart from the records because a service end before the
    /// warm-up's end reads only this (4 bytes a packet, so the FIFOs of a
    /// network with thousands of queued packets stay in cache), the
    /// record's times only when statistics are taken.
    next: Vec<u32>,
    free: u32,
    live: u32,
    max_packets: u32,
    ents: Vec<Ent>,
    // Intrusive FIFO of the packets on each entity's link.
    lhead: Vec<u32>,
    ltail: Vec<u32>,
    /// Link delay of each entity (read only when `delays_used`).
    delays: Vec<f64>,
    delays_used: bool,
    srcs: Vec<Src>,
    // Statistics (taken by the handlers instantiated with `M` = true:
    // the events at or after the warm-up's end).
    groups: Vec<GroupStats>,
    classes: Vec<ClassStats>,
    generated: u64,
    delivered: u64,
    dropped: u64,
    discarded: u64,
    on_links: u64,
    /// Per entity, whether it is upstream of the split ([`Split`]).
    upstream: Vec<bool>,
}

impl<R: Routing, S: Service> Net<'_, R, S> {
    #[inline]
    fn alloc(&mut self, class: u16) -> Option<u32> {
        if self.live >= self.max_packets {
            return None;
        }
        self.live += 1;
        let pkt = Pkt {
            birth: self.now,
            arrived: self.now,
            dest: NIL,
            class: u32::from(class),
        };
        if self.free != NIL {
            let id = self.free;
            self.free = self.next[id as usize];
            self.next[id as usize] = NIL;
            self.pkts[id as usize] = pkt;
            Some(id)
        } else {
            self.pkts.push(pkt);
            self.next.push(NIL);
            Some((self.pkts.len() - 1) as u32)
        }
    }

    #[inline]
    fn release(&mut self, id: u32) {
        self.next[id as usize] = self.free;
        self.free = id;
        self.live -= 1;
    }

    /// Source i (the root of `src`) fired: an arrival or a phase change,
    /// then its next event. False when the packet pool is full.
    fn on_source<const M: bool>(&mut self, i: usize) -> bool {
        let s = &mut self.srcs[i];
        let j = s.phase as usize;
        if s.rng.uniform() * s.rate[j] < s.lambda[j] {
            let (entity, class) = (s.entity, s.class);
            let Some(p) = self.alloc(class) else {
                return false;
            };
            self.generated += 1;
            self.arrive::<M>(p, entity as usize);
        } else {
            s.phase ^= 1;
        }
        let s = &mut self.srcs[i];
        let rate = s.rate[s.phase as usize];
        if rate > 0.0 {
            let t = self.now + s.rng.exp(rate);
            self.src.replace_top(t, i as u32);
        } else {
            self.src.pop();
        }
        true
    }

    /// Arms idle entity timer `id` of heap `h` at `t`, in the vacant slot
    /// if there is one.
    #[inline(always)]
    fn arm(&mut self, id: u32, h: u32, t: f64) {
        if self.vacant == h {
            self.ent[h as usize & 1].replace_top(t, id);
            self.vacant = NIL;
        } else {
            self.ent[h as usize & 1].push(t, id);
        }
    }

    /// Packet `p` arrives at entity `e`: drop-tail, else join the FIFO.
    #[inline(always)]
    fn arrive<const M: bool>(&mut self, p: u32, e: usize) {
        let now = self.now;
        let en = &mut self.ents[e];
        if M {
            self.groups[en.group as usize].arrivals += 1;
        }
        if en.len >= en.capacity {
            if M {
                self.groups[en.group as usize].drops += 1;
            }
            self.dropped += 1;
            self.release(p);
            return;
        }
        self.pkts[p as usize].arrived = now;
        self.next[p as usize] = NIL;
        let first = en.len == 0;
        if first {
            en.head = p;
        } else {
            self.next[en.tail as usize] = p;
        }
        en.tail = p;
        en.len += 1;
        if first {
            let t = now + en.st;
            en.st = self
                .service
                .service_time(en.slot, en.k, &mut en.rng, &self.ln);
            let h = u32::from(en.heap);
            self.arm(e as u32, h, t);
        }
    }

    /// Entity e (the root of `ent`) finished serving its head packet. `CUT`:
    /// before the split's start, where a packet routed out of the upstream
    /// set is discarded.
    #[inline]
    fn on_done<const CUT: bool, const M: bool>(&mut self, e: usize) {
        let now = self.now;
        let en = &mut self.ents[e];
        let p = en.head;
        en.head = self.next[p as usize];
        en.len -= 1;
        if en.len > 0 {
            self.ent[en.heap as usize & 1].replace_top(now + en.st, e as u32);
            en.st = self
                .service
                .service_time(en.slot, en.k, &mut en.rng, &self.ln);
        } else {
            self.vacant = u32::from(en.heap);
        }
        if M {
            let g = &mut self.groups[en.group as usize];
            g.departures += 1;
            g.sojourn_sum += now - self.pkts[p as usize].arrived;
        }
        let hop = self.routing.next(EntityId(e as u32), &mut en.rng);
        if CUT {
            if let Hop::To(next) = hop {
                if !self.upstream[next.0 as usize] {
                    self.discarded += 1;
                    self.release(p);
                    return;
                }
            }
        }
        if self.delays_used {
            let d = self.delays[e];
            if d > 0.0 {
                self.onto_link(p, e, hop, now + d);
                return;
            }
        }
        match hop {
            Hop::To(next) => self.arrive::<M>(p, next.0 as usize),
            Hop::Exit => self.leave::<M>(p),
        }
    }

    /// Packet `p` leaves entity e onto its link, landing at `t`: FIFO behind
    /// the packets already in flight.
    fn onto_link(&mut self, p: u32, e: usize, hop: Hop, t: f64) {
        let pk = &mut self.pkts[p as usize];
        pk.dest = match hop {
            Hop::To(next) => next.0,
            Hop::Exit => NIL,
        };
        pk.arrived = t;
        self.next[p as usize] = NIL;
        if self.lhead[e] == NIL {
            self.lhead[e] = p;
            let h = u32::from(self.ents[e].heap);
            self.arm(self.land0 + e as u32, h, t);
        } else {
            self.next[self.ltail[e] as usize] = p;
        }
        self.ltail[e] = p;
        self.on_links += 1;
    }

    /// The head packet of entity e's link lands.
    fn on_land<const M: bool>(&mut self, e: usize) {
        let p = self.lhead[e];
        let pk = self.pkts[p as usize];
        let link = self.next[p as usize];
        self.lhead[e] = link;
        let h = self.ents[e].heap;
        if link == NIL {
            self.vacant = u32::from(h);
        } else {
            let t = self.pkts[link as usize].arrived;
            self.ent[h as usize & 1].replace_top(t, self.land0 + e as u32);
        }
        self.on_links -= 1;
        match pk.dest {
            NIL => self.leave::<M>(p),
            to => self.arrive::<M>(p, to as usize),
        }
    }

    /// Runs the events up to `until`. `CUT`: with only the upstream
    /// entities, before a split's start; `M`: taking statistics, after the
    /// warm-up. Before the warm-up's end (`M` false) the events at times <
    /// `until`, after it those at times ≤ `until`. True when the packet
    /// pool filled up.
    #[inline(always)]
    fn advance<const CUT: bool, const M: bool>(
        &mut self,
        until: f64,
        events: &mut u64,
        ctx: &TaskContext,
    ) -> Result<bool, SolveError> {
        let land0 = self.land0;
        loop {
            // The earliest of the three heaps' roots (+∞ when empty); on a
            // tie the fast entities first, the sources last.
            let (ts, i) = self.src.top();
            let (t0, e0) = self.ent[0].top();
            let (t1, e1) = self.ent[1].top();
            let (te, e) = if t1 < t0 { (t1, e1) } else { (t0, e0) };
            let (now, id, source) = if ts < te {
                (ts, i, true)
            } else {
                (te, e, false)
            };
            if !M {
                if now >= until || now.is_nan() {
                    return Ok(false);
                }
            } else if !(now <= until && now < f64::INFINITY) {
                return Ok(false);
            }
            self.now = now;
            *events += 1;
            if *events & 0xFFFF == 0 {
                ctx.check_cancel()?;
            }
            if source {
                if !self.on_source::<M>(id as usize) {
                    return Ok(true);
                }
            } else {
                // Entity timers are 0 … n − 1 = `ents.len()` − 1 (service
                // ends), link timers `land0` + e with `land0` = n: testing
                // the id against `ents.len()` also proves `ents[id]` in
                // bounds for `on_done`.
                if (id as usize) < self.ents.len() {
                    self.on_done::<CUT, M>(id as usize);
                } else {
                    self.on_land::<M>((id - land0) as usize);
                }
                if self.vacant != NIL {
                    self.ent[self.vacant as usize & 1].pop();
                    self.vacant = NIL;
                }
            }
        }
    }

    #[inline]
    fn leave<const M: bool>(&mut self, p: u32) {
        self.delivered += 1;
        if M {
            let pk = self.pkts[p as usize];
            let c = &mut self.classes[pk.class as usize];
            c.delivered += 1;
            c.delay_sum += self.now - pk.birth;
        }
        self.release(p);
    }
}

/// Sorts the entities into fast (false) and slow (true) ones by mean service
/// time, split at the geometric mean of the extremes when they are more than
/// 4× apart (the 9×9 ch.6 network: mesh routers ~2.5 ms, APs and stations
/// 18–80 ms). Only the calendar's speed depends on it.
fn speed_classes<S: Service>(sc: &Scenario, service: &S) -> Vec<bool> {
    let means: Vec<f64> = sc.entities.iter().map(|e| service.mean_time(e)).collect();
    let ok = |m: &&f64| m.is_finite() && **m > 0.0;
    let lo = means
        .iter()
        .filter(ok)
        .fold(f64::INFINITY, |a, &b| a.min(b));
    let hi = means.iter().filter(ok).fold(0.0, |a: f64, &b| a.max(b));
    if hi <= 4.0 * lo {
        return vec![false; means.len()];
    }
    let split = (lo * hi).sqrt();
    means.iter().map(|&m| m > split || m.is_nan()).collect()
}

/// Runs one replication (index `replication`) of the network. The seed and
/// the replication index fix every random stream.
pub fn run<R: Routing, S: Service>(
    sc: &Scenario,
    routing: &R,
    service: &S,
    len: RunLength,
    seed: u64,
    replication: u32,
    ctx: &TaskContext,
) -> Result<Counters, SolveError> {
    let upstream = check_split(sc, routing, len.warmup)?;
    let n = sc.entities.len();
    let ns = sc.sources.len();
    let slow = speed_classes(sc, service);
    let ln = FastLn::new();
    let delays: Vec<f64> = sc.entities.iter().map(|e| service.link_delay(e)).collect();
    let ents: Vec<Ent> = sc
        .entities
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut rng = Stream::new(seed, stream_id(1, i as u32, replication));
            let k = service.prepare(e);
            let st = service.service_time(e.slot, k, &mut rng, &ln);
            Ent {
                rng,
                k,
                slot: e.slot,
                st,
                head: NIL,
                tail: NIL,
                len: 0,
                capacity: e.capacity,
                group: e.group,
                heap: u16::from(slow[i]),
            }
        })
        .collect();
    let mut net = Net {
        routing,
        service,
        src: Heap::new(ns),
        ent: [Heap::new(2 * n), Heap::new(2 * n)],
        land0: n as u32,
        vacant: NIL,
        now: 0.0,
        ln,
        pkts: Vec::new(),
        next: Vec::new(),
        free: NIL,
        live: 0,
        max_packets: len.max_packets,
        ents,
        lhead: vec![NIL; n],
        ltail: vec![NIL; n],
        delays_used: delays.iter().any(|&d| d > 0.0),
        delays,
        srcs: sc
            .sources
            .iter()
            .enumerate()
            .map(|(i, s)| Src {
                rng: Stream::new(seed, stream_id(2, i as u32, replication)),
                lambda: s.lambda,
                rate: [s.lambda[0] + s.phi[0], s.lambda[1] + s.phi[1]],
                entity: s.entity.0,
                class: s.class,
                phase: 0,
            })
            .collect(),
        groups: vec![GroupStats::default(); sc.groups],
        classes: vec![ClassStats::default(); sc.classes],
        generated: 0,
        delivered: 0,
        dropped: 0,
        discarded: 0,
        on_links: 0,
        upstream,
    };
    // Initial phases from the stationary law pi = (phi2, phi1) / (phi1 + phi2).
    for (i, s) in sc.sources.iter().enumerate() {
        let st = &mut net.srcs[i];
        let tot = s.phi[0] + s.phi[1];
        if tot > 0.0 && st.rng.uniform() * tot >= s.phi[1] {
            st.phase = 1;
        }
        let rate = st.rate[st.phase as usize];
        if rate > 0.0 {
            let t = st.rng.exp(rate);
            net.src.push(t, i as u32);
        }
    }
    let end = len.warmup + len.horizon;
    let mut events: u64 = 0;
    let mut full = false;
    // Three phases, each its own loop: the split's upstream part alone
    // (before its start, which is ≤ the warm-up's end), the rest of the
    // warm-up (events at times < warm-up), the measured horizon (events at
    // times ≥ warm-up, up to `end`), so no event tests whether statistics
    // are taken.
    if let Some(split) = &sc.split {
        full = net.advance::<true, false>(split.start, &mut events, ctx)?;
    }
    if !full {
        full = net.advance::<false, false>(len.warmup, &mut events, ctx)?;
    }
    if !full {
        full = net.advance::<false, true>(end, &mut events, ctx)?;
    }
    let stop = if full {
        Stop::PoolFull
    } else {
        Stop::Completed
    };
    let queued: u64 = net.ents.iter().map(|e| u64::from(e.len)).sum();
    let window = (net.now.min(end) - len.warmup).max(0.0);
    Ok(Counters {
        stop,
        groups: net.groups,
        classes: net.classes,
        window: if stop == Stop::Completed {
            len.horizon
        } else {
            window
        },
        generated: net.generated,
        delivered: net.delivered,
        dropped: net.dropped,
        discarded: net.discarded,
        inside: queued + net.on_links,
        events,
    })
}
