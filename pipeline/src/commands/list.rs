//! `repro list`: manifests (current version, stored versions, cache state) or solvers.

use super::{
    runtime,
    solve::{kind_name, solver_listing},
};
use crate::{ListArgs, OutputFormat};
use pipeline::manifest::{discover, load_or_input_error};
use pipeline::plan;
use pipeline::shared::{exit, open_existing_store, sqlite_file};
use solvers::{Fidelity, Registry};
use std::path::Path;
use std::process::ExitCode;
use store::Store;

/// `repro list`: manifests (current version, stored versions, cache state) or solvers.
pub(crate) fn list(args: ListArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    if args.solvers {
        // Then the programs the manifests of --experiments declare.
        let dir = &args.experiments.experiments;
        if args.format == OutputFormat::Json {
            let mut all = solvers_json(registry);
            if let serde_json::Value::Array(a) = &mut all {
                a.extend(super::programs::listing_json(registry, dir));
            }
            println!("{}", serde_json::to_string_pretty(&all)?);
        } else {
            print!("{}", solver_listing(registry));
            print!("{}", super::programs::listing(registry, dir));
        }
        return Ok(ExitCode::from(exit::OK));
    }
    if args.claims {
        runtime()?.block_on(super::list_claims::list_claims(
            &args.experiments.experiments,
            &args.targets,
            &args.store.store,
            registry,
            args.format,
        ))?;
        return Ok(ExitCode::from(exit::OK));
    }
    let entries = runtime()?.block_on(entries(
        &args.experiments.experiments,
        &args.targets,
        &args.store.store,
        registry,
    ))?;
    if args.format == OutputFormat::Json {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "id": e.id, "version": e.version, "stored_versions": e.stored_versions,
                    "title": e.title, "points": e.points,
                    "tasks_full": e.tasks_full, "cached_full": e.cached_full,
                    "tasks_quick": e.tasks_quick, "cached_quick": e.cached_quick,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::from(exit::OK));
    }
    println!(
        "{:<28} {:>3} {:>8} {:>6} {:>14} {:>14}  title",
        "id", "v", "stored", "points", "cached full", "cached quick"
    );
    for e in entries {
        let stored = if e.stored_versions.is_empty() {
            "—".to_string()
        } else {
            e.stored_versions
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        println!(
            "{:<28} {:>3} {:>8} {:>6} {:>14} {:>14}  {}",
            e.id,
            e.version,
            stored,
            e.points,
            format!("{}/{}", e.cached_full, e.tasks_full),
            format!("{}/{}", e.cached_quick, e.tasks_quick),
            e.title
        );
    }
    Ok(ExitCode::from(exit::OK))
}

/// `repro list --solvers --format json`: the interface of every solver, for
/// tools and for checks that call `repro solve`. A parameter's default and
/// rule are in its `doc` text.
fn solvers_json(registry: &Registry) -> serde_json::Value {
    registry
        .iter()
        .map(|x| {
            let d = x.doc();
            let params: Vec<serde_json::Value> = d
                .params
                .iter()
                .map(|p| serde_json::json!({ "name": p.name, "doc": p.doc }))
                .collect();
            serde_json::json!({
                "name": x.name(), "version": x.version(), "kind": kind_name(x.kind()),
                "summary": d.summary, "params": params, "metrics": d.metrics,
            })
        })
        .collect()
}

/// One line of `repro list`.
#[derive(Debug, Clone)]
struct ListEntry {
    id: String,
    version: i64,
    title: String,
    points: usize,
    tasks_full: usize,
    cached_full: usize,
    tasks_quick: usize,
    cached_quick: usize,
    /// Versions of this id in the store (what `repro compare ID@V` accepts).
    stored_versions: Vec<i64>,
}

async fn entries(
    experiments_dir: &Path,
    targets: &[String],
    store_loc: &str,
    registry: &Registry,
) -> anyhow::Result<Vec<ListEntry>> {
    let paths = discover(targets, experiments_dir)?;
    let manifests = load_or_input_error(&paths, registry)?;
    let registry = &pipeline::manifest::with_declared(registry, &manifests);
    // Listing never creates a store: with none yet, nothing is cached.
    let store = match sqlite_file(store_loc) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_existing_store(store_loc).await?),
    };
    let stored = match &store {
        Some(s) => s.experiments().await?,
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for m in &manifests {
        let mut stored_versions: Vec<i64> = stored
            .iter()
            .filter(|e| e.id == m.id)
            .map(|e| e.version)
            .collect();
        stored_versions.sort_unstable();
        stored_versions.dedup();
        // One plan at a time, keeping only its keys: a manifest at the task
        // limit is listed within bounded memory.
        let keys = |fidelity| -> anyhow::Result<Vec<String>> {
            let p = plan::plan(std::slice::from_ref(m), registry, fidelity)?;
            Ok(p.tasks.into_iter().map(|t| t.key).collect())
        };
        let kf = keys(Fidelity::Full)?;
        let cached_full = cached_count(store.as_ref(), &kf).await?;
        let tasks_full = kf.len();
        drop(kf);
        // Without simulations the quick plan is the full one (analytic tasks are
        // shared between profiles): no need to plan it again.
        let has_sim = m.series.iter().any(|s| {
            registry
                .get(&s.solver)
                .is_some_and(|x| x.kind() == solvers::Kind::Simulation)
        });
        let kq = if has_sim {
            keys(Fidelity::Quick)?
        } else {
            Vec::new()
        };
        let (tasks_quick, cached_quick) = if has_sim {
            (kq.len(), cached_count(store.as_ref(), &kq).await?)
        } else {
            (tasks_full, cached_full)
        };
        out.push(ListEntry {
            id: m.id.clone(),
            version: m.version,
            title: m.title.clone(),
            points: m.points.len(),
            tasks_full,
            cached_full,
            tasks_quick,
            cached_quick,
            stored_versions,
        });
    }
    if let Some(s) = store {
        s.close().await;
    }
    Ok(out)
}

async fn cached_count(store: Option<&Store>, keys: &[String]) -> anyhow::Result<usize> {
    Ok(match store {
        Some(s) => s.cached_keys(keys).await?.len(),
        None => 0,
    })
}
