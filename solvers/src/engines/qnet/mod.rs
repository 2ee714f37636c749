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
//! State lives in flat arrays indexed by `u32` ids: FIFO queues are intrusive
//! singly linked lists through a packet pool with a free list, so nothing is
//! allocated per event once the pool has grown to the network's population.
//! The calendar is an indexed 4-ary heap over a fixed set of timers
//! (`timers.rs`): one per source, one per entity (its service completion) and
//! one per link (the earliest packet in flight on it; packets on a link land
//! in FIFO order because its delay is a constant, so they wait in an
//! intrusive list like a queue).
//!
//! The engine knows no serde, JSON or registry; `systems/wireless` builds a
//! [`Scenario`] and maps [`Counters`] to an outcome.

use crate::des::Stream;
use crate::{SolveError, TaskContext};
use timers::Timers;

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
}

/// Service law and link delay (a plug-in).
pub trait Service {
    /// A per-entity constant computed once per run (so the hot path does not
    /// recompute e.g. ln(1 − P) per packet).
    fn prepare(&self, e: &Entity) -> f64;
    /// One service time of entity `e`, `k = prepare(e)`.
    fn service_time(&self, e: &Entity, k: f64, rng: &mut Stream) -> f64;
    /// Delay between leaving `e` and landing at the next hop (or exiting).
    fn link_delay(&self, e: &Entity) -> f64;
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
    #[inline]
    fn service_time(&self, e: &Entity, k: f64, rng: &mut Stream) -> f64 {
        if k == 0.0 {
            return e.slot;
        }
        let slots = 1.0 + (rng.uniform().ln() * k).min(1e15) as u64 as f64;
        slots * e.slot
    }
    #[inline]
    fn link_delay(&self, _e: &Entity) -> f64 {
        0.0
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
    fn service_time(&self, _e: &Entity, k: f64, rng: &mut Stream) -> f64 {
        -rng.uniform().ln() * k
    }
    #[inline]
    fn link_delay(&self, e: &Entity) -> f64 {
        e.slot
    }
}

/// Markov routing: for each entity a list of (next hop, cumulative probability).
#[derive(Debug, Clone, Default)]
pub struct Markov {
    start: Vec<u32>,
    hops: Vec<Hop>,
    cdf: Vec<f64>,
}

impl Markov {
    /// `table[e]` lists (hop, weight) for entity e; weights are normalised.
    /// An entity with a single hop needs no random draw.
    pub fn new(table: &[Vec<(Hop, f64)>]) -> Self {
        let mut m = Markov {
            start: Vec::with_capacity(table.len() + 1),
            ..Default::default()
        };
        m.start.push(0);
        for row in table {
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
            m.start.push(m.hops.len() as u32);
        }
        m
    }
}

impl Markov {
    /// The next hops of entity `e` with their probabilities.
    pub fn row(&self, e: EntityId) -> Vec<(Hop, f64)> {
        let (a, b) = (
            self.start[e.0 as usize] as usize,
            self.start[e.0 as usize + 1] as usize,
        );
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
        let (a, b) = (
            self.start[from.0 as usize] as usize,
            self.start[from.0 as usize + 1] as usize,
        );
        if b - a == 1 {
            return self.hops[a];
        }
        // Rows have at most a handful of hops: a linear scan beats a search.
        let u = rng.uniform();
        let mut k = a;
        while k + 1 < b && self.cdf[k] <= u {
            k += 1;
        }
        self.hops[k]
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
    /// Packets in queues plus packets on links at the end.
    pub inside: u64,
    pub events: u64,
}

const NIL: u32 = u32::MAX;

/// Stream ids: kind in the top bits, so adding a source never shifts an entity's stream.
fn stream_id(kind: u64, index: u32, replication: u32) -> u64 {
    (u64::from(replication) << 40) | (kind << 32) | u64::from(index)
}

struct Net<'a, R, S> {
    sc: &'a Scenario,
    routing: &'a R,
    service: &'a S,
    /// Source timers (id = source index): slow, touched once per packet.
    src: Timers,
    /// Entity timers: service end of entity e → e, its link → `land0 + e`.
    /// Kept apart from the sources so that the many service events sift
    /// through a heap of busy entities only.
    ent: Timers,
    land0: u32,
    /// The entity timer that just fired and is to be disarmed: the next timer
    /// armed during the same event takes its heap slot ([`Timers::transfer`]).
    vacant: u32,
    now: f64,
    // Packet pool (structure of arrays) and its free list. While a packet is on
    // a link, `arrived` holds its landing time and `dest` its next hop.
    birth: Vec<f64>,
    arrived: Vec<f64>,
    class: Vec<u16>,
    dest: Vec<u32>,
    link: Vec<u32>,
    free: u32,
    live: u32,
    max_packets: u32,
    // Entities: intrusive FIFO of the queue and of the link.
    head: Vec<u32>,
    tail: Vec<u32>,
    len: Vec<u32>,
    lhead: Vec<u32>,
    ltail: Vec<u32>,
    /// `Service::prepare` of each entity and its link delay.
    svc: Vec<f64>,
    delay: Vec<f64>,
    erng: Vec<Stream>,
    // Sources.
    phase: Vec<u8>,
    srng: Vec<Stream>,
    // Statistics.
    measuring: bool,
    groups: Vec<GroupStats>,
    classes: Vec<ClassStats>,
    generated: u64,
    delivered: u64,
    dropped: u64,
    on_links: u64,
}

impl<R: Routing, S: Service> Net<'_, R, S> {
    #[inline]
    fn alloc(&mut self, class: u16) -> Option<u32> {
        if self.live >= self.max_packets {
            return None;
        }
        self.live += 1;
        let id = if self.free != NIL {
            let id = self.free;
            self.free = self.link[id as usize];
            id
        } else {
            self.birth.push(0.0);
            self.arrived.push(0.0);
            self.class.push(0);
            self.dest.push(NIL);
            self.link.push(NIL);
            (self.birth.len() - 1) as u32
        };
        let i = id as usize;
        self.birth[i] = self.now;
        self.class[i] = class;
        self.link[i] = NIL;
        Some(id)
    }

    #[inline]
    fn release(&mut self, id: u32) {
        self.link[id as usize] = self.free;
        self.free = id;
        self.live -= 1;
    }

    /// (Re)arms source i's timer, or disarms it if it can never fire.
    #[inline]
    fn schedule_source(&mut self, i: usize) {
        let s = &self.sc.sources[i];
        let j = self.phase[i] as usize;
        let rate = s.lambda[j] + s.phi[j];
        if rate > 0.0 {
            let dt = self.srng[i].exp(rate);
            self.src.set(i as u32, self.now + dt);
        } else {
            self.src.cancel(i as u32);
        }
    }

    fn on_source(&mut self, i: usize) -> bool {
        let s = &self.sc.sources[i];
        let j = self.phase[i] as usize;
        let (lambda, entity, class) = (s.lambda[j], s.entity.0, s.class);
        let u = self.srng[i].uniform() * (lambda + s.phi[j]);
        if u < lambda {
            let Some(p) = self.alloc(class) else {
                return false;
            };
            self.generated += 1;
            self.arrive(p, entity as usize);
        } else {
            self.phase[i] = 1 - self.phase[i];
        }
        self.schedule_source(i);
        true
    }

    /// Arms idle entity timer `id` at `t`, in the vacant slot if there is one.
    #[inline]
    fn arm(&mut self, id: u32, t: f64) {
        if self.vacant != NIL {
            self.ent.transfer(self.vacant, id, t);
            self.vacant = NIL;
        } else {
            self.ent.set(id, t);
        }
    }

    /// Packet `p` arrives at entity `e`: drop-tail, else join the FIFO.
    #[inline]
    fn arrive(&mut self, p: u32, e: usize) {
        let ent = &self.sc.entities[e];
        let g = ent.group as usize;
        if self.measuring {
            self.groups[g].arrivals += 1;
        }
        if self.len[e] >= ent.capacity {
            if self.measuring {
                self.groups[g].drops += 1;
            }
            self.dropped += 1;
            self.release(p);
            return;
        }
        self.arrived[p as usize] = self.now;
        if self.len[e] == 0 {
            self.head[e] = p;
            let st = self
                .service
                .service_time(ent, self.svc[e], &mut self.erng[e]);
            self.arm(e as u32, self.now + st);
        } else {
            self.link[self.tail[e] as usize] = p;
        }
        self.tail[e] = p;
        self.link[p as usize] = NIL;
        self.len[e] += 1;
    }

    fn on_done(&mut self, e: usize) {
        let ent = &self.sc.entities[e];
        let now = self.now;
        let p = self.head[e];
        self.head[e] = self.link[p as usize];
        self.len[e] -= 1;
        if self.len[e] > 0 {
            let st = self
                .service
                .service_time(ent, self.svc[e], &mut self.erng[e]);
            self.ent.set(e as u32, now + st);
        } else {
            self.vacant = e as u32;
        }
        if self.measuring {
            let g = &mut self.groups[ent.group as usize];
            g.departures += 1;
            g.sojourn_sum += now - self.arrived[p as usize];
        }
        let hop = self.routing.next(EntityId(e as u32), &mut self.erng[e]);
        let d = self.delay[e];
        if d > 0.0 {
            // Onto the link: FIFO behind the packets already in flight.
            let pi = p as usize;
            self.dest[pi] = match hop {
                Hop::To(next) => next.0,
                Hop::Exit => NIL,
            };
            self.arrived[pi] = now + d;
            self.link[pi] = NIL;
            if self.lhead[e] == NIL {
                self.lhead[e] = p;
                self.arm(self.land0 + e as u32, now + d);
            } else {
                self.link[self.ltail[e] as usize] = p;
            }
            self.ltail[e] = p;
            self.on_links += 1;
            return;
        }
        match hop {
            Hop::To(next) => self.arrive(p, next.0 as usize),
            Hop::Exit => self.leave(p),
        }
    }

    /// The head packet of entity e's link lands.
    fn on_land(&mut self, e: usize) {
        let p = self.lhead[e];
        let next = self.link[p as usize];
        self.lhead[e] = next;
        if next == NIL {
            self.vacant = self.land0 + e as u32;
        } else {
            self.ent
                .set(self.land0 + e as u32, self.arrived[next as usize]);
        }
        self.on_links -= 1;
        match self.dest[p as usize] {
            NIL => self.leave(p),
            to => self.arrive(p, to as usize),
        }
    }

    #[inline]
    fn leave(&mut self, p: u32) {
        self.delivered += 1;
        if self.measuring {
            let c = &mut self.classes[self.class[p as usize] as usize];
            c.delivered += 1;
            c.delay_sum += self.now - self.birth[p as usize];
        }
        self.release(p);
    }
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
    let n = sc.entities.len();
    let ns = sc.sources.len();
    let mut net = Net {
        sc,
        routing,
        service,
        src: Timers::new(ns),
        ent: Timers::new(2 * n),
        land0: n as u32,
        vacant: NIL,
        now: 0.0,
        birth: Vec::new(),
        arrived: Vec::new(),
        class: Vec::new(),
        dest: Vec::new(),
        link: Vec::new(),
        free: NIL,
        live: 0,
        max_packets: len.max_packets,
        head: vec![NIL; n],
        tail: vec![NIL; n],
        len: vec![0; n],
        lhead: vec![NIL; n],
        ltail: vec![NIL; n],
        svc: sc.entities.iter().map(|e| service.prepare(e)).collect(),
        delay: sc.entities.iter().map(|e| service.link_delay(e)).collect(),
        erng: (0..n as u32)
            .map(|i| Stream::new(seed, stream_id(1, i, replication)))
            .collect(),
        phase: vec![0; ns],
        srng: (0..ns as u32)
            .map(|i| Stream::new(seed, stream_id(2, i, replication)))
            .collect(),
        measuring: len.warmup <= 0.0,
        groups: vec![GroupStats::default(); sc.groups],
        classes: vec![ClassStats::default(); sc.classes],
        generated: 0,
        delivered: 0,
        dropped: 0,
        on_links: 0,
    };
    // Initial phases from the stationary law pi = (phi2, phi1) / (phi1 + phi2).
    for i in 0..ns {
        let s = sc.sources[i];
        let tot = s.phi[0] + s.phi[1];
        if tot > 0.0 && net.srng[i].uniform() * tot >= s.phi[1] {
            net.phase[i] = 1;
        }
        net.schedule_source(i);
    }
    let end = len.warmup + len.horizon;
    let mut events: u64 = 0;
    let mut stop = Stop::Completed;
    let land0 = net.land0;
    loop {
        // The earlier of the two heaps' roots; on a tie the entity first.
        let (now, id, source) = match (net.src.peek(), net.ent.peek()) {
            (None, None) => break,
            (Some((ts, i)), Some((te, _))) if ts < te => (ts, i, true),
            (Some((ts, i)), None) => (ts, i, true),
            (_, Some((te, e))) => (te, e, false),
        };
        if now > end {
            break;
        }
        net.now = now;
        if !net.measuring && now >= len.warmup {
            net.measuring = true;
        }
        events += 1;
        if events & 0xFFFF == 0 {
            ctx.check_cancel()?;
        }
        if source {
            if !net.on_source(id as usize) {
                stop = Stop::PoolFull;
                break;
            }
        } else {
            if id < land0 {
                net.on_done(id as usize);
            } else {
                net.on_land((id - land0) as usize);
            }
            if net.vacant != NIL {
                net.ent.cancel(net.vacant);
                net.vacant = NIL;
            }
        }
    }
    let queued: u64 = net.len.iter().map(|&l| u64::from(l)).sum();
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
        inside: queued + net.on_links,
        events,
    })
}
