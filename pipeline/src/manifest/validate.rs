//! Validation against the solver registry: every parameter a series' solver
//! receives must be one it documents.

use super::locate::Ctx;
use super::values::shorten;
use super::ManifestError;
use serde_json::Value as Json;
use serde_yaml::{Mapping, Value as Yaml};
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
    let sweep_key = |axis: &str| -> String {
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
    };
    let candidates = sparams
        .keys()
        .map(|k| (k.as_str(), format!("series.{series}.params.{k}")))
        .chain(
            qparams
                .keys()
                .map(|k| (k.as_str(), format!("series.{series}.quick.params.{k}"))),
        )
        .chain(params.keys().map(|k| (k.as_str(), format!("params.{k}"))))
        .chain(axes.iter().map(|a| (a.as_str(), sweep_key(a))));
    for (name, key) in candidates {
        if known.contains(&name) {
            continue;
        }
        let hint = match external::spec::nearest(name, &known) {
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
