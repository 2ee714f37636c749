//! The series of declared programs: values against the parameters' rules,
//! required parameters given, defaults added. (Metrics read of them are
//! checked with every other series' in `metrics.rs`: a declared program's
//! `doc()` lists its declared metrics.)

use crate::manifest::place::Ctx;
use crate::manifest::values::shorten;
use crate::manifest::{ManifestError, Points};
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
