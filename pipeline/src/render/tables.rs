//! Tables: error measures (with their summary) and values per point.

use crate::measure::{ExperimentResults, PointStatus};
use reports::format_em as fmt_pct;
use reports::{EmSummaryLine, LongCell, Table};
use store::ErrorMeasureRow;

/// A value cell at full precision (`v` or `v ± h`): the CSV keeps it exact,
/// the Markdown and HTML show it rounded (`reports::unify_number_columns`).
fn fmt_val(v: Option<f64>, hw: Option<f64>) -> String {
    match (v, hw) {
        (Some(v), Some(h)) if h.is_finite() => format!("{v} ± {h}"),
        (Some(v), _) => v.to_string(),
        (None, _) => "—".into(),
    }
}

/// A fraction as a full-precision percentage cell, or "—".
fn pct(f: Option<f64>) -> String {
    f.map_or("—".into(), reports::full_percent)
}

/// The point's axis values, one cell per axis of `axes` (the JSON's own
/// keys when it has others).
fn point_cells(point_json: &str, axes: &[String]) -> Vec<String> {
    match serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(point_json) {
        Ok(m) if axes.iter().all(|a| m.contains_key(a)) => {
            axes.iter().map(|a| m[a].to_string()).collect()
        }
        _ => vec![point_label(point_json)],
    }
}

/// The point's axis values as "n=4, m=4".
fn point_label(point_json: &str) -> String {
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(point_json)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|_| point_json.to_string())
}

/// The tables of an experiment: error-measure tables (each point, then the
/// summary lines measure made) and value tables (per point, per series and
/// metric).
pub fn tables(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    summary: &[EmSummaryLine],
) -> anyhow::Result<Vec<Table>> {
    let m = &r.manifest;
    let mut out = Vec::new();
    for t in &m.tables {
        let title = t.title.clone().unwrap_or_else(|| m.title.clone());
        match t.kind {
            crate::manifest::TableKind::ErrorMeasures => {
                // One column per sweep axis (a point without axes: one "point" column).
                let axes: Vec<String> = if m.axes.is_empty() {
                    vec!["point".to_string()]
                } else {
                    m.axes.clone()
                };
                let mut header = axes.clone();
                header.extend(
                    [
                        "metric",
                        "reference",
                        "reference value (±95% CI)",
                        "candidate",
                        "candidate value",
                        "EM",
                        "tolerance",
                        "verdict",
                    ]
                    .map(String::from),
                );
                let rows = ems
                    .iter()
                    .map(|e| {
                        let mut row = if m.axes.is_empty() {
                            vec![point_label(&e.point)]
                        } else {
                            point_cells(&e.point, &m.axes)
                        };
                        row.resize(axes.len(), "—".into());
                        row.extend([
                            e.metric.clone(),
                            e.reference.clone(),
                            fmt_val(e.reference_value, e.reference_half_width),
                            e.candidate.clone(),
                            fmt_val(e.candidate_value, None),
                            pct(e.em),
                            pct(e.tolerance),
                            e.verdict.to_string(),
                        ]);
                        row
                    })
                    .collect();
                let notes = summary
                    .iter()
                    .map(|l| {
                        format!(
                            "{} ({} vs {}): mean EM {}, max EM {}; {} pass, {} fail, {} inconclusive",
                            l.metric,
                            l.candidate,
                            l.reference,
                            fmt_pct(l.mean_em),
                            fmt_pct(l.max_em),
                            l.passed,
                            l.failed,
                            l.inconclusive
                        )
                    })
                    .collect();
                out.push(Table {
                    id: t.id.clone(),
                    title,
                    header,
                    rows,
                    notes,
                });
            }
            crate::manifest::TableKind::Values => {
                let series: Vec<String> = if t.series.is_empty() {
                    m.series.iter().map(|s| s.name.clone()).collect()
                } else {
                    t.series.clone()
                };
                let metrics: Vec<String> = if t.metrics.is_empty() {
                    let mut v: Vec<String> = r.values.keys().map(|(_, _, k)| k.clone()).collect();
                    v.sort();
                    v.dedup();
                    v
                } else {
                    t.metrics.clone()
                };
                // A series with a precision target also shows its replications per point.
                let adaptive = |s: &str| m.series(s).is_some_and(|x| x.precision.is_some());
                let mut header: Vec<String> = m.axes.clone();
                for s in &series {
                    for k in &metrics {
                        header.push(format!("{s}: {k}"));
                    }
                    if adaptive(s) {
                        header.push(format!("{s}: replications"));
                    }
                }
                let rows = value_rows(r, &series, &metrics, &adaptive)?;
                // Where a series has no value, say why, point by point.
                let mut notes = Vec::new();
                for p in &m.points {
                    for s in &series {
                        let key = (p.index, s.clone());
                        let st = r.status.get(&key).map_or(PointStatus::Missing, |st| *st);
                        if st != PointStatus::Done {
                            let why = r
                                .reasons
                                .get(&key)
                                .map_or(String::new(), |w| format!(": {w}"));
                            notes.push(format!("{} — `{s}` {st}{why}", point_label(&p.json())));
                        }
                    }
                }
                out.push(Table {
                    id: t.id.clone(),
                    title,
                    header,
                    rows,
                    notes,
                });
            }
        }
    }
    Ok(out)
}

/// The rows of a value table: the axis values of each point, then per series
/// one cell per metric (the value ± CI, or the status where the series has
/// none) and, for a series with a precision target, its replications;
/// pivoted from long cells by a polars group-by in `reports`.
fn value_rows(
    r: &ExperimentResults,
    series: &[String],
    metrics: &[String],
    adaptive: &dyn Fn(&str) -> bool,
) -> anyhow::Result<Vec<Vec<String>>> {
    let m = &r.manifest;
    let mut cells = Vec::new();
    let mut columns = 0;
    for p in &m.points {
        let mut column = 0u64;
        let mut push = |cell: String| {
            cells.push(LongCell {
                row: p.index as u64,
                column,
                cell,
            });
            column += 1;
        };
        for a in &m.axes {
            push(p.values.get(a).map_or("—".into(), |v| v.to_string()));
        }
        for s in series {
            let st = r
                .status
                .get(&(p.index, s.clone()))
                .map_or(PointStatus::Missing, |st| *st);
            for k in metrics {
                push(match st {
                    PointStatus::Done => {
                        let a = r.get(p.index, s, k);
                        fmt_val(a.map(|a| a.value), a.and_then(|a| a.half_width))
                    }
                    // A metric a saturated point still reports (see measure).
                    PointStatus::Saturated if r.get(p.index, s, k).is_some() => {
                        let a = r.get(p.index, s, k);
                        fmt_val(a.map(|a| a.value), a.and_then(|a| a.half_width))
                    }
                    other => other.to_string(),
                });
            }
            if adaptive(s) {
                push(r.replications(p.index, s).to_string());
            }
        }
        columns = column as usize;
    }
    Ok(reports::pivot_cells(&cells, columns)?)
}
