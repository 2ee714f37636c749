//! Programs as solvers ("bring your own solver").
//!
//! A manifest's `solvers:` section declares a program (any command: a Python
//! script, an ns-3 or OMNeT++ binary, a MATLAB batch call) with typed
//! parameters and the metrics it reports. [`ExternalSolver`] implements the
//! solver contract for it, so the planner, the executors, the store and the
//! reports treat it like a compiled-in solver:
//!
//! - [`spec`]: the resolved declaration ([`Program`], [`ParamSpec`]) and the
//!   parameter checks shared by load time and run time;
//! - [`code`]: the content hash of the program's files, part of every task key;
//! - [`protocol`]: the JSON request on stdin and the JSON answer on stdout;
//! - [`run`]: one run in its own process group under a memory limit and a
//!   timeout, stdout capped, the tail of stderr kept, never a hang;
//! - [`solver`]: the [`solvers::Solver`] implementation.
//!
//! This crate does the I/O the `solvers` crate must not do (processes and
//! files); it knows nothing of manifests, YAML or the store.

pub mod code;
pub mod protocol;
pub mod run;
pub mod solver;
pub mod spec;

pub use code::Code;
pub use solver::ExternalSolver;
pub use spec::{ParamSpec, ParamType, Program};
