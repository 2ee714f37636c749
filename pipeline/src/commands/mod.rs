//! One module per command, each a thin function `fn NAME(args, registry) ->
//! Result<ExitCode>` that parses nothing (clap did, in main.rs), delegates to
//! the pipeline's stages and prints their answer.

pub mod check;
pub mod compare;
pub mod export;
pub mod list;
pub mod programs;
pub mod report;
pub mod run;
pub mod solve;
pub mod status;
pub mod why;
pub mod worker;

use anyhow::Context;
use solvers::Fidelity;

/// The async runtime for the store. Tokio's default worker count (the number of
/// cores, or `TOKIO_WORKER_THREADS`): solver tasks are bounded by `--jobs`, not by it.
pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// The fidelity a command selects with `--quick`.
pub(crate) fn fidelity_of(quick: bool) -> Fidelity {
    if quick {
        Fidelity::Quick
    } else {
        Fidelity::Full
    }
}
