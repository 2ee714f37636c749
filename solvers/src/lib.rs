//! Every analytical model and simulator of repro behind one trait, [`Solver`],
//! and one name -> solver [`registry`].
//!
//! Architecture invariant: this crate does no I/O. A solver's result depends
//! only on its parameters, its seed and the fidelity profile.

pub mod contract;
pub mod des;
pub mod engines;
pub mod markov;
pub mod params;
pub mod queueing;
pub mod registry;
pub mod systems;
pub mod traffic;

pub use contract::{
    metric_matches, Fidelity, Kind, Metric, MetricFact, Outcome, ParamDoc, SolveError, Solver,
    SolverDoc, Status, TaskContext,
};
pub use registry::Registry;
