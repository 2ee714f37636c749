//! Wu ch.4–5: multi-cluster systems whose ACN, ECN and ICN are m-port
//! n-trees (catalogue §3.2, §3.3; issue 22).
//!
//! - [`params`]: the shared parameters of `multicluster.model` and
//!   `multicluster.sim` (issue 22's table of names), validated into a typed
//!   [`System`]: cluster trees with N_i (4.2/5.1) and switch counts (4.3),
//!   the ICN tree (4.1/5.2), per-network link times t_cn (4.15) and t_cs
//!   (4.17), the source MMPP and every model variant.
//!
//! docs/models/multicluster.md records the equations and choices.

use crate::Registry;

pub mod params;
mod sim;

pub use sim::bench_run;

pub use params::{
    parse_system, parse_with_extras, Cluster, LinkTimes, Locality, Network, Params, System, Tree,
    Variants,
};

/// Registers this system's solvers.
pub fn register(r: &mut Registry) {
    r.add(sim::MulticlusterSim);
    // `multicluster.model` is registered here once the model lands.
}

#[cfg(test)]
mod params_tests;
