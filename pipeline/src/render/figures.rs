//! Sweep figures: one curve per series and metric against a sweep axis, with
//! colours and dashes a reader can trust.

use crate::measure::ExperimentResults;
use crate::render::timeseries;
use reports::{Figure, FigureSeries, SeriesStyle, Value};
use solvers::{Kind, Registry};

pub fn figures(r: &ExperimentResults, registry: &Registry) -> Vec<Figure> {
    let m = &r.manifest;
    m.figures
        .iter()
        .map(|f| {
            if f.kind != crate::manifest::FigureKind::Sweep {
                return timeseries::figure(r, f, registry);
            }
            let mut series = Vec::new();
            for sname in &f.series {
                let Some(s) = m.series(sname) else {
                    series.extend(timeseries::reference_sweep_series(r, f, sname));
                    continue;
                };
                let style = match m.solver(&s.solver, registry).map(|x| x.kind()) {
                    Some(Kind::Simulation) => SeriesStyle::Markers,
                    _ => SeriesStyle::Line,
                };
                // Replications behind each point (issue: precision targets),
                // in the legend when a point has more than one.
                let reps = if style == SeriesStyle::Markers {
                    replication_note(m.points.iter().map(|p| r.replications(p.index, sname)))
                } else {
                    String::new()
                };
                for metric in &f.y {
                    let label = if f.y.len() > 1 {
                        format!("{}: {metric}{reps}", s.label)
                    } else {
                        format!("{}{reps}", s.label)
                    };
                    let points = m
                        .points
                        .iter()
                        .filter_map(|p| {
                            // x: the sweep axis, or a metric of the series at that point.
                            let x = r
                                .x_of(p.index, &f.x)
                                .or_else(|| r.get(p.index, sname, &f.x).map(|a| a.value))?;
                            let v = r.get(p.index, sname, metric).map(|a| Value {
                                value: a.value,
                                half_width: a.half_width,
                                n: a.n,
                            });
                            Some((x, v))
                        })
                        .collect();
                    series.push(FigureSeries {
                        name: sname.clone(),
                        metric: metric.clone(),
                        point_metrics: Vec::new(),
                        label,
                        style,
                        points,
                        colour: None,
                        variant: 0,
                    });
                }
            }
            assign_looks(m, f, &mut series);
            Figure {
                id: f.id.clone(),
                title: f.title.clone(),
                xlabel: f.xlabel.clone(),
                ylabel: f.ylabel.clone(),
                log_y: f.log_y,
                log_x: false,
                series,
            }
        })
        .collect()
}

/// The legend's note on the replications behind a simulation series' points
/// (points without results skipped): "" when every point has one, else
/// " (3 replications)" or " (3–10 replications per point)".
fn replication_note(counts: impl Iterator<Item = u32>) -> String {
    let (lo, hi) = counts
        .filter(|&n| n > 0)
        .fold((u32::MAX, 0), |(lo, hi), n| (lo.min(n), hi.max(n)));
    if hi <= 1 {
        String::new()
    } else if lo == hi {
        format!(" ({hi} replications)")
    } else {
        format!(" ({lo}–{hi} replications per point)")
    }
}

/// Colours and dashes/markers of a figure's series, so that a reader can
/// trust them. A *configuration* is a model curve together with the
/// simulations (and printed numbers) compared with it in this figure:
///
/// - every model (line) is its own configuration; a simulation or reference
///   series joins the first model of the figure that a `compare` entry on
///   one of the figure's metrics pairs it with (else a series so paired that
///   already has one, else it is a configuration of its own); so a model and
///   its simulation share one colour, and nine model variants checked
///   against one simulation get nine colours;
/// - configurations differ in colour *and* in dash (lines) or marker shape
///   (simulations), so they survive grayscale print; when their anchor
///   series are named `A_B` and form a full grid (`s1_mmpp` .. `s4_poisson`,
///   `t2_mu12` .. `t12_mu32`), the colour follows `A` and the dash or shape `B`;
/// - each metric of a multi-metric figure is a configuration of its own.
fn assign_looks(
    m: &crate::manifest::Manifest,
    f: &crate::manifest::Figure,
    series: &mut [FigureSeries],
) {
    let names: Vec<&str> = f.series.iter().map(String::as_str).collect();
    let is_model = |n: &str| {
        series
            .iter()
            .any(|s| s.name == n && s.style == SeriesStyle::Line)
    };
    let partners = |n: &str| -> Vec<&str> {
        let mut v: Vec<&str> = m
            .compare
            .iter()
            .filter(|c| f.y.contains(&c.metric))
            .filter_map(|c| {
                if c.reference == n {
                    Some(c.candidate.as_str())
                } else if c.candidate == n {
                    Some(c.reference.as_str())
                } else {
                    None
                }
            })
            .filter(|p| names.contains(p))
            .collect();
        // In the figure's order.
        v.sort_by_key(|p| names.iter().position(|n| n == p));
        v
    };
    // Anchor (a series name) of each series name's configuration.
    let mut anchor: Vec<Option<&str>> = names.iter().map(|n| is_model(n).then_some(*n)).collect();
    for (i, n) in names.iter().enumerate() {
        if anchor[i].is_none() {
            anchor[i] = partners(n).into_iter().find(|p| is_model(p));
        }
    }
    for (i, n) in names.iter().enumerate() {
        if anchor[i].is_none() {
            anchor[i] = partners(n).into_iter().find_map(|p| {
                let j = names.iter().position(|x| *x == p)?;
                anchor[j]
            });
        }
    }
    let anchor_of = |name: &str| -> String {
        names
            .iter()
            .position(|n| *n == name)
            .and_then(|i| anchor[i])
            .unwrap_or(name)
            .to_string()
    };
    // Configurations in order of first appearance: (anchor, metric).
    let per_metric = f.y.len() > 1;
    let mut configs: Vec<(String, String)> = Vec::new();
    let key = |s: &FigureSeries| {
        let metric = if per_metric {
            s.metric.clone()
        } else {
            String::new()
        };
        (anchor_of(&s.name), metric)
    };
    for s in series.iter() {
        let k = key(s);
        if !configs.contains(&k) {
            configs.push(k);
        }
    }
    // A full A_B grid of anchors (one metric): colour by A, variant by B.
    let split: Vec<Option<(&str, &str)>> =
        configs.iter().map(|(a, _)| a.rsplit_once('_')).collect();
    let distinct = |k: usize| {
        let mut seen: Vec<&str> = Vec::new();
        for p in split.iter().flatten() {
            let x = if k == 0 { p.0 } else { p.1 };
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
        seen
    };
    let (fa, fb) = (distinct(0), distinct(1));
    let grid = !per_metric
        && configs.len() > 4
        && split.iter().all(Option::is_some)
        && fa.len() * fb.len() == configs.len()
        && fa.len() <= reports::PALETTE_LEN
        && fb.len() <= reports::DASH_COUNT;
    let look = |c: usize| -> (usize, usize) {
        match split[c] {
            Some((a, b)) if grid => (
                fa.iter().position(|x| *x == a).unwrap_or(0),
                fb.iter().position(|x| *x == b).unwrap_or(0),
            ),
            _ => (c % reports::PALETTE_LEN, c),
        }
    };
    // Several simulations of one configuration differ in shape.
    let mut markers_seen: Vec<usize> = vec![0; configs.len()];
    for s in series.iter_mut() {
        let k = key(s);
        let c = configs.iter().position(|x| *x == k).unwrap_or(0);
        let (colour, variant) = look(c);
        s.colour = Some(colour);
        s.variant = if s.style == SeriesStyle::Line {
            variant
        } else {
            markers_seen[c] += 1;
            variant + markers_seen[c] - 1
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn series(name: &str, style: SeriesStyle) -> FigureSeries {
        FigureSeries {
            name: name.to_string(),
            metric: "L1".to_string(),
            point_metrics: Vec::new(),
            label: String::new(),
            style,
            points: vec![],
            colour: None,
            variant: 0,
        }
    }

    fn manifest(text: &str) -> crate::manifest::Manifest {
        crate::manifest::parse(Path::new("t.yaml"), text, &Registry::with_all()).unwrap()
    }

    #[test]
    fn a_model_and_its_simulation_share_a_colour_and_lines_differ_in_dash() {
        let m = manifest(
            r#"
id: t
title: t
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }
sweep: { n: [4, 8] }
series:
  other: { solver: credit.ctmc, params: { mu2: 4.0 } }
  model: { solver: credit.ctmc }
  sim: { solver: credit.sim, params: { batch_len: 2000 } }
compare:
  - { metric: L1, reference: sim, candidate: model, tolerance: 0.5 }
figures:
  - { id: t-L1, x: n, y: L1, series: [other, model, sim] }
"#,
        );
        let mut s = vec![
            series("other", SeriesStyle::Line),
            series("model", SeriesStyle::Line),
            series("sim", SeriesStyle::Markers),
        ];
        assign_looks(&m, &m.figures[0], &mut s);
        assert_eq!(s[1].colour, s[2].colour, "model and its simulation");
        assert_ne!(s[0].colour, s[1].colour);
        assert_ne!(s[0].variant, s[1].variant, "two lines, one dash");
    }

    #[test]
    fn model_variants_checked_against_one_simulation_get_their_own_colours() {
        let variants = ["m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"];
        let series_yaml: String = variants
            .iter()
            .map(|n| format!("  {n}: {{ solver: credit.ctmc }}\n"))
            .collect();
        let compare: String = variants
            .iter()
            .map(|n| format!("  - {{ metric: L1, reference: sim, candidate: {n} }}\n"))
            .collect();
        let m = manifest(&format!(
            "id: t\ntitle: g\nversion: 1\nparams: {{ lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }}\nsweep: {{ n: [4, 8] }}\nseries:\n{series_yaml}  sim: {{ solver: credit.sim }}\ncompare:\n{compare}figures:\n  - {{ id: t-L1, x: n, y: L1, series: [{}, sim] }}\n",
            variants.join(", ")
        ));
        let mut s: Vec<FigureSeries> = variants
            .iter()
            .map(|n| series(n, SeriesStyle::Line))
            .collect();
        s.push(series("sim", SeriesStyle::Markers));
        assign_looks(&m, &m.figures[0], &mut s);
        let looks: std::collections::BTreeSet<(Option<usize>, usize)> = s[..9]
            .iter()
            .map(|x| (x.colour, x.variant % reports::DASH_COUNT))
            .collect();
        assert_eq!(looks.len(), 9, "two variants look alike: {looks:?}");
        let colours: std::collections::BTreeSet<Option<usize>> =
            s[..9].iter().map(|x| x.colour).collect();
        assert_eq!(colours.len(), reports::PALETTE_LEN.min(9));
        assert_eq!(
            s[9].colour, s[0].colour,
            "the simulation takes the first model's colour"
        );
    }

    #[test]
    fn simulations_of_a_grid_take_their_models_colour_and_shape() {
        let m = manifest(
            r#"
id: t
title: t
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }
sweep: { n: [4, 8] }
series:
  s1_a: { solver: credit.ctmc }
  s1_b: { solver: credit.ctmc, params: { mu2: 4.0 } }
  s2_a: { solver: credit.ctmc, params: { mu1: 7.0 } }
  s2_b: { solver: credit.ctmc, params: { mu1: 7.0, mu2: 4.0 } }
  s3_a: { solver: credit.ctmc, params: { mu1: 9.0 } }
  s3_b: { solver: credit.ctmc, params: { mu1: 9.0, mu2: 4.0 } }
  sim_s1_a: { solver: credit.sim }
  sim_s3_b: { solver: credit.sim, params: { mu1: 9.0, mu2: 4.0 } }
compare:
  - { metric: L1, reference: sim_s1_a, candidate: s1_a }
  - { metric: L1, reference: sim_s3_b, candidate: s3_b }
figures:
  - { id: t-L1, x: n, y: L1, series: [s1_a, s1_b, s2_a, s2_b, s3_a, s3_b, sim_s1_a, sim_s3_b] }
"#,
        );
        let names = ["s1_a", "s1_b", "s2_a", "s2_b", "s3_a", "s3_b"];
        let mut s: Vec<FigureSeries> = names.iter().map(|n| series(n, SeriesStyle::Line)).collect();
        s.push(series("sim_s1_a", SeriesStyle::Markers));
        s.push(series("sim_s3_b", SeriesStyle::Markers));
        assign_looks(&m, &m.figures[0], &mut s);
        assert_eq!(s[0].colour, s[1].colour, "colour by scenario");
        assert_ne!(s[0].colour, s[2].colour);
        assert_eq!(s[0].variant, s[2].variant, "dash by source");
        assert_ne!(s[0].variant, s[1].variant);
        assert_eq!((s[6].colour, s[6].variant), (s[0].colour, s[0].variant));
        assert_eq!((s[7].colour, s[7].variant), (s[5].colour, s[5].variant));
    }

    #[test]
    fn a_grid_of_designs_gets_colour_by_one_factor_and_dash_by_the_other() {
        let names: Vec<String> = ["t2", "t4", "t8", "t12"]
            .iter()
            .flat_map(|t| ["mu12", "mu16", "mu32"].map(|u| format!("{t}_{u}")))
            .collect();
        let series_yaml: String = names
            .iter()
            .map(|n| format!("  {n}: {{ solver: credit.ctmc }}\n"))
            .collect();
        let m = manifest(&format!(
            "id: t\ntitle: g\nversion: 1\nparams: {{ lambda: 5.0, mu1: 6.0, mu2: 8.0, m: 4 }}\nsweep: {{ n: [4, 8] }}\nseries:\n{series_yaml}figures:\n  - {{ id: t-L1, x: n, y: L1, series: [{}] }}\n",
            names.join(", ")
        ));
        let mut s: Vec<FigureSeries> = names.iter().map(|n| series(n, SeriesStyle::Line)).collect();
        assign_looks(&m, &m.figures[0], &mut s);
        let looks: std::collections::BTreeSet<(Option<usize>, usize)> =
            s.iter().map(|x| (x.colour, x.variant)).collect();
        assert_eq!(looks.len(), 12, "two series look alike: {looks:?}");
        assert_eq!(s[0].colour, s[1].colour, "same t, same colour");
        assert_ne!(s[0].variant, s[1].variant, "different μ2, different dash");
        assert_eq!(s[0].variant, s[3].variant, "same μ2, same dash");
    }
}

#[cfg(test)]
mod replication_tests {
    use super::replication_note;

    #[test]
    fn legend_names_the_replications_only_when_a_point_has_several() {
        assert_eq!(replication_note([1, 1, 0].into_iter()), "");
        assert_eq!(replication_note(std::iter::empty()), "");
        assert_eq!(replication_note([3, 0, 3].into_iter()), " (3 replications)");
        assert_eq!(
            replication_note([3, 10, 5, 0].into_iter()),
            " (3–10 replications per point)"
        );
    }
}
