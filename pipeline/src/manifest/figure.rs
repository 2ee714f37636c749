//! Figure kinds: what a figure's x-axis is, and the keys each kind takes.
//! How each kind is drawn is `render::timeseries` (a new kind adds a variant
//! here, its key checks in [`validate`], and its drawing there).
//!
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

use serde::Deserialize;

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
