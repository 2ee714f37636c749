//! `repro export`: tidy rows (one per point, series and metric) of an
//! experiment's results, and their order (sweep order, then series and
//! metric, so exports diff cleanly).

use crate::manifest::Manifest;
use crate::measure::ExperimentResults;
use std::collections::BTreeMap;

/// The `solver` column of rows that carry a paper's printed numbers.
const REFERENCE_SOLVER: &str = "reference_data";

/// The tidy rows of one experiment's results; `code` maps task keys to the
/// code version that computed them.
pub fn tidy_rows(r: &ExperimentResults, code: &BTreeMap<String, String>) -> Vec<reports::TidyRow> {
    let m = &r.manifest;
    let mut rows = Vec::new();
    for ((pi, series, metric), a) in &r.values {
        // A name that is no series is one of the manifest's
        // `reference_data` entries (a paper's printed numbers), which the
        // measure stage joins in like a series.
        let solver = match m.series(series) {
            Some(s) => s.solver.clone(),
            None => REFERENCE_SOLVER.to_string(),
        };
        let (fidelity, code_version) = task_provenance(r, *pi, series, code);
        rows.push(reports::TidyRow {
            experiment: m.id.clone(),
            version: m.version,
            series: series.clone(),
            solver,
            point: m.points.get(*pi).map(|p| p.json()).unwrap_or_default(),
            metric: metric.clone(),
            value: a.value,
            half_width: a.half_width,
            n: a.n,
            status: r
                .status
                .get(&(*pi, series.clone()))
                .map_or("done", |s| s.as_str())
                .to_string(),
            fidelity,
            code_version,
        });
    }
    rows
}

/// Sorts rows of the experiments `ms` into sweep order, then series and metric.
pub fn sort_rows(ms: &[Manifest], rows: &mut [reports::TidyRow]) {
    rows.sort_by(|a, b| {
        (
            a.experiment.as_str(),
            point_order(ms, a),
            a.series.as_str(),
            a.metric.as_str(),
        )
            .cmp(&(
                b.experiment.as_str(),
                point_order(ms, b),
                b.series.as_str(),
                b.metric.as_str(),
            ))
    });
}

fn point_order(ms: &[Manifest], r: &reports::TidyRow) -> usize {
    ms.iter()
        .find(|m| m.id == r.experiment)
        .and_then(|m| m.points.iter().position(|p| p.json() == r.point))
        .unwrap_or(usize::MAX)
}

/// The fidelity and code version of the tasks behind a (point, series): those
/// of its first replication; empty for reference data and unrecorded tasks.
fn task_provenance(
    r: &ExperimentResults,
    point: usize,
    series: &str,
    code: &BTreeMap<String, String>,
) -> (String, String) {
    let key = r
        .keys
        .get(&(point, series.to_string()))
        .and_then(|k| k.first());
    let fidelity = key
        .and_then(|k| r.tasks.get(k))
        .map_or(String::new(), |t| t.fidelity.clone());
    let code_version = key.and_then(|k| code.get(k)).cloned().unwrap_or_default();
    (fidelity, code_version)
}
