//! `repro list`: manifests (current version, stored versions, cache state) or solvers.

use super::{
    runtime,
    solve::{kind_name, solver_listing},
};
use crate::{ListArgs, OutputFormat};
use pipeline::exit;
use solvers::Registry;
use std::process::ExitCode;

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
    let entries = runtime()?.block_on(pipeline::list(
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
