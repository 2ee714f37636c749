//! Two versions (or variants) of an experiment side by side (`repro compare`):
//! the join of their values as a polars frame, the per-point difference table
//! and the figures with both versions overlaid.

use crate::format::format_em;
use crate::frame::{floats, frame_err, ints, strings};
use crate::{Figure, Result, Table, Value};
use polars::prelude::*;

/// A value of one version at one (point, series, metric).
#[derive(Debug, Clone, PartialEq)]
pub struct VersionValue {
    /// Canonical JSON object of the sweep-axis values.
    pub point: String,
    /// Position of the point in sweep order (of A; B's own points after A's).
    pub order: u64,
    pub series: String,
    pub metric: String,
    pub value: f64,
    pub half_width: Option<f64>,
    pub n: Option<i64>,
}

/// One row of the comparison: the same (point, series, metric) in A and B.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionDiff {
    pub point: String,
    pub series: String,
    pub metric: String,
    pub a: Option<Value>,
    pub a_n: Option<i64>,
    pub b: Option<Value>,
    pub b_n: Option<i64>,
    /// B − A.
    pub diff: Option<f64>,
    /// The error measure between the versions, A as the reference:
    /// `|B − A| / |A|` ([`verdicts::em`]); `None` when undefined.
    pub em: Option<f64>,
}

fn side(values: &[VersionValue], suffix: &str) -> Result<LazyFrame> {
    let name = |n: &str| PlSmallStr::from(format!("{n}{suffix}"));
    let cols = vec![
        Column::new(
            "point".into(),
            values.iter().map(|v| v.point.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "series".into(),
            values.iter().map(|v| v.series.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "metric".into(),
            values.iter().map(|v| v.metric.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            name("order"),
            values.iter().map(|v| v.order).collect::<Vec<_>>(),
        ),
        Column::new(
            name("value"),
            values.iter().map(|v| v.value).collect::<Vec<_>>(),
        ),
        Column::new(
            name("half_width"),
            values.iter().map(|v| v.half_width).collect::<Vec<_>>(),
        ),
        Column::new(name("ci_n"), values.iter().map(|v| v.n).collect::<Vec<_>>()),
    ];
    DataFrame::new(values.len(), cols)
        .map(IntoLazy::lazy)
        .map_err(|e| frame_err("compared version", e))
}

/// The comparison frame: a full join of A and B on (point, series, metric),
/// columns `point, series, metric, value_a, half_width_a, ci_n_a, value_b,
/// half_width_b, ci_n_b, diff, em`, sorted by series, metric and sweep order.
/// Only the `metrics` given (all when empty).
pub fn compare_frame(
    a: &[VersionValue],
    b: &[VersionValue],
    metrics: &[String],
) -> Result<DataFrame> {
    let keys = [col("point"), col("series"), col("metric")];
    let args = JoinArgs::new(JoinType::Full).with_coalesce(JoinCoalesce::CoalesceColumns);
    let diff = col("value_b") - col("value_a");
    // EM with A as the reference, as `verdicts::em`: undefined when A is 0 and B is not.
    let em = when(col("value_a").neq(lit(0.0)))
        .then(diff.clone().abs() / col("value_a").abs())
        .when(diff.clone().eq(lit(0.0)))
        .then(lit(0.0))
        .otherwise(lit(NULL).cast(DataType::Float64));
    let mut joined = side(a, "_a")?.join(side(b, "_b")?, keys.clone(), keys, args);
    if !metrics.is_empty() {
        let wanted = metrics
            .iter()
            .map(|m| col("metric").eq(lit(m.as_str())))
            .reduce(|x, y| x.or(y))
            .expect("not empty");
        joined = joined.filter(wanted);
    }
    joined
        .with_columns([
            col("order_a").fill_null(col("order_b")).alias("order"),
            diff.alias("diff"),
            em.alias("em"),
        ])
        .sort_by_exprs(
            [col("series"), col("metric"), col("order")],
            SortMultipleOptions::default(),
        )
        .select([
            col("point"),
            col("series"),
            col("metric"),
            col("value_a"),
            col("half_width_a"),
            col("ci_n_a"),
            col("value_b"),
            col("half_width_b"),
            col("ci_n_b"),
            col("diff"),
            col("em"),
        ])
        .collect()
        .map_err(|e| frame_err("comparison", e))
}

/// The rows of a [`compare_frame`].
pub fn version_diffs(df: &DataFrame) -> Result<Vec<VersionDiff>> {
    let (point, series, metric) = (
        strings(df, "point")?,
        strings(df, "series")?,
        strings(df, "metric")?,
    );
    let (va, ha, na) = (
        floats(df, "value_a")?,
        floats(df, "half_width_a")?,
        ints(df, "ci_n_a")?,
    );
    let (vb, hb, nb) = (
        floats(df, "value_b")?,
        floats(df, "half_width_b")?,
        ints(df, "ci_n_b")?,
    );
    let (diff, em) = (floats(df, "diff")?, floats(df, "em")?);
    let value = |v: Option<f64>, h: Option<f64>, n: Option<i64>| {
        v.map(|value| Value {
            value,
            half_width: h,
            n,
        })
    };
    Ok((0..df.height())
        .map(|i| VersionDiff {
            point: point[i].clone().unwrap_or_default(),
            series: series[i].clone().unwrap_or_default(),
            metric: metric[i].clone().unwrap_or_default(),
            a: value(va[i], ha[i], na[i]),
            a_n: na[i],
            b: value(vb[i], hb[i], nb[i]),
            b_n: nb[i],
            diff: diff[i],
            em: em[i],
        })
        .collect())
}

fn cell(v: Option<Value>) -> String {
    match v {
        Some(Value {
            value,
            half_width: Some(h),
            ..
        }) if h.is_finite() => format!("{value} ± {h}"),
        Some(v) => v.value.to_string(),
        None => "—".into(),
    }
}

/// The point's axis values as "n=4, m=4".
fn point_label(point: &str) -> String {
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(point) {
        Ok(m) => m
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        Err(_) => point.to_string(),
    }
}

/// The per-point difference table: point, series, metric, A, B, B − A and the
/// EM between the versions; `differences` (what differs between the versions:
/// parameters, solver versions, code version) and the mean/max EM are its notes.
pub fn compare_table(
    id: &str,
    (a, b): (&str, &str),
    diffs: &[VersionDiff],
    differences: &[String],
) -> Table {
    let header = [
        "point".to_string(),
        "series".to_string(),
        "metric".to_string(),
        format!("A: {a} (±95% CI)"),
        format!("B: {b} (±95% CI)"),
        "B − A".to_string(),
        "EM |B − A| / |A|".to_string(),
    ]
    .to_vec();
    let rows = diffs
        .iter()
        .map(|d| {
            vec![
                point_label(&d.point),
                d.series.clone(),
                d.metric.clone(),
                cell(d.a),
                cell(d.b),
                d.diff.map_or("—".into(), |x| x.to_string()),
                d.em.map_or("—".into(), full_percent),
            ]
        })
        .collect();
    let (mean, max) = summarise(&diffs.iter().map(|d| d.em).collect::<Vec<_>>());
    let mut notes = differences.to_vec();
    notes.push(format!(
        "{} points compared; EM between the versions: mean {}, max {}; {} only in A, {} only in B.",
        diffs
            .iter()
            .filter(|d| d.a.is_some() && d.b.is_some())
            .count(),
        format_em(mean),
        format_em(max),
        diffs.iter().filter(|d| d.b.is_none()).count(),
        diffs.iter().filter(|d| d.a.is_none()).count(),
    ));
    let t = Table {
        id: id.to_string(),
        title: format!("{a} vs {b}: per-point differences"),
        header,
        rows,
        notes,
    };
    t
}

/// A fraction as a percentage cell at full precision ("0.38612%"); tables are
/// displayed rounded ([`crate::unify_number_columns`]) and exported exact.
pub fn full_percent(fraction: f64) -> String {
    format!("{}%", fraction * 100.0)
}

/// `a` and `b` (the same figure drawn from two versions) in one figure: each
/// series keeps one colour, A's drawn solid (or as its first marker shape), B's
/// dashed (or as the second shape); labels end in the version.
pub fn overlay_figure(a: &Figure, b: &Figure, (label_a, label_b): (&str, &str)) -> Figure {
    let mut labels: Vec<&str> = a.series.iter().map(|s| s.label.as_str()).collect();
    for s in &b.series {
        if !labels.contains(&s.label.as_str()) {
            labels.push(&s.label);
        }
    }
    let colour_of = |label: &str| labels.iter().position(|l| *l == label);
    let mut series = Vec::new();
    for (fig, version, variant) in [(a, label_a, 0), (b, label_b, 1)] {
        for s in &fig.series {
            let mut s = s.clone();
            s.colour = colour_of(&s.label);
            s.variant = variant;
            s.label = format!("{} [{version}]", s.label);
            series.push(s);
        }
    }
    Figure {
        id: a.id.clone(),
        title: format!("{}: {label_a} (solid) vs {label_b} (dashed)", a.title),
        xlabel: a.xlabel.clone(),
        ylabel: a.ylabel.clone(),
        log_y: a.log_y,
        log_x: a.log_x,
        series,
    }
}

/// Mean and max over the defined EMs of a figure.
fn summarise(ems: &[Option<f64>]) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = ems.iter().flatten().copied().collect();
    if v.is_empty() {
        return (None, None);
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let max = v.iter().copied().fold(f64::MIN, f64::max);
    (Some(mean), Some(max))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(point: &str, order: u64, metric: &str, value: f64) -> VersionValue {
        VersionValue {
            point: point.to_string(),
            order,
            series: "sim".to_string(),
            metric: metric.to_string(),
            value,
            half_width: None,
            n: None,
        }
    }

    #[test]
    fn join_keeps_points_of_either_side_and_measures_the_difference() {
        let a = [
            v("{\"x\":1}", 0, "L", 2.0),
            v("{\"x\":2}", 1, "L", 0.0),
            v("{\"x\":3}", 2, "L", 1.0),
        ];
        let b = [
            v("{\"x\":2}", 1, "L", 0.0),
            v("{\"x\":1}", 0, "L", 2.5),
            v("{\"x\":4}", 3, "L", 7.0),
        ];
        let d = version_diffs(&compare_frame(&a, &b, &[]).unwrap()).unwrap();
        let points: Vec<&str> = d.iter().map(|r| r.point.as_str()).collect();
        assert_eq!(points, ["{\"x\":1}", "{\"x\":2}", "{\"x\":3}", "{\"x\":4}"]);
        assert_eq!(d[0].diff, Some(0.5));
        assert_eq!(d[0].em, Some(0.25));
        assert_eq!(d[1].em, Some(0.0), "0 vs 0");
        assert_eq!((d[2].b, d[2].em), (None, None), "only in A");
        assert_eq!((d[3].a, d[3].em), (None, None), "only in B");
        let only_m = compare_frame(&a, &b, &["M".to_string()]).unwrap();
        assert_eq!(only_m.height(), 0);
    }
}
