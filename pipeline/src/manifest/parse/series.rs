//! The `series:` section: each series' solver, replications, precision
//! target and parameters checked against its solver and the sweep, and the
//! manifest's task limit.

use crate::manifest::place::Ctx;
use crate::manifest::precision::precision;
use crate::manifest::programs as declare;
use crate::manifest::raw::{RawManifest, RawQuick};
use crate::manifest::validate::{check_schema, check_types};
use crate::manifest::values::{check_id, check_text, mapping_to_params};
use crate::manifest::yaml::Mapping;
use crate::manifest::{limits, ManifestError, Points, Series};
use external::ExternalSolver;
use serde_json::Value as Json;
use solvers::Registry;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The series of `raw`, in file order, each checked against its solver (in
/// `registry`, which holds the programs the manifest declares), the
/// manifest's `params` and its sweep (`axes`, `points`).
pub(super) fn series(
    ctx: &Ctx,
    raw: &RawManifest,
    registry: &Registry,
    declared: &[Arc<ExternalSolver>],
    params: &BTreeMap<String, Json>,
    axes: &[String],
    points: &Points,
) -> Result<Vec<Series>, ManifestError> {
    if raw.series.0.is_empty() {
        return Err(ctx.err("series", "at least one series is needed"));
    }
    let mut series = Vec::new();
    let mut tasks_per_point: u64 = 0;
    for (name, s) in &raw.series.0 {
        let key = format!("series.{name}");
        check_id(ctx, &key, name)?;
        let solver = registry.get(&s.solver).ok_or_else(|| {
            ctx.err(
                &format!("{key}.solver"),
                format!(
                    "unknown solver `{}` (known: {})",
                    s.solver,
                    registry.names().join(", ")
                ),
            )
        })?;
        if let Some(l) = &s.label {
            check_text(ctx, &format!("{key}.label"), l)?;
        }
        let quick = s.quick.clone().unwrap_or(RawQuick {
            params: Mapping::new(),
            replications: None,
        });
        let mut reps_max = 1;
        for (rkey, r) in [
            (format!("{key}.replications"), s.replications),
            (format!("{key}.quick.replications"), quick.replications),
        ] {
            let Some(r) = r else { continue };
            if r == 0 {
                return Err(ctx.err(&rkey, "must be >= 1"));
            }
            if r > limits::MAX_REPLICATIONS {
                return Err(ctx.err(
                    &rkey,
                    format!(
                        "{r} replications; the limit is {}",
                        limits::MAX_REPLICATIONS
                    ),
                ));
            }
            if solver.kind() == solvers::Kind::Analytic && r > 1 {
                return Err(ctx.err(
                    &rkey,
                    format!("`{}` is analytic: replications must be 1", s.solver),
                ));
            }
            reps_max = reps_max.max(r);
        }
        let precision = s
            .precision
            .as_ref()
            .map(|p| precision(ctx, &format!("{key}.precision"), p, solver.kind(), reps_max))
            .transpose()?;
        // The task limit counts the most a series may need.
        let most = precision.as_ref().map_or(reps_max, |p| p.max_replications);
        tasks_per_point += u64::from(most);
        let sparams = mapping_to_params(ctx, &format!("{key}.params"), &s.params)?;
        for axis in axes {
            if sparams.contains_key(axis) {
                return Err(ctx.err(
                    &format!("{key}.params.{axis}"),
                    "is also a sweep axis; the sweep value would always win",
                ));
            }
        }
        let qparams = mapping_to_params(ctx, &format!("{key}.quick.params"), &quick.params)?;
        check_schema(
            ctx,
            name,
            &s.solver,
            &solver.doc(),
            params,
            &sparams,
            &qparams,
            axes,
            &raw.sweep,
        )?;
        check_types(
            ctx,
            name,
            solver.as_ref(),
            params,
            &sparams,
            &qparams,
            axes,
            &raw.sweep,
            points,
        )?;
        let mut sparams = sparams;
        sparams.extend(declare::check_series(
            ctx, name, declared, &s.solver, params, &sparams, &qparams, axes, points,
        )?);
        series.push(Series {
            label: s.label.clone().unwrap_or_else(|| name.clone()),
            name: name.clone(),
            solver: s.solver.clone(),
            params: sparams,
            replications: s.replications.unwrap_or(1),
            seed: s.seed.unwrap_or(1),
            quick_params: qparams,
            quick_replications: quick.replications,
            precision,
        });
    }
    let tasks = (points.len() as u64).saturating_mul(tasks_per_point);
    if tasks > limits::MAX_TASKS {
        return Err(ctx.err(
            "series",
            format!(
                "{} points × {tasks_per_point} tasks per point (replications summed over series) = {tasks} tasks; the limit is {} per manifest",
                points.len(),
                limits::MAX_TASKS
            ),
        ));
    }
    Ok(series)
}
