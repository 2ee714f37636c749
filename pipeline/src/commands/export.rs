//! `repro export`: tidy rows to stdout or `--out FILE`, as CSV, JSON, Parquet
//! or Arrow IPC.

use super::{fidelity_of, runtime};
use crate::{ExportArgs, ExportFormat};
use anyhow::{bail, Context};
use pipeline::manifest::unknown_id_message;
use pipeline::measure::{code_versions, collect_fidelity, stored_manifests};
use pipeline::render::export::{sort_rows, tidy_rows};
use pipeline::shared::{exit, open_existing_store, InputError};
use solvers::{Fidelity, Registry};
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
    let rows = runtime()?.block_on(rows(
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

/// Tidy rows of the latest version of each (selected) experiment in the store.
async fn rows(
    store_loc: &str,
    ids: &[String],
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Vec<reports::TidyRow>> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored_manifests(&store, registry).await?;
    let registry = &pipeline::manifest::with_declared(registry, &manifests);
    for id in ids {
        if !manifests.iter().any(|m| &m.id == id) {
            let known: Vec<String> = manifests.iter().map(|m| m.id.clone()).collect();
            bail!(InputError(unknown_id_message(
                &format!("no experiment `{id}` in the store {store_loc}"),
                id,
                &known
            )));
        }
    }
    let code = code_versions(&store).await?;
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for m in manifests
        .iter()
        .filter(|m| ids.is_empty() || ids.contains(&m.id))
    {
        let r = match collect_fidelity(&store, m, registry, fidelity).await {
            Ok(r) => r,
            // Exporting everything skips what was never run at this fidelity.
            Err(e) if ids.is_empty() && e.is::<InputError>() => {
                skipped.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        rows.extend(tidy_rows(&r, &code));
    }
    if rows.is_empty() && !skipped.is_empty() {
        return Err(InputError(format!(
            "nothing to export at {} fidelity: {}",
            fidelity.as_str(),
            skipped.join("; ")
        ))
        .into());
    }
    for why in &skipped {
        tracing::info!("skipped: {why}");
    }
    sort_rows(&manifests, &mut rows);
    store.close().await;
    Ok(rows)
}
