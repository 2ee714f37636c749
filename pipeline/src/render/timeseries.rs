//! Drawing the figures whose x-axis is not a sweep axis (the kinds are
//! declared in [`crate::manifest::figure`]).

use crate::manifest::Figure as FigureSpec;
use crate::manifest::FigureKind;
use crate::measure::ExperimentResults;
use reports::{Figure, FigureSeries, SeriesStyle, Value};
use solvers::{Kind, Registry};

fn style(r: &ExperimentResults, registry: &Registry, name: &str, dense: bool) -> SeriesStyle {
    match r.manifest.series(name) {
        None => SeriesStyle::Reference,
        Some(s) => match r.manifest.solver(&s.solver, registry).map(|x| x.kind()) {
            Some(Kind::Simulation) if dense => SeriesStyle::Trace,
            Some(Kind::Simulation) => SeriesStyle::Markers,
            _ => SeriesStyle::Line,
        },
    }
}

fn label(r: &ExperimentResults, name: &str) -> String {
    match r.manifest.series(name) {
        Some(s) => s.label.clone(),
        None => r
            .manifest
            .references
            .iter()
            .find(|x| x.name == name)
            .map_or(name.to_string(), |x| x.label.clone()),
    }
}

/// Renders a `timeseries` or `metrics` figure.
pub fn figure(r: &ExperimentResults, f: &FigureSpec, registry: &Registry) -> Figure {
    let mut series = Vec::new();
    for sname in &f.series {
        let base = label(r, sname);
        match f.kind {
            FigureKind::Metrics => {
                let x = f.x_values.clone();
                let points =
                    f.y.iter()
                        .zip(x)
                        .map(|(m, x)| {
                            let v = r.get(0, sname, m).map(|a| Value {
                                value: a.value,
                                half_width: a.half_width,
                                n: a.n,
                            });
                            (x, v)
                        })
                        .collect();
                series.push(FigureSeries {
                    name: sname.clone(),
                    metric: String::new(),
                    point_metrics: f.y.clone(),
                    colour: None,
                    variant: 0,
                    label: base,
                    style: style(r, registry, sname, false),
                    points,
                });
            }
            _ => {
                // Each quantity (a flow's throughput) keeps one colour across
                // series: the hardware marks of F2 in F2's colour. Lines of
                // the i-th series take the i-th dash, marks one shape per
                // quantity, so they stay apart in grayscale.
                let position = f.series.iter().position(|n| n == sname).unwrap_or(0);
                for (k, y) in f.y.iter().enumerate() {
                    let points = match r.manifest.series(sname) {
                        Some(_) => solver_points(r, f, sname, y),
                        None => reference_points(r, f, sname, y, (k, f.y.len())),
                    };
                    if points.is_empty() {
                        continue;
                    }
                    let style = style(r, registry, sname, true);
                    series.push(FigureSeries {
                        name: sname.clone(),
                        metric: y.clone(),
                        point_metrics: Vec::new(),
                        colour: Some(k),
                        variant: if style == SeriesStyle::Reference {
                            k
                        } else {
                            position
                        },
                        label: format!("{base}: {y}"),
                        style,
                        points,
                    });
                }
            }
        }
    }
    Figure {
        id: f.id.clone(),
        title: f.title.clone(),
        xlabel: f.xlabel.clone(),
        ylabel: f.ylabel.clone(),
        log_y: f.log_y,
        log_x: false,
        series,
    }
}

/// The series `y` of the first replication's task at point 0.
fn solver_points(
    r: &ExperimentResults,
    f: &FigureSpec,
    sname: &str,
    y: &str,
) -> Vec<(f64, Option<Value>)> {
    let Some(task) = r
        .keys
        .get(&(0, sname.to_string()))
        .and_then(|k| k.first())
        .and_then(|k| r.tasks.get(k))
    else {
        return Vec::new();
    };
    let per = f.x_per.as_ref().map_or(1.0, |p| {
        serde_json::from_str::<serde_json::Value>(&task.params)
            .ok()
            .and_then(|v| v.get(p).and_then(serde_json::Value::as_f64))
            .filter(|x| *x > 0.0)
            .unwrap_or(1.0)
    });
    task.series
        .iter()
        .filter(|p| p.name == y)
        .map(|p| {
            (
                p.x / per,
                Some(Value {
                    value: p.y,
                    half_width: None,
                    n: None,
                }),
            )
        })
        .collect()
}

/// Marks for reference values named `<y>_<j>` (the mean over interval `j`),
/// in the middle of the interval; the `k`-th of `n` quantities is shifted
/// by a tenth of an interval per position, so equal values of different
/// flows sit side by side instead of on top of each other.
fn reference_points(
    r: &ExperimentResults,
    f: &FigureSpec,
    rname: &str,
    y: &str,
    (k, n): (usize, usize),
) -> Vec<(f64, Option<Value>)> {
    if f.x_per.is_none() {
        return Vec::new();
    }
    let Some(rf) = r.manifest.references.iter().find(|x| x.name == rname) else {
        return Vec::new();
    };
    let prefix = format!("{y}_");
    rf.values
        .iter()
        .filter_map(|(m, v)| {
            let j: usize = m.strip_prefix(&prefix)?.parse().ok()?;
            Some((
                j as f64 + 0.5 + 0.1 * (k as f64 - (n as f64 - 1.0) / 2.0),
                Some(Value {
                    value: *v,
                    half_width: None,
                    n: None,
                }),
            ))
        })
        .collect()
}

/// A `reference_data` entry in a sweep figure: its values drawn as marks at
/// every sweep point (they hold at every point).
pub fn reference_sweep_series(
    r: &ExperimentResults,
    f: &FigureSpec,
    rname: &str,
) -> Vec<FigureSeries> {
    f.y.iter()
        .map(|metric| FigureSeries {
            name: rname.to_string(),
            metric: metric.clone(),
            point_metrics: Vec::new(),
            colour: None,
            variant: 0,
            label: if f.y.len() > 1 {
                format!("{}: {metric}", label(r, rname))
            } else {
                label(r, rname)
            },
            style: SeriesStyle::Reference,
            points: r
                .manifest
                .points
                .iter()
                .filter_map(|p| {
                    let x = r.x_of(p.index, &f.x)?;
                    let v = r.get(p.index, rname, metric).map(|a| Value {
                        value: a.value,
                        half_width: a.half_width,
                        n: a.n,
                    });
                    Some((x, v))
                })
                .collect(),
        })
        .filter(|s| s.points.iter().any(|p| p.1.is_some()))
        .collect()
}
