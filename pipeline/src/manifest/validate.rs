//! Validation against the solver registry: every parameter a series' solver
//! receives must be one it documents.

use super::place::Ctx;
use super::values::shorten;
use super::yaml::{Mapping, Value as Yaml};
use super::ManifestError;
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Every key a series' solver receives (manifest params, series params,
/// quick params, sweep axes) must be one of the solver's documented
/// parameters (`SolverDoc::params`, which a solvers test keeps equal to what
/// its parameter struct accepts). The error points at the key where the
/// parameter is written.
#[allow(clippy::too_many_arguments)]
pub(super) fn check_schema(
    ctx: &Ctx,
    series: &str,
    solver: &str,
    doc: &solvers::SolverDoc,
    params: &BTreeMap<String, Json>,
    sparams: &BTreeMap<String, Json>,
    qparams: &BTreeMap<String, Json>,
    axes: &[String],
    sweep: &Mapping,
) -> Result<(), ManifestError> {
    let known: Vec<&str> = doc.params.iter().map(|p| p.name).collect();
    let candidates = sparams
        .keys()
        .map(|k| (k.as_str(), format!("series.{series}.params.{k}")))
        .chain(
            qparams
                .keys()
                .map(|k| (k.as_str(), format!("series.{series}.quick.params.{k}"))),
        )
        .chain(params.keys().map(|k| (k.as_str(), format!("params.{k}"))))
        .chain(axes.iter().map(|a| (a.as_str(), sweep_key(sweep, a))));
    for (name, key) in candidates {
        if known.contains(&name) {
            continue;
        }
        let hint = match external::spec::nearest(name, known.iter().copied()) {
            Some(n) => format!("did you mean `{n}`? "),
            None => String::new(),
        };
        return Err(ctx.err(
            &key,
            format!(
                "`{}` is not a parameter of solver `{solver}` (series `{series}`); {hint}its parameters: {}",
                shorten(name),
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// Where a sweep axis is written: `sweep.K`, or `sweep.g.zip.K` in a zip group.
fn sweep_key(sweep: &Mapping, axis: &str) -> String {
    for (k, v) in sweep {
        let Some(k) = k.as_str() else { continue };
        if k == axis {
            return format!("sweep.{k}");
        }
        if let Some(Yaml::Mapping(z)) = v.as_mapping().and_then(|m| m.get(Yaml::from("zip"))) {
            if z.contains_key(Yaml::from(axis)) {
                return format!("sweep.{k}.zip.{axis}");
            }
        }
    }
    format!("sweep.{axis}")
}

/// A key no solver takes, sorted after every real parameter name (`~` is
/// above every letter, digit and `_`), so that serde reads the given values
/// before it meets this one and stops with "unknown field"; longer than 64
/// characters, so that the solvers' "did you mean" (`solvers::params::nearest`)
/// does not compare it with every parameter name each time.
const PROBE: &str = "~repro_type_probe_longer_than_any_parameter_name_so_no_near_name_is_sought";

/// The type of every value a compiled-in series' solver receives, checked at
/// load time by the solver's own parameter struct: each value is handed to
/// the solver alone beside [`PROBE`], an unknown key that stops its
/// `#[serde(deny_unknown_fields)]` parsing before any work is done. A value
/// of the wrong type (`K: "NaN"`) fails first, and the error names the key
/// where it is written. Declared programs are checked by their own rules
/// (`programs::checks`); a solver that does not answer the bare probe with
/// "unknown field" is not probed further (it could start working).
#[allow(clippy::too_many_arguments)]
pub(super) fn check_types(
    ctx: &Ctx,
    series: &str,
    solver: &dyn solvers::Solver,
    params: &BTreeMap<String, Json>,
    sparams: &BTreeMap<String, Json>,
    qparams: &BTreeMap<String, Json>,
    axes: &[String],
    sweep: &Mapping,
    points: &super::Points,
) -> Result<(), ManifestError> {
    if solver.definition().is_some() {
        return Ok(());
    }
    let task = solvers::TaskContext::new(1, solvers::Fidelity::Quick);
    let answer = |name: &str, value: &Json| -> Option<String> {
        let mut m = serde_json::Map::new();
        if !name.is_empty() {
            m.insert(name.to_string(), value.clone());
        }
        m.insert(PROBE.to_string(), Json::from(0));
        match solver.solve(&Json::Object(m), &task) {
            Err(solvers::SolveError::BadParams(msg)) => Some(msg),
            _ => None,
        }
    };
    let stop = format!("unknown field `{PROBE}`");
    let stops = |msg: &str| msg.contains(&stop);
    if !answer("", &Json::Null).is_some_and(|m| stops(&m)) {
        return Ok(());
    }
    let given = sparams
        .iter()
        .map(|(k, v)| (k.as_str(), v, format!("series.{series}.params.{k}")))
        .chain(
            qparams
                .iter()
                .map(|(k, v)| (k.as_str(), v, format!("series.{series}.quick.params.{k}"))),
        )
        .chain(
            params
                .iter()
                .map(|(k, v)| (k.as_str(), v, format!("params.{k}"))),
        );
    let swept = axes.iter().flat_map(|a| {
        let mut seen = std::collections::BTreeSet::new();
        points
            .axis_values(a)
            .filter(move |v| seen.insert(v.to_string()))
            .map(move |v| (a.as_str(), v, sweep_key(sweep, a)))
    });
    let values: Vec<(&str, &Json, String)> = given.chain(swept).collect();
    // Most values are valid: they are first handed over together, as few
    // probes as there are values of one name (a derived parameter struct
    // reads each value by itself, so a probe stops at `PROBE` exactly when
    // each of its values alone would), and value by value only when a probe
    // stops earlier, to name the first bad value as the loop below always
    // did.
    // The k-th value of a name goes into probe k (a count per name, not a
    // search of the probes: a sweep of 200,000 values made that quadratic).
    let mut probes: Vec<serde_json::Map<String, Json>> = Vec::new();
    let mut filled: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, value, _) in &values {
        let k = filled.entry(*name).or_insert(0);
        if *k == probes.len() {
            probes.push(serde_json::Map::new());
        }
        probes[*k].insert(name.to_string(), (*value).clone());
        *k += 1;
    }
    let all_valid = probes.into_iter().all(|mut p| {
        p.insert(PROBE.to_string(), Json::from(0));
        match solver.solve(&Json::Object(p), &task) {
            Err(solvers::SolveError::BadParams(msg)) => stops(&msg),
            _ => false,
        }
    });
    if all_valid {
        return Ok(());
    }
    for (name, value, key) in values {
        let Some(msg) = answer(name, value) else {
            continue;
        };
        if stops(&msg) {
            continue;
        }
        return Err(ctx.err(
            &key,
            format!(
                "{} is not a valid `{}` for solver `{}` (series `{series}`): {msg}",
                shorten(&value.to_string()),
                shorten(name),
                solver.name()
            ),
        ));
    }
    Ok(())
}
