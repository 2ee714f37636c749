//! The tidy results table as a polars `DataFrame`, and its files: Parquet and
//! Arrow IPC (`repro export --format parquet|arrow`).
//!
//! One row per (experiment, version, point, series, metric); one typed column
//! per sweep axis (`Int64` when every value of the axis is an integer,
//! `Float64` when every value is a number, `Boolean`, else `String`), so that
//! pandas, polars, R and DuckDB read the file without options.

use crate::export::{axis_columns, axis_header};
use crate::{ReportError, Result, TidyRow};
use polars::prelude::*;
use polars_io::prelude::{IpcWriter, ParquetCompression, ParquetWriter, SerWriter};
use serde_json::{Map, Value as Json};
use std::io::Write;

/// The fixed columns of the frame before the sweep axes, in order.
pub const FRAME_HEAD: [&str; 4] = ["experiment", "version", "series", "solver"];
/// The fixed columns after the sweep axes, in order.
pub const FRAME_TAIL: [&str; 7] = [
    "metric",
    "value",
    "half_width",
    "ci_n",
    "status",
    "fidelity",
    "code_version",
];

pub(crate) fn frame_err(what: &str, e: impl Into<crate::Cause>) -> ReportError {
    ReportError::Frame {
        what: what.to_string(),
        cause: e.into(),
    }
}

/// The type a sweep axis gets in the frame: the narrowest that holds every value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AxisType {
    Int,
    Float,
    Bool,
    Text,
}

fn axis_type<'a>(values: impl Iterator<Item = Option<&'a Json>>) -> AxisType {
    let mut t: Option<AxisType> = None;
    for v in values.flatten() {
        let this = match v {
            Json::Null => continue,
            Json::Number(n) if n.is_i64() => AxisType::Int,
            Json::Number(_) => AxisType::Float,
            Json::Bool(_) => AxisType::Bool,
            _ => AxisType::Text,
        };
        t = Some(match (t, this) {
            (None, x) => x,
            (Some(a), b) if a == b => a,
            (Some(AxisType::Int | AxisType::Float), AxisType::Int | AxisType::Float) => {
                AxisType::Float
            }
            _ => AxisType::Text,
        });
    }
    t.unwrap_or(AxisType::Text)
}

/// One sweep-axis column of the frame.
fn axis_column(name: &str, points: &[Map<String, Json>]) -> Column {
    let header = axis_header(name).into();
    let get = || points.iter().map(|p| p.get(name));
    match axis_type(get()) {
        AxisType::Int => Column::new(
            header,
            get().map(|v| v.and_then(Json::as_i64)).collect::<Vec<_>>(),
        ),
        AxisType::Float => Column::new(
            header,
            get().map(|v| v.and_then(Json::as_f64)).collect::<Vec<_>>(),
        ),
        AxisType::Bool => Column::new(
            header,
            get().map(|v| v.and_then(Json::as_bool)).collect::<Vec<_>>(),
        ),
        AxisType::Text => Column::new(
            header,
            get()
                .map(|v| match v {
                    None | Some(Json::Null) => None,
                    Some(Json::String(s)) => Some(s.clone()),
                    Some(other) => Some(other.to_string()),
                })
                .collect::<Vec<_>>(),
        ),
    }
}

/// The tidy frame of `rows`: [`FRAME_HEAD`], one column per sweep axis (named
/// as in the CSV export), then [`FRAME_TAIL`].
pub fn tidy_frame(rows: &[TidyRow]) -> Result<DataFrame> {
    let points: Vec<Map<String, Json>> = rows
        .iter()
        .map(|r| serde_json::from_str(&r.point).unwrap_or_default())
        .collect();
    let text = |name: &str, f: &dyn Fn(&TidyRow) -> &str| {
        Column::new(name.into(), rows.iter().map(f).collect::<Vec<&str>>())
    };
    let mut cols = vec![
        text("experiment", &|r| &r.experiment),
        Column::new(
            "version".into(),
            rows.iter().map(|r| r.version).collect::<Vec<i64>>(),
        ),
        text("series", &|r| &r.series),
        text("solver", &|r| &r.solver),
    ];
    cols.extend(axis_columns(rows).iter().map(|a| axis_column(a, &points)));
    cols.push(text("metric", &|r| &r.metric));
    cols.push(Column::new(
        "value".into(),
        rows.iter().map(|r| r.value).collect::<Vec<f64>>(),
    ));
    cols.push(Column::new(
        "half_width".into(),
        rows.iter()
            .map(|r| r.half_width)
            .collect::<Vec<Option<f64>>>(),
    ));
    cols.push(Column::new(
        "ci_n".into(),
        rows.iter().map(|r| r.n).collect::<Vec<Option<i64>>>(),
    ));
    cols.push(text("status", &|r| &r.status));
    cols.push(text("fidelity", &|r| &r.fidelity));
    cols.push(text("code_version", &|r| &r.code_version));
    DataFrame::new(rows.len(), cols).map_err(|e| frame_err("tidy frame", e))
}

/// Writes `df` as Parquet (zstd-compressed, statistics on).
pub fn write_parquet<W: Write>(df: &mut DataFrame, out: W) -> Result<()> {
    ParquetWriter::new(out)
        .with_compression(ParquetCompression::Zstd(None))
        .finish(df)
        .map(|_| ())
        .map_err(|e| frame_err("Parquet file", e))
}

/// Writes `df` as an Arrow IPC file (Feather v2, uncompressed: every reader
/// opens it without a codec), at the oldest compatibility level: text as
/// `large_utf8`, which every Arrow reader knows (polars' own `string_view`
/// needs pyarrow 16 or newer).
pub fn write_arrow<W: Write>(df: &mut DataFrame, out: W) -> Result<()> {
    IpcWriter::new(out)
        .with_compat_level(CompatLevel::oldest())
        .finish(df)
        .map_err(|e| frame_err("Arrow IPC file", e))
}

/// A text column of a collected frame, as owned strings (`None` for nulls).
pub(crate) fn strings(df: &DataFrame, name: &str) -> Result<Vec<Option<String>>> {
    let c = df.column(name).map_err(|e| frame_err(name, e))?;
    let s = c.str().map_err(|e| frame_err(name, e))?;
    Ok((0..s.len()).map(|i| s.get(i).map(str::to_string)).collect())
}

/// A float column of a collected frame.
pub(crate) fn floats(df: &DataFrame, name: &str) -> Result<Vec<Option<f64>>> {
    let c = df
        .column(name)
        .and_then(|c| c.cast(&DataType::Float64))
        .map_err(|e| frame_err(name, e))?;
    let s = c.f64().map_err(|e| frame_err(name, e))?;
    Ok((0..s.len()).map(|i| s.get(i)).collect())
}

/// An integer column of a collected frame.
pub(crate) fn ints(df: &DataFrame, name: &str) -> Result<Vec<Option<i64>>> {
    let c = df
        .column(name)
        .and_then(|c| c.cast(&DataType::Int64))
        .map_err(|e| frame_err(name, e))?;
    let s = c.i64().map_err(|e| frame_err(name, e))?;
    Ok((0..s.len()).map(|i| s.get(i)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(experiment: &str, point: &str, value: f64) -> TidyRow {
        TidyRow {
            experiment: experiment.into(),
            version: 1,
            series: "sim".into(),
            solver: "x.sim".into(),
            point: point.into(),
            metric: "L".into(),
            value,
            half_width: None,
            n: Some(3),
            status: "done".into(),
            fidelity: "quick".into(),
            code_version: "v0".into(),
        }
    }

    #[test]
    fn each_axis_gets_the_narrowest_type_that_holds_its_values() {
        let rows = [
            row(
                "a",
                r#"{"n":4,"rho":0.5,"routing":"dor","flag":true,"metric":1}"#,
                1.0,
            ),
            row(
                "a",
                r#"{"n":5,"rho":1,"routing":"duato","flag":false,"metric":2}"#,
                2.0,
            ),
            row("b", r#"{"k":"x"}"#, 3.0),
        ];
        let df = tidy_frame(&rows).unwrap();
        let t = |c: &str| df.column(c).unwrap().dtype().clone();
        assert_eq!(t("n"), DataType::Int64);
        assert_eq!(t("rho"), DataType::Float64, "an integer among floats");
        assert_eq!(t("routing"), DataType::String);
        assert_eq!(t("flag"), DataType::Boolean);
        assert_eq!(
            t("axis.metric"),
            DataType::Int64,
            "renamed like the CSV header"
        );
        assert_eq!(t("ci_n"), DataType::Int64);
        assert_eq!(df.column("n").unwrap().null_count(), 1, "b has no axis n");
        let names: Vec<&str> = df.get_column_names().iter().map(|s| s.as_str()).collect();
        assert_eq!(names.first(), Some(&"experiment"));
        assert_eq!(names.last(), Some(&"code_version"));
    }

    #[test]
    fn parquet_and_arrow_files_read_back_unchanged() {
        use polars_io::prelude::{IpcReader, ParquetReader, SerReader};
        let rows = [
            row("a", r#"{"n":4}"#, 0.1 + 0.2),
            row("a", r#"{"n":5}"#, 2.0),
        ];
        let mut df = tidy_frame(&rows).unwrap();
        let mut pq = Vec::new();
        write_parquet(&mut df, &mut pq).unwrap();
        let back = ParquetReader::new(std::io::Cursor::new(pq))
            .finish()
            .unwrap();
        assert!(back.equals_missing(&df));
        let mut ipc = Vec::new();
        write_arrow(&mut df, &mut ipc).unwrap();
        let back = IpcReader::new(std::io::Cursor::new(ipc)).finish().unwrap();
        assert!(back.equals_missing(&df));
        let v = back.column("value").unwrap().f64().unwrap().get(0);
        assert_eq!(v, Some(0.1 + 0.2), "the stored bits");
    }
}
