//! Flit-level wormhole network engine (catalogue §6 SIM-4, built so that the
//! indirect multi-cluster networks of SIM-5 plug in).
//!
//! Time advances in integer cycles. Each cycle has two phases (STYLE.md,
//! "Shape of a simulation engine"): first the flits and credits that were in
//! flight land (and flits that reached their destination are ejected at once:
//! ejection is immediate and unlimited, catalogue §3.1 "Choose"), then every
//! router with work allocates output VCs to waiting headers and moves at most
//! one flit per output channel. A router's allocation touches only its own
//! output VCs and what it sends lands in the next phase, so the result does
//! not depend on the order in which routers are visited.
//!
//! Plug-ins, all generic parameters of [`run`] (one compiled loop per choice):
//! - [`Topology`]: routers, output ports, and where each output channel leads;
//! - [`Routing`]: which output VC a header takes, given which are free;
//! - [`LinkTiming`]: per-channel latency in cycles;
//! - the VC configuration is data ([`Scenario::vcs`], [`Scenario::buffer`]).
//!
//! The engine knows nothing of serde or JSON; `systems/torus` maps parameters
//! to a [`Scenario`] and [`Counters`] to an outcome.

mod sim;
pub mod torus;

pub use sim::{run, Counters, Finish};

use crate::des::{RunLength, Stream};

/// A network topology: routers (each with one attached processing element)
/// and unidirectional output channels. Channel `(r, p)` leads to router
/// `link(r, p).0`, where it enters input port `link(r, p).1`.
pub trait Topology {
    fn routers(&self) -> usize;
    /// Output (and input) network ports per router; unused ports return `None`.
    fn ports(&self) -> usize;
    fn link(&self, router: u32, port: u32) -> Option<(u32, u32)>;
}

/// A routing function with its VC selection. For a header at `cur` bound
/// for `dst != cur`, returns the output port and VC to take, or `None` if it
/// must wait this cycle. `free(port, vc)` says whether that output VC may be
/// allocated now. Called again every cycle while the header waits, so
/// adaptive functions see the current state (Duato's dynamic routing).
pub trait Routing {
    fn route<F: Fn(u32, u32) -> bool>(
        &self,
        cur: u32,
        dst: u32,
        rng: &mut Stream,
        free: F,
    ) -> Option<(u32, u32)>;
}

/// Per-channel latency in cycles (>= 1): a flit sent on channel `(r, p)` in
/// cycle c lands in the downstream buffer in cycle c + latency. Credits take
/// one cycle back.
pub trait LinkTiming {
    fn latency(&self, router: u32, port: u32) -> u32;
}

/// Every channel takes the same number of cycles.
#[derive(Debug, Clone, Copy)]
pub struct UniformLatency(pub u32);

impl LinkTiming for UniformLatency {
    #[inline]
    fn latency(&self, _: u32, _: u32) -> u32 {
        self.0
    }
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
}

/// Message generation process of every node (independent copies).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// One message per cycle with probability `p` (BookSim's `bernoulli`).
    Bernoulli { p: f64 },
    /// Poisson arrivals of rate `rate` per cycle.
    Poisson { rate: f64 },
    /// Two-state MMPP (Wu eq 2.1), phase started from its stationary law.
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

/// Hot-spot destinations (Wu §3.1.4): with probability `delta` a message of
/// any node but `node` goes to `node`; otherwise (and always from `node`) the
/// destination is uniform over the other N − 1 nodes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HotSpot {
    pub node: u32,
    pub delta: f64,
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
    pub hotspot: Option<HotSpot>,
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
