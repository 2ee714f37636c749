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
                let style = match registry.get(&s.solver).map(|x| x.kind()) {
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
                            });
                            Some((x, v))
                        })
                        .collect();
                    series.push(FigureSeries {
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

/// Colours and dashes/markers of a figure's series (one entry per series and
/// metric, in `f.series` x `f.y` order), so that a reader can trust them:
///
/// - series named `A_B` that form a full grid (for example `t2_mu12` … `t12_mu32`
///   of the design study) get one colour per `A` and one dash or marker per `B`;
/// - otherwise series joined by a `compare` entry share a colour (a model
///   curve and the simulation markers it is checked against), and within a
///   colour each line gets its own dash and each marker series its own shape;
/// - with more groups than palette colours, the colour cycle is shifted by
///   variant, so no two series share both colour and dash or marker.
fn assign_looks(
    m: &crate::manifest::Manifest,
    f: &crate::manifest::Figure,
    series: &mut [FigureSeries],
) {
    let per = f.y.len().max(1);
    let names: Vec<&str> = f.series.iter().map(String::as_str).collect();
    let split: Vec<Option<(&str, &str)>> = names.iter().map(|n| n.rsplit_once('_')).collect();
    let distinct = |k: usize| {
        let mut v: Vec<&str> = split
            .iter()
            .flatten()
            .map(|p| if k == 0 { p.0 } else { p.1 })
            .collect();
        v.dedup();
        let mut seen = Vec::new();
        for x in v {
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
        seen
    };
    let (fa, fb) = (distinct(0), distinct(1));
    let grid = names.len() > 4
        && split.iter().all(Option::is_some)
        && fa.len() * fb.len() == names.len()
        && fa.len() <= 10
        && fb.len() <= 4;
    // Group index per series name.
    let mut group: Vec<usize> = (0..names.len()).collect();
    let mut variant_of: Vec<Option<usize>> = vec![None; names.len()];
    if grid {
        for (i, p) in split.iter().enumerate() {
            let (a, b) = p.expect("grid");
            group[i] = fa.iter().position(|x| *x == a).unwrap_or(0);
            variant_of[i] = fb.iter().position(|x| *x == b);
        }
    } else {
        // Union-find over the compare entries within the figure.
        fn root(g: &mut [usize], i: usize) -> usize {
            let mut r = i;
            while g[r] != r {
                r = g[r];
            }
            g[i] = r;
            r
        }
        for c in &m.compare {
            if !f.y.contains(&c.metric) {
                continue;
            }
            let (Some(a), Some(b)) = (
                names.iter().position(|n| *n == c.reference),
                names.iter().position(|n| *n == c.candidate),
            ) else {
                continue;
            };
            let (ra, rb) = (root(&mut group, a), root(&mut group, b));
            group[ra.max(rb)] = ra.min(rb);
        }
        for i in 0..group.len() {
            group[i] = root(&mut group, i);
        }
        // Renumber groups 0, 1, .. in order of first appearance.
        let mut order: Vec<usize> = Vec::new();
        for g in group.iter_mut() {
            let k = match order.iter().position(|x| x == g) {
                Some(k) => k,
                None => {
                    order.push(*g);
                    order.len() - 1
                }
            };
            *g = k;
        }
    }
    if grid {
        let groups = group.iter().max().map_or(1, |g| g + 1);
        for (k, s) in series.iter_mut().enumerate() {
            let i = k / per;
            let v = variant_of[i].unwrap_or(0) * per + k % per;
            let wrap = group[i] / 10;
            s.colour = Some((group[i] + wrap) % 10);
            s.variant = v + if groups > 10 { wrap } else { 0 };
        }
        return;
    }
    // Colour per (group, metric): a model and its simulation share one, each
    // metric of a multi-metric figure has its own. Dashes and marker shapes
    // count over the whole figure, so coinciding lines of different groups
    // still differ in dash (drawn solid first, dashed over them).
    let mut keys: Vec<(usize, usize)> = Vec::new();
    let (mut lines, mut markers) = (0usize, 0usize);
    for (k, s) in series.iter_mut().enumerate() {
        let key = (group[k / per], k % per);
        let c = match keys.iter().position(|x| *x == key) {
            Some(c) => c,
            None => {
                keys.push(key);
                keys.len() - 1
            }
        };
        let counter = if s.style == SeriesStyle::Line {
            &mut lines
        } else {
            &mut markers
        };
        let v = *counter;
        *counter += 1;
        // Past 10 colours, shift the cycle so colour and dash/marker never repeat together.
        s.colour = Some((c + c / 10) % 10);
        s.variant = v + c / 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn series(style: SeriesStyle) -> FigureSeries {
        FigureSeries {
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
            series(SeriesStyle::Line),
            series(SeriesStyle::Line),
            series(SeriesStyle::Markers),
        ];
        assign_looks(&m, &m.figures[0], &mut s);
        assert_eq!(s[1].colour, s[2].colour, "model and its simulation");
        assert_ne!(s[0].colour, s[1].colour);
        assert_ne!(s[0].variant, s[1].variant, "two lines, one dash");
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
        let mut s: Vec<FigureSeries> = names.iter().map(|_| series(SeriesStyle::Line)).collect();
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
