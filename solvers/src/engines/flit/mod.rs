//! Flit-level wormhole network engine (catalogue §6 SIM-4, built so that the
//! indirect multi-cluster networks of SIM-5 plug in).
//!
//! Time advances in integer cycles. Each cycle has two phases (docs/design.md,
//! "Shape of a simulation engine"): first the flits and credits that were in
//! flight land (and flits that reached their destination are ejected at once:
//! ejection is immediate and unlimited, catalogue §3.1 "Choose"), then every
//! router with work allocates output VCs to waiting headers and moves at most
//! one flit per output channel. A router's allocation touches only its own
//! output VCs and what it sends lands in the next phase, so the result does
//! not depend on the order in which routers are visited.
//!
//! Two loops compute the same result: the general one (`sim.rs`: flits and
//! credits in flight on a timing wheel, routers visited when marked, paced
//! links, relays) and, for networks whose channels all take one cycle and
//! one flit per cycle and whose messages never stop at a relay (the torus),
//! a cheaper one (`unit.rs`: buffers as counts with the cycles of their last
//! flit in and out, no flit or credit events). [`run`] picks; the tests run
//! both on the same scenarios and compare every counter.
//!
//! Plug-ins, all generic parameters of [`run`] (one compiled loop per choice):
//! - [`Topology`]: routers, output ports, and where each output channel leads;
//! - [`Routing`]: which output VC a header takes, given which are free;
//! - [`LinkTiming`]: per-channel latency and flit period in cycles, both
//!   real-valued (SIM-5's per-network t_cn, t_cs);
//! - [`Destinations`]: which routers carry a processing element and where
//!   their messages go ([`traffic`]: uniform, hot spot, clustered);
//! - the VC configuration is data ([`Scenario::vcs`], [`Scenario::buffer`]).
//!
//! The engine knows nothing of serde or JSON; `systems/torus` maps parameters
//! to a [`Scenario`] and [`Counters`] to an outcome.

mod batch;
mod bounds;
mod sim;
pub mod torus;
pub mod traffic;
mod unit;
mod worm;

pub use bounds::{state_bytes, StateBytes};
#[cfg(test)]
pub(crate) use sim::Mode;
pub use sim::{run, Counters, Finish};

/// [`run`] with every flit moved one by one in the general loop (no leg
/// advanced per message, `worm.rs`) and every cycle stepped while messages
/// exist (`jumps: false`), or with the shortcuts of `mode`: the tests
/// compare them.
#[cfg(test)]
pub(crate) fn run_flitwise<T: Topology, R: Routing, L: LinkTiming, D: Destinations>(
    sc: &Scenario,
    topo: &T,
    routing: &R,
    timing: &L,
    dests: &D,
    ctx: &crate::TaskContext,
    mode: Option<sim::Mode>,
) -> Result<Counters, crate::SolveError> {
    let mode = mode.unwrap_or(sim::Mode {
        general: false,
        worms: false,
        trains: false,
        jumps: false,
    });
    sim::run_with(sc, topo, routing, timing, dests, ctx, mode)
}
pub mod fattree;
mod onoff;
pub use traffic::{Clustered, HotSpot, Uniform};

use crate::des::{RunLength, Stream};

/// A network topology: routers (each with one attached processing element)
/// and unidirectional output channels. Channel `(r, p)` leads to router
/// `link(r, p).0`, where it enters input port `link(r, p).1`.
pub trait Topology {
    fn routers(&self) -> usize;
    /// Output (and input) network ports of the router with the most; unused
    /// ports return `None`.
    fn ports(&self) -> usize;
    /// Ports of one router (default: [`Topology::ports`] for all). An
    /// indirect network's switches, nodes and concentrators differ; the
    /// engine lays its channel arrays out by these counts, so a router pays
    /// only for its own ports. `link(r, p)` is asked for `p < ports_of(r)`
    /// and must lead to an input port below the downstream router's count.
    fn ports_of(&self, _router: u32) -> usize {
        self.ports()
    }
    fn link(&self, router: u32, port: u32) -> Option<(u32, u32)>;
    /// Flits per VC of the input buffer that channel `(router, port)` feeds,
    /// given the scenario's [`Scenario::buffer`] and message length
    /// (default: `buffer` everywhere). A plug-in may deepen some buffers: a
    /// multi-cluster dispatcher's channels into its ECN hold a whole message
    /// in `cd_queue: output` (fattree.rs). At least 1.
    fn buffer_of(&self, _router: u32, _port: u32, buffer: usize, _msg_len: u32) -> usize {
        buffer
    }
}

/// A routing function with its VC selection. For a header at `cur` bound
/// for `dst != cur`, returns the output port and VC to take, or `None` if it
/// must wait this cycle. `free(port, vc)` says whether that output VC may be
/// allocated now. Called again every cycle while the header waits, so
/// adaptive functions see the current state (Duato's dynamic routing).
/// `tag` is the message's current leg's routing data ([`Leg::tag`]; 0 for
/// plug-ins that do not set it). Contract: the answer depends only on the
/// arguments and on `free`, and a call that returns `None` draws nothing
/// from `rng` (the engine skips retrying a blocked header until an output of
/// its router may have become free: a credit returned or a VC released).
pub trait Routing {
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        tag: u32,
        rng: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)>;

    /// Whether the port chosen depends only on (`cur`, `dst`, `tag`) and
    /// never on `free` or `rng` beyond waiting (a deterministic routing with
    /// one VC): the engine may then follow a leg's channels before its
    /// header takes them (legs moved as trains, `worm.rs`). Default: no.
    fn fixed_path(&self) -> bool {
        false
    }
}

/// Per-channel timing in cycles, real-valued so that networks of different
/// speeds share one clock (catalogue SIM-5: per-flit times t_cn, t_cs per
/// network). A channel starts at most one flit per `period` cycles: the flit
/// after one that started at time s starts at max(s + period, c) in the
/// first cycle c whose interval [c, c + 1) contains that time, so a busy
/// channel carries exactly 1/period flits per cycle in the long run. A flit
/// starting at s lands downstream in cycle ⌈s + latency⌉ (at least the next
/// cycle): event times are rounded up to the clock, which adds less than one
/// cycle per hop; pick the cycle short against the link times. With
/// period 1 and integer latencies nothing is rounded (the torus). Credits
/// take one cycle back.
pub trait LinkTiming {
    /// Cycles from the start of a flit on channel `(router, port)` to its
    /// landing in the downstream buffer (finite, > 0).
    fn latency(&self, router: u32, port: u32) -> f64;
    /// Cycles per flit on the channel (finite, >= 1).
    fn period(&self, _router: u32, _port: u32) -> f64 {
        1.0
    }
    /// Latency and period together (the engine's walks over every channel
    /// ask for both; a plug-in that finds both in one look-up says so here).
    #[inline]
    fn timing(&self, router: u32, port: u32) -> (f64, f64) {
        (self.latency(router, port), self.period(router, port))
    }
}

/// Every channel takes the same whole number of cycles and carries one flit
/// per cycle (Wu ch.3's torus: 1).
#[derive(Debug, Clone, Copy)]
pub struct UniformLatency(pub u32);

impl LinkTiming for UniformLatency {
    #[inline]
    fn latency(&self, _: u32, _: u32) -> f64 {
        self.0 as f64
    }
}

/// The same real-valued latency and period on every channel.
#[derive(Debug, Clone, Copy)]
pub struct UniformTiming {
    pub latency: f64,
    pub period: f64,
}

impl LinkTiming for UniformTiming {
    #[inline]
    fn latency(&self, _: u32, _: u32) -> f64 {
        self.latency
    }
    #[inline]
    fn period(&self, _: u32, _: u32) -> f64 {
        self.period
    }
}

/// A (latency, period) pair per channel, `ports` per router, e.g. set per
/// network from Tables 4.2/5.2 (faster links inside clusters than between).
#[derive(Debug, Clone)]
pub struct PerChannelTiming {
    pub ports: usize,
    /// Indexed by `router * ports + port`.
    pub latency: Vec<f64>,
    pub period: Vec<f64>,
}

impl LinkTiming for PerChannelTiming {
    fn latency(&self, router: u32, port: u32) -> f64 {
        self.latency[router as usize * self.ports + port as usize]
    }
    fn period(&self, router: u32, port: u32) -> f64 {
        self.period[router as usize * self.ports + port as usize]
    }
}

/// Where messages come from and go. Routers `0..nodes()` carry one
/// processing element each and generate messages; routers beyond are
/// switches only (an indirect network's). `pick` returns a destination
/// `!= src` among `0..nodes()`; it is called once per message, in
/// generation order, with the engine's stream.
///
/// Beyond a plain destination, a plug-in may give each message a route of
/// several legs through *relays* (a multi-cluster system's concentrators and
/// dispatchers): [`Destinations::route`] gives the first leg, and when a
/// leg's header lands at its target, [`Destinations::next_leg`] either ends
/// the message there (false: the final destination) or rewrites the leg
/// (true): the router is then a relay, an infinite FIFO of messages served
/// one at a time by its injection queue of class 0, which re-injects the
/// message towards the new target. Cut-through (default): the message joins
/// the FIFO when its header lands and the relay sends no flit before it has
/// landed; store-and-forward: it joins when its tail lands. Contract: the
/// routers a message's earlier leg still passes through are never its later
/// legs' targets (legs in different networks).
pub trait Destinations {
    fn nodes(&self) -> u32;
    fn pick(&self, src: u32, rng: &mut Stream) -> u32;
    /// The first leg of a new message from `src` (default: to `pick`, class
    /// 0, tag 0, group 0).
    #[inline]
    fn route(&self, src: u32, rng: &mut Stream) -> Leg {
        Leg {
            dst: self.pick(src, rng),
            class: 0,
            tag: 0,
            group: 0,
            aux: 0,
        }
    }
    /// Called when a header lands at its leg's target `at`: rewrite `leg`
    /// and return true to relay the message at `at`, or false to deliver it.
    #[inline]
    fn next_leg(&self, _at: u32, _leg: &mut Leg) -> bool {
        false
    }
    /// Whether [`Destinations::next_leg`] may ever return true. A plug-in
    /// without relays says false, so that a network of unit channels runs
    /// on the engine's cheaper loop (`unit.rs`); the default is the safe
    /// answer.
    fn relays(&self) -> bool {
        true
    }
    /// Relays forward cut-through (true) or store-and-forward (false).
    fn cut_through(&self) -> bool {
        true
    }
    /// Multiplier of node `node`'s source rates (Wu ch.5's 1/(1 − ϕ_i)).
    fn rate_scale(&self, _node: u32) -> f64 {
        1.0
    }
    /// Message groups for per-group latency ([`Counters::group_latency`]).
    fn groups(&self) -> usize {
        1
    }
    /// Relay statistic slots and the slot of relay router `r`.
    fn relay_slots(&self) -> usize {
        0
    }
    fn relay_slot(&self, _r: u32) -> usize {
        0
    }
}

/// One leg of a message's route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leg {
    /// Target router of the leg (the final one a node `< nodes()`).
    pub dst: u32,
    /// Injection queue at the source (with [`Injection::Classes`]).
    pub class: u32,
    /// Routing data passed to [`Routing::route`].
    pub tag: u32,
    /// Statistics group, `< groups()`.
    pub group: u32,
    /// The plug-in's own data, carried from leg to leg.
    pub aux: u32,
}

/// How messages wait at their source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Injection {
    /// V injection VCs, each with its own infinite FIFO; a new message joins
    /// one of them uniformly at random (Wu §3.3.7's "1/V splitting").
    PerVc,
    /// One infinite FIFO per node; its head message takes whichever injection
    /// VC is idle.
    Shared,
    /// `k` injection queues per router, each with its own injection VC; a
    /// message joins the queue of its first leg's class (Wu ch.4's ACN and
    /// ECN queues). Relays use class 0.
    Classes(usize),
}

impl Injection {
    /// Source queues of a network of `routers` routers with `inj_vcs`
    /// injection VCs in all: one per injection VC, or one per node (`Shared`).
    #[inline]
    pub(crate) fn queues(self, routers: usize, inj_vcs: usize) -> usize {
        match self {
            Injection::PerVc | Injection::Classes(_) => inj_vcs,
            Injection::Shared => routers,
        }
    }
    /// The queue an idle injection VC `inj_vc` of router `router` takes its
    /// next message from.
    #[inline]
    pub(crate) fn queue_of(self, inj_vc: usize, router: usize) -> usize {
        match self {
            Injection::PerVc | Injection::Classes(_) => inj_vc,
            Injection::Shared => router,
        }
    }
}

/// Message generation process of every node (independent copies).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// One message per cycle with probability `p` (BookSim's `bernoulli`).
    Bernoulli { p: f64 },
    /// Poisson arrivals of rate `rate` per cycle.
    Poisson { rate: f64 },
    /// Two-state MMPP (Wu eq 2.1), phase started from its stationary law.
    /// With λ2 = 0 the next arrival is drawn in O(1) whatever the phase
    /// changes in between (`onoff.rs`); otherwise the phase chain is stepped.
    Mmpp {
        phi1: f64,
        phi2: f64,
        lambda1: f64,
        lambda2: f64,
    },
}

impl Source {
    /// Messages per node per cycle.
    pub fn mean_rate(&self) -> f64 {
        match *self {
            Source::Bernoulli { p } => p,
            Source::Poisson { rate } => rate,
            Source::Mmpp {
                phi1,
                phi2,
                lambda1,
                lambda2,
            } => (lambda1 * phi2 + lambda2 * phi1) / (phi1 + phi2),
        }
    }
}

/// Everything a run needs besides the plug-ins. Run lengths are in delivered
/// messages (warm-up, then batches of `run.batch_len`).
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Virtual channels per physical channel (and injection VCs per node).
    pub vcs: usize,
    /// Flit buffer per VC.
    pub buffer: usize,
    /// Message length in flits.
    pub msg_len: u32,
    pub injection: Injection,
    pub source: Source,
    pub run: RunLength,
    /// Budget: a run still short of its batches after this many cycles ends
    /// as [`Finish::Saturated`].
    pub max_cycles: u64,
    /// Messages waiting at the sources (not yet started) beyond which the
    /// network is declared saturated.
    pub backlog_limit: u64,
    /// Cycles without any flit moving, while flits are in the network, after
    /// which the run ends as [`Finish::Stalled`] (deadlock detector).
    pub stall_cycles: u64,
    pub seed: u64,
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod unit_tests;
