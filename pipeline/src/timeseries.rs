//! Figures whose x-axis is not a sweep axis (issue 9):
//!
//! - `kind: timeseries`: `y` names series of the solver outcome (such as
//!   `thr_F1`, throughput of flow 1 against time); one curve per figure series
//!   per `y`, read from the task of the manifest's single sweep point. With
//!   `x_per: interval` the x values are divided by the task's `interval`
//!   parameter, so a time-compressed quick run and a full run share the axis.
//!   A `reference_data` entry in the figure's series is drawn as marks: its
//!   value `<y>_<j>` at the centre of the measured part of interval j
//!   (x = j + 0.55, the window j + 0.1 .. j + 1 of the solvers' per-interval
//!   metrics); this needs `x_per`.
//! - `kind: metrics`: one point per metric of `y`, at the matching position
//!   of `x_values` (a fairness bar chart: share_F2..share_F5 against 2..5).

use crate::manifest::Figure as FigureSpec;
use crate::results::ExperimentResults;
use reports::{Figure, FigureSeries, SeriesStyle, Value};
use serde::Deserialize;
use solvers::{Kind, Registry};

/// What a figure's x-axis is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FigureKind {
    /// A sweep axis (the default).
    #[default]
    Sweep,
    /// The x of a solver's time series.
    Timeseries,
    /// Metrics placed at `x_values`.
    Metrics,
}

/// Checks the keys that belong to a figure kind; returns (key suffix, message) on error.
pub fn validate(
    kind: FigureKind,
    y: &[String],
    x_per: &Option<String>,
    x_values: &Option<Vec<f64>>,
    points: usize,
) -> Result<(), (&'static str, String)> {
    match kind {
        FigureKind::Sweep => {
            if x_per.is_some() {
                return Err((
                    "x_per",
                    "only a `kind: timeseries` figure takes `x_per`".into(),
                ));
            }
            if x_values.is_some() {
                return Err((
                    "x_values",
                    "only a `kind: metrics` figure takes `x_values`".into(),
                ));
            }
        }
        FigureKind::Timeseries | FigureKind::Metrics => {
            if points != 1 {
                return Err((
                    "kind",
                    format!(
                        "a `{kind:?}` figure reads one sweep point; this manifest has {points}"
                    )
                    .to_lowercase(),
                ));
            }
            if kind == FigureKind::Timeseries && x_values.is_some() {
                return Err((
                    "x_values",
                    "only a `kind: metrics` figure takes `x_values`".into(),
                ));
            }
            if kind == FigureKind::Metrics {
                if x_per.is_some() {
                    return Err((
                        "x_per",
                        "only a `kind: timeseries` figure takes `x_per`".into(),
                    ));
                }
                match x_values {
                    // Reported at `kind` (a missing key has no line of its own).
                    None => {
                        return Err(("kind", "a `kind: metrics` figure needs `x_values`".into()))
                    }
                    Some(v) if v.len() != y.len() => {
                        return Err((
                            "x_values",
                            format!("has {} values but `y` names {} metrics", v.len(), y.len()),
                        ))
                    }
                    Some(v) if v.iter().any(|x| !x.is_finite()) => {
                        return Err(("x_values", "must be finite numbers".into()))
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(())
}

fn style(r: &ExperimentResults, registry: &Registry, name: &str, dense: bool) -> SeriesStyle {
    match r.manifest.series(name) {
        None => SeriesStyle::Reference,
        Some(s) => match registry.get(&s.solver).map(|x| x.kind()) {
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
                            });
                            (x, v)
                        })
                        .collect();
                series.push(FigureSeries {
                    label: base,
                    style: style(r, registry, sname, false),
                    points,
                });
            }
            _ => {
                for y in &f.y {
                    let points = match r.manifest.series(sname) {
                        Some(_) => solver_points(r, f, sname, y),
                        None => reference_points(r, f, sname, y),
                    };
                    if points.is_empty() {
                        continue;
                    }
                    series.push(FigureSeries {
                        label: format!("{base}: {y}"),
                        style: style(r, registry, sname, true),
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
                }),
            )
        })
        .collect()
}

/// Marks for reference values named `<y>_<j>`.
fn reference_points(
    r: &ExperimentResults,
    f: &FigureSpec,
    rname: &str,
    y: &str,
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
                j as f64 + 0.55,
                Some(Value {
                    value: *v,
                    half_width: None,
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
                    });
                    Some((x, v))
                })
                .collect(),
        })
        .filter(|s| s.points.iter().any(|p| p.1.is_some()))
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::manifest::{parse, ManifestError};
    use solvers::Registry;
    use std::path::Path;

    fn load(figure: &str) -> Result<crate::manifest::Manifest, ManifestError> {
        let text = format!(
            "id: t\ntitle: t\nversion: 1\nparams: {{ scenario: 2 }}\nsweep: {{ interval: [1.0] }}\nseries:\n  fluid: {{ solver: ibcc.fluid }}\nreference_data:\n  hw:\n    source: \"paper §6\"\n    values: {{ thr_F1_2: 11.4 }}\nfigures:\n{figure}"
        );
        parse(Path::new("t.yaml"), &text, &Registry::with_all())
    }

    #[test]
    fn timeseries_and_metrics_figures_parse() {
        let m = load("  - { id: a, kind: timeseries, x: time, x_per: interval, y: [thr_F1], series: [fluid, hw] }\n  - { id: b, kind: metrics, x: flow, y: [share_F1, share_F2], x_values: [1, 2], series: [fluid, hw] }\n").unwrap();
        assert_eq!(m.figures[0].kind, super::FigureKind::Timeseries);
        assert_eq!(m.figures[1].x_values, vec![1.0, 2.0]);
        assert_eq!(m.references[0].values["thr_F1_2"], 11.4);
    }

    #[test]
    fn figure_kind_keys_are_checked_with_file_line_and_key() {
        let e = load("  - { id: a, x: time, y: [thr_F1], series: [fluid] }\n").unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("figures.0.x", Some(13)));
        let e = load("  - { id: b, kind: metrics, x: flow, y: [share_F1], series: [fluid] }\n")
            .unwrap_err();
        assert_eq!((e.key.as_str(), e.line), ("figures.0.kind", Some(13)));
        assert!(e.message.contains("x_values"));
        let e = load("  - { id: c, x: interval, x_per: interval, y: [a], series: [fluid] }\n")
            .unwrap_err();
        assert_eq!(e.key, "figures.0.x_per");
        let e = load("  - { id: d, kind: bogus, x: t, y: [a], series: [fluid] }\n").unwrap_err();
        assert!(e.to_string().contains("t.yaml:13"), "{e}");
    }
}
