//! `repro report`: re-render from the store.

use super::runtime;
use crate::ReportArgs;
use pipeline::exit;
use solvers::Registry;
use std::process::ExitCode;

/// `repro report`: re-render from the store.
pub(crate) fn report(args: ReportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let results = &args.results.results;
    let n = runtime()?.block_on(pipeline::report(&args.store.store, results, registry))?;
    eprintln!(
        "re-rendered {n} experiments into {}",
        results.join("index.html").display()
    );
    Ok(ExitCode::from(exit::OK))
}
