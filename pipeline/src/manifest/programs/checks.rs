//! The series of declared programs: values against the parameters' rules,
//! required parameters given, defaults added; metrics read of them declared.

use crate::manifest::locate::Ctx;
use crate::manifest::raw::RawManifest;
use crate::manifest::values::shorten;
use crate::manifest::{FigureKind, ManifestError, Points};
use external::{ExternalSolver, Program};
use serde_json::Value as Json;
use solvers::Solver;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The program behind a series' solver, if it is one.
fn program_of<'a>(declared: &'a [Arc<ExternalSolver>], solver: &str) -> Option<&'a Program> {
    declared
        .iter()
        .find(|s| s.name() == solver)
        .map(|s| s.program())
}

/// A series of a declared program: every value it is given checked against
/// the parameter's rules, every required parameter given. Returns the
/// defaults of the parameters not given anywhere, to add to the series.
#[allow(clippy::too_many_arguments)]
pub(in crate::manifest) fn check_series(
    ctx: &Ctx,
    series: &str,
    declared: &[Arc<ExternalSolver>],
    solver: &str,
    params: &BTreeMap<String, Json>,
    sparams: &BTreeMap<String, Json>,
    qparams: &BTreeMap<String, Json>,
    axes: &[String],
    points: &Points,
) -> Result<BTreeMap<String, Json>, ManifestError> {
    let Some(program) = program_of(declared, solver) else {
        return Ok(BTreeMap::new());
    };
    let bad = |key: &str, name: &str, v: &Json, rule: String| {
        ctx.err(
            key,
            format!(
                "{} is not a valid `{name}` for solver `{solver}` (series `{series}`): {rule}",
                shorten(&v.to_string())
            ),
        )
    };
    let given = params
        .iter()
        .map(|(k, v)| (k, v, format!("params.{k}")))
        .chain(
            sparams
                .iter()
                .map(|(k, v)| (k, v, format!("series.{series}.params.{k}"))),
        )
        .chain(
            qparams
                .iter()
                .map(|(k, v)| (k, v, format!("series.{series}.quick.params.{k}"))),
        );
    for (k, v, key) in given {
        if let Some(spec) = program.param(k) {
            spec.check(v).map_err(|rule| bad(&key, k, v, rule))?;
        }
    }
    for axis in axes {
        let Some(spec) = program.param(axis) else {
            continue;
        };
        for v in points.axis_values(axis) {
            spec.check(v)
                .map_err(|rule| bad(&format!("sweep.{axis}"), axis, v, rule))?;
        }
    }
    let mut defaults = BTreeMap::new();
    for p in &program.params {
        let set =
            params.contains_key(&p.name) || sparams.contains_key(&p.name) || axes.contains(&p.name);
        if set {
            continue;
        }
        match &p.default {
            Some(d) => {
                defaults.insert(p.name.clone(), d.clone());
            }
            None => {
                return Err(ctx.err(
                    &format!("series.{series}.solver"),
                    format!(
                        "solver `{solver}` needs parameter `{}` ({}), which has no default: give it in \
                         params, series.{series}.params or the sweep",
                        p.name,
                        p.describe()
                    ),
                ))
            }
        }
    }
    Ok(defaults)
}

/// Every metric read of a declared program's series (by a comparison, a
/// sweep or metrics figure, a values table, a precision target) is one it
/// declares.
pub(in crate::manifest) fn check_metrics(
    ctx: &Ctx,
    raw: &RawManifest,
    declared: &[Arc<ExternalSolver>],
) -> Result<(), ManifestError> {
    let metrics_of = |series: &str| -> Option<(&str, &[String])> {
        let (_, s) = raw.series.0.iter().find(|(n, _)| n == series)?;
        let p = program_of(declared, &s.solver)?;
        Some((p.name.as_str(), p.metrics.as_slice()))
    };
    let check = |key: &str, series: &str, metric: &str| -> Result<(), ManifestError> {
        match metrics_of(series) {
            Some((solver, ms)) if !ms.iter().any(|m| m == metric) => {
                let hint = external::spec::nearest(
                    metric,
                    &ms.iter().map(String::as_str).collect::<Vec<_>>(),
                )
                .map(|n| format!("did you mean `{n}`? "))
                .unwrap_or_default();
                Err(ctx.err(
                    key,
                    format!(
                        "series `{series}` (solver `{solver}`) does not report `{}`; {hint}its metrics: {}",
                        shorten(metric),
                        ms.join(", ")
                    ),
                ))
            }
            _ => Ok(()),
        }
    };
    for (i, c) in raw.compare.iter().enumerate() {
        for s in [&c.reference, &c.candidate] {
            check(&format!("compare.{i}.metric"), s, &c.metric)?;
        }
    }
    for (i, f) in raw.figures.iter().enumerate() {
        if f.kind == FigureKind::Timeseries {
            continue; // `y` names time series there, not metrics
        }
        let y: Vec<&String> = match &f.y {
            crate::manifest::raw::OneOrMany::One(s) => vec![s],
            crate::manifest::raw::OneOrMany::Many(v) => v.iter().collect(),
        };
        for s in &f.series {
            for m in &y {
                check(&format!("figures.{i}.y"), s, m)?;
            }
        }
    }
    let all: Vec<String> = raw.series.0.iter().map(|(n, _)| n.clone()).collect();
    for (i, t) in raw.tables.iter().enumerate() {
        let series = if t.series.is_empty() { &all } else { &t.series };
        for s in series {
            for m in &t.metrics {
                check(&format!("tables.{i}.metrics"), s, m)?;
            }
        }
    }
    for (name, s) in &raw.series.0 {
        if let Some(p) = &s.precision {
            check(&format!("series.{name}.precision.metric"), name, &p.metric)?;
        }
    }
    Ok(())
}
