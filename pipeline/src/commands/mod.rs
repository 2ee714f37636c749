//! One module per command: `fn NAME(args, registry) -> Result<ExitCode>`
//! takes what clap parsed (main.rs), calls the pipeline's stages in order
//! (manifest -> plan -> execute -> measure -> render, as far as the command
//! goes) and prints their answer. What a command does is in its file; the
//! stages know no command.

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
use pipeline::shared::{open_store, sqlite_file};
use solvers::Fidelity;
use store::Store;

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

/// Opens the store if it exists: planning commands (`run --dry-run`, `why`)
/// never create one.
pub(crate) async fn existing_store(location: &str) -> anyhow::Result<Option<Store>> {
    Ok(match sqlite_file(location) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_store(location).await?),
    })
}
