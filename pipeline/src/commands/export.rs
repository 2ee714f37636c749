//! `repro export`: tidy rows to stdout or `--out FILE`, as CSV, JSON, Parquet
//! or Arrow IPC.

use super::{fidelity_of, runtime};
use crate::{ExportArgs, ExportFormat};
use anyhow::{bail, Context};
use pipeline::manifest::unknown_id_message;
use pipeline::manifest::Manifest;
use pipeline::measure::claims::{evaluate_claims, ClaimResult};
use pipeline::measure::status::{statuses_of, Derived, ExperimentFacts};
use pipeline::measure::{
    code_versions, collect_at, collect_fidelity, error_measures, stored_manifests,
};
use pipeline::render::export::{sort_rows, tidy_rows};
use pipeline::shared::{exit, open_existing_store, InputError};
use reports::Records;
use solvers::{Fidelity, Registry};
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use store::Store;

/// Where the output goes: `--out FILE` or stdout; binary formats need a file.
/// A file is written beside its target and renamed by [`Output::finish`]: a
/// failure before that leaves an existing `--out` file as it was.
pub(crate) enum Output {
    File(reports::AtomicFile, std::path::PathBuf),
    Stdout(std::io::StdoutLock<'static>),
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::File(f, _) => f.write(buf),
            Output::Stdout(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::File(f, _) => f.flush(),
            Output::Stdout(s) => s.flush(),
        }
    }
}

impl Output {
    /// Flushes; a file is put in place only now.
    pub(crate) fn finish(self) -> anyhow::Result<()> {
        match self {
            Output::File(f, path) => f
                .commit()
                .with_context(|| format!("cannot write {}", path.display())),
            Output::Stdout(mut s) => Ok(s.flush()?),
        }
    }
}

pub(crate) fn output(out: Option<&Path>, binary: Option<&str>) -> anyhow::Result<Output> {
    match (out, binary) {
        (Some(path), _) => {
            let f = reports::AtomicFile::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            Ok(Output::File(f, path.to_path_buf()))
        }
        (None, Some(format)) => Err(InputError(format!(
            "--format {format} writes a binary file: give it with --out FILE"
        ))
        .into()),
        (None, None) => Ok(Output::Stdout(std::io::stdout().lock())),
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
    let fidelity = fidelity_of(args.quick);
    if args.statuses || args.claims {
        let (manifests, claims) =
            runtime()?.block_on(claims(&args.store.store, &args.ids, registry, fidelity))?;
        let table = if args.statuses {
            statuses_table(&manifests, &claims)
        } else {
            claims_table(&claims)
        };
        match args.format {
            ExportFormat::Json => {
                serde_json::to_writer_pretty(&mut w, &table.json()?)?;
                writeln!(w)?;
            }
            ExportFormat::Csv => table.write_csv(&mut w)?,
            ExportFormat::Parquet => reports::write_parquet(&mut table.frame()?, &mut w)?,
            ExportFormat::Arrow => reports::write_arrow(&mut table.frame()?, &mut w)?,
        }
        // Renames the written file into place (a flush alone leaves it aside).
        w.finish()?;
        return Ok(ExitCode::from(exit::OK));
    }
    let rows = runtime()?.block_on(rows(&args.store.store, &args.ids, registry, fidelity))?;
    match args.format {
        ExportFormat::Json => {
            serde_json::to_writer_pretty(&mut w, &reports::tidy_json(&rows))?;
            writeln!(w)?;
        }
        ExportFormat::Csv => reports::write_tidy_csv(&rows, &mut w)?,
        ExportFormat::Parquet => reports::write_parquet(&mut reports::tidy_frame(&rows)?, &mut w)?,
        ExportFormat::Arrow => reports::write_arrow(&mut reports::tidy_frame(&rows)?, &mut w)?,
    }
    w.finish()?;
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
    let manifests = stored(&store, store_loc, ids, registry).await?;
    let registry = &pipeline::manifest::with_declared(registry, &manifests);
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
            Err(e) if ids.is_empty() && e.chain().any(super::user_caused) => {
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

/// Every manifest in the store (latest version of each), after checking that
/// each of `ids` is one of them.
async fn stored(
    store: &Store,
    store_loc: &str,
    ids: &[String],
    registry: &Registry,
) -> anyhow::Result<Vec<Manifest>> {
    let manifests = stored_manifests(store, registry).await?;
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
    Ok(manifests)
}

/// The manifests selected (latest stored version of each, those run at this
/// fidelity) and their evaluated claims.
async fn claims(
    store_loc: &str,
    ids: &[String],
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<(Vec<Manifest>, Vec<ClaimResult>)> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored(&store, store_loc, ids, registry).await?;
    let registry = &pipeline::manifest::with_declared(registry, &manifests);
    let mut run = Vec::new();
    let mut claims = Vec::new();
    for m in manifests
        .into_iter()
        .filter(|m| ids.is_empty() || ids.contains(&m.id))
    {
        let Some(r) = collect_at(&store, &m, registry, fidelity).await? else {
            if !ids.is_empty() {
                bail!(InputError(format!(
                    "`{}` has no {} results in the store {store_loc}",
                    m.id,
                    fidelity.as_str()
                )));
            }
            continue;
        };
        let ems = error_measures(&r);
        claims.extend(evaluate_claims(&r, &ems, fidelity));
        run.push(m);
    }
    store.close().await;
    if run.is_empty() {
        bail!(InputError(format!(
            "nothing to export at {} fidelity: the store {store_loc} holds no results of it",
            fidelity.as_str()
        )));
    }
    Ok((run, claims))
}

/// One row per entry the experiments touch, with its status.
fn statuses_table(manifests: &[Manifest], claims: &[ClaimResult]) -> Records {
    let facts: Vec<ExperimentFacts> = manifests
        .iter()
        .map(|m| ExperimentFacts::of(m, claims))
        .collect();
    let rows = statuses_of(&facts);
    let count = |f: &dyn Fn(&Derived) -> usize| -> Vec<i64> {
        rows.iter().map(|(_, _, d)| f(d) as i64).collect()
    };
    Records::default()
        .text(
            "entry",
            rows.iter().map(|(id, _, _)| Some(id.clone())).collect(),
        )
        .text(
            "paper",
            rows.iter().map(|(_, p, _)| p.map(str::to_string)).collect(),
        )
        .text(
            "status",
            rows.iter()
                .map(|(_, _, d)| Some(d.status.to_string()))
                .collect(),
        )
        .int("claims_holding", count(&|d| d.holding))
        .int("claims_checkable", count(&|d| d.checkable))
        .int("sanity_checks", count(&|d| d.sanity))
        .int("fits", count(&|d| d.fits))
}

/// One row per claim.
fn claims_table(claims: &[ClaimResult]) -> Records {
    let text = |f: &dyn Fn(&ClaimResult) -> Option<String>| -> Vec<Option<String>> {
        claims.iter().map(f).collect()
    };
    Records::default()
        .text("experiment", text(&|c| Some(c.experiment.clone())))
        .int("version", claims.iter().map(|c| c.version).collect())
        .text("claim", text(&|c| Some(c.id.clone())))
        .text("kind", text(&|c| Some(c.kind.to_string())))
        .text("entries", text(&|c| Some(c.entries.join(" "))))
        .text("verdict", text(&|c| Some(c.verdict.to_string())))
        .text("expect", text(&|c| Some(c.expect.to_string())))
        .text(
            "quick_expect",
            text(&|c| c.quick_expect.map(|v| v.to_string())),
        )
        .text("quick_why", text(&|c| c.quick_why.clone()))
        .text("status", text(&|c| Some(c.status.to_string())))
        .text("sanity", text(&|c| c.sanity.clone()))
        .text("fit", text(&|c| c.fit.clone()))
        .int(
            "evaluated_points",
            claims.iter().map(|c| c.points.len() as i64).collect(),
        )
        .int(
            "skipped_points",
            claims.iter().map(|c| c.skipped.len() as i64).collect(),
        )
        .text("holds", text(&|c| Some(c.holds.clone())))
        .text("points", text(&|c| c.points_filter.clone()))
        .text("why", text(&|c| c.why.clone()))
        .text("quote", text(&|c| Some(c.quote.clone())))
        .text("where", text(&|c| Some(c.where_.clone())))
}
