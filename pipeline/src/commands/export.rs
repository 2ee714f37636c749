//! `repro export`: tidy rows to stdout.

use super::{fidelity_of, runtime};
use crate::{ExportArgs, ExportFormat};
use pipeline::{exit, InputError};
use solvers::Registry;
use std::io::Write;
use std::process::ExitCode;

/// `repro export`: tidy rows to stdout.
pub(crate) fn export(args: ExportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    if let ExportFormat::Parquet = args.format {
        return Err(InputError(
            "--format parquet is not built yet (see README: polars is deferred); use --format csv"
                .into(),
        )
        .into());
    }
    let rows = runtime()?.block_on(pipeline::export(
        &args.store.store,
        &args.ids,
        registry,
        fidelity_of(args.quick),
    ))?;
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match args.format {
        ExportFormat::Json => {
            serde_json::to_writer_pretty(&mut lock, &reports::tidy_json(&rows))?;
            writeln!(lock)?;
        }
        _ => reports::write_tidy_csv(&rows, &mut lock)?,
    }
    lock.flush().ok();
    Ok(ExitCode::from(exit::OK))
}
