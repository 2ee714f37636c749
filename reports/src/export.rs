//! Tidy export: one row per (experiment, version, series, point, metric), with
//! one column per sweep axis (CSV) or the axes as an object (JSON).

use crate::{ReportError, Result, TidyRow};
use serde_json::{Map, Value as Json};

/// Columns before the sweep axes, in order.
pub const TIDY_HEADER: [&str; 4] = ["experiment", "version", "series", "solver"];
/// Columns after the sweep axes, in order. `ci_n` is the number of batch or
/// replication means behind the confidence interval (empty for models); it is
/// not called `n` because `n` is a common axis name (a buffer size).
pub const TIDY_TAIL: [&str; 4] = ["metric", "value", "half_width", "ci_n"];

/// The point's axis values (the JSON object in `TidyRow::point`).
fn axes(row: &TidyRow) -> Map<String, Json> {
    serde_json::from_str(&row.point).unwrap_or_default()
}

/// Every axis name of `rows`, in order of first appearance.
pub fn axis_columns(rows: &[TidyRow]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    for r in rows {
        for k in axes(r).keys() {
            if !cols.contains(k) {
                cols.push(k.clone());
            }
        }
    }
    cols
}

/// An axis value as a CSV field: numbers as written in the manifest, strings bare.
fn field(v: Option<&Json>) -> String {
    match v {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The CSV header name of an axis: the axis name, or `axis.NAME` when the name
/// is one of the fixed columns.
pub(crate) fn axis_header(name: &str) -> String {
    if TIDY_HEADER.contains(&name) || TIDY_TAIL.contains(&name) || crate::FRAME_TAIL.contains(&name)
    {
        format!("axis.{name}")
    } else {
        name.to_string()
    }
}

/// Writes tidy CSV with header `experiment,version,series,solver,<one column per
/// sweep axis>,metric,value,half_width,ci_n`. A row of an experiment without some
/// axis leaves that field empty; `None` becomes an empty field; floats use
/// Rust's shortest round-trip `{}` formatting, so reading them back gives the
/// stored bits.
pub fn write_tidy_csv<W: std::io::Write>(rows: &[TidyRow], out: W) -> Result<()> {
    let err = |e: crate::Cause| ReportError::Write {
        path: "tidy CSV".to_string(),
        cause: e,
    };
    let cols = axis_columns(rows);
    let mut w = csv::Writer::from_writer(out);
    let header: Vec<String> = TIDY_HEADER
        .iter()
        .map(|s| s.to_string())
        .chain(cols.iter().map(|c| axis_header(c)))
        .chain(TIDY_TAIL.iter().map(|s| s.to_string()))
        .collect();
    w.write_record(&header).map_err(|e| err(e.into()))?;
    for r in rows {
        let point = axes(r);
        let mut rec: Vec<String> = vec![
            r.experiment.clone(),
            r.version.to_string(),
            r.series.clone(),
            r.solver.clone(),
        ];
        rec.extend(cols.iter().map(|c| field(point.get(c))));
        rec.push(r.metric.clone());
        rec.push(format!("{}", r.value));
        rec.push(r.half_width.map(|h| format!("{h}")).unwrap_or_default());
        rec.push(r.n.map(|n| n.to_string()).unwrap_or_default());
        w.write_record(&rec).map_err(|e| err(e.into()))?;
    }
    w.flush().map_err(|e| err(e.into()))?;
    Ok(())
}

/// The rows as a JSON array of objects; `point` is an object of the axis values.
pub fn tidy_json(rows: &[TidyRow]) -> Json {
    Json::Array(
        rows.iter()
            .map(|r| {
                serde_json::json!({
                    "experiment": r.experiment,
                    "version": r.version,
                    "series": r.series,
                    "solver": r.solver,
                    "point": Json::Object(axes(r)),
                    "metric": r.metric,
                    "value": r.value,
                    "half_width": r.half_width,
                    "ci_n": r.n,
                })
            })
            .collect(),
    )
}
