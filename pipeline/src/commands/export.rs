//! `repro export`: tidy rows to stdout or `--out FILE`, as CSV, JSON, Parquet
//! or Arrow IPC.

use super::{fidelity_of, runtime};
use crate::{ExportArgs, ExportFormat};
use anyhow::Context;
use pipeline::{exit, InputError};
use solvers::Registry;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

/// Where the output goes: `--out FILE` or stdout; binary formats need a file.
pub(crate) fn output(out: Option<&Path>, binary: Option<&str>) -> anyhow::Result<Box<dyn Write>> {
    match (out, binary) {
        (Some(path), _) => {
            let f = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            Ok(Box::new(std::io::BufWriter::new(f)))
        }
        (None, Some(format)) => Err(InputError(format!(
            "--format {format} writes a binary file: give it with --out FILE"
        ))
        .into()),
        (None, None) => Ok(Box::new(std::io::stdout().lock())),
    }
}

/// `repro export`: tidy rows to stdout or `--out FILE`.
pub(crate) fn export(args: ExportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let binary = match args.format {
        ExportFormat::Parquet => Some("parquet"),
        ExportFormat::Arrow => Some("arrow"),
        ExportFormat::Csv | ExportFormat::Json => None,
    };
    // Refuse a missing --out before reading the store.
    let mut w = output(args.out.as_deref(), binary)?;
    let rows = runtime()?.block_on(pipeline::export(
        &args.store.store,
        &args.ids,
        registry,
        fidelity_of(args.quick),
    ))?;
    match args.format {
        ExportFormat::Json => {
            serde_json::to_writer_pretty(&mut w, &reports::tidy_json(&rows))?;
            writeln!(w)?;
        }
        ExportFormat::Csv => reports::write_tidy_csv(&rows, &mut w)?,
        ExportFormat::Parquet => reports::write_parquet(&mut reports::tidy_frame(&rows)?, &mut w)?,
        ExportFormat::Arrow => reports::write_arrow(&mut reports::tidy_frame(&rows)?, &mut w)?,
    }
    w.flush()?;
    Ok(ExitCode::from(exit::OK))
}
