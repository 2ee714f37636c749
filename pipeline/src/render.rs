//! Render: figures, tables and index.html from measured results.

use crate::results::ExperimentResults;
use anyhow::Context;
use reports::{
    CatalogueEntry, EmSummaryLine, Figure, FigureSeries, Index, IndexExperiment, IndexFigure,
    IndexTable, OutputEm, SeriesStyle, Table, Value,
};
use solvers::{Fidelity, Kind, Registry};
use std::path::{Component, Path, PathBuf};
use store::ErrorMeasureRow;

use reports::{format_em as fmt_pct, format_percent, format_tick as fmt_num};

fn fmt_val(v: Option<f64>, hw: Option<f64>) -> String {
    match (v, hw) {
        (Some(v), Some(h)) if h.is_finite() => format!("{} ± {}", fmt_num(v), fmt_num(h)),
        (Some(v), _) => fmt_num(v),
        (None, _) => "—".into(),
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

pub fn figures(r: &ExperimentResults, registry: &Registry) -> Vec<Figure> {
    let m = &r.manifest;
    m.figures
        .iter()
        .map(|f| {
            if f.kind != crate::manifest::FigureKind::Sweep {
                return crate::timeseries::figure(r, f, registry);
            }
            let mut series = Vec::new();
            for sname in &f.series {
                let Some(s) = m.series(sname) else {
                    series.extend(crate::timeseries::reference_sweep_series(r, f, sname));
                    continue;
                };
                let style = match registry.get(&s.solver).map(|x| x.kind()) {
                    Some(Kind::Simulation) => SeriesStyle::Markers,
                    _ => SeriesStyle::Line,
                };
                for metric in &f.y {
                    let label = if f.y.len() > 1 {
                        format!("{}: {metric}", s.label)
                    } else {
                        s.label.clone()
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

pub fn em_summary(rows: &[ErrorMeasureRow]) -> Vec<EmSummaryLine> {
    let mut out: Vec<EmSummaryLine> = Vec::new();
    for row in rows {
        let pos = out.iter().position(|l| {
            l.metric == row.metric && l.reference == row.reference && l.candidate == row.candidate
        });
        let i = match pos {
            Some(i) => i,
            None => {
                out.push(EmSummaryLine {
                    metric: row.metric.clone(),
                    reference: row.reference.clone(),
                    candidate: row.candidate.clone(),
                    mean_em: None,
                    max_em: None,
                    tolerance: row.tolerance,
                    passed: 0,
                    failed: 0,
                    inconclusive: 0,
                });
                out.len() - 1
            }
        };
        match row.verdict.as_str() {
            "pass" => out[i].passed += 1,
            "fail" => out[i].failed += 1,
            "inconclusive" => out[i].inconclusive += 1,
            _ => {}
        }
    }
    for l in &mut out {
        let ems: Vec<Option<f64>> = rows
            .iter()
            .filter(|r| {
                r.metric == l.metric && r.reference == l.reference && r.candidate == l.candidate
            })
            .map(|r| r.em)
            .collect();
        let (mean, max) = reports::em::summarise(&ems);
        l.mean_em = mean;
        l.max_em = max;
    }
    out
}

pub fn tables(r: &ExperimentResults, ems: &[ErrorMeasureRow]) -> Vec<Table> {
    let m = &r.manifest;
    let mut out = Vec::new();
    for t in &m.tables {
        let title = t.title.clone().unwrap_or_else(|| m.title.clone());
        match t.kind {
            crate::manifest::TableKind::ErrorMeasures => {
                let header = [
                    "point",
                    "metric",
                    "reference",
                    "reference value (±95% CI)",
                    "candidate",
                    "candidate value",
                    "EM",
                    "tolerance",
                    "verdict",
                ]
                .map(String::from)
                .to_vec();
                let rows = ems
                    .iter()
                    .map(|e| {
                        vec![
                            point_label(&e.point),
                            e.metric.clone(),
                            e.reference.clone(),
                            fmt_val(e.reference_value, e.reference_half_width),
                            e.candidate.clone(),
                            fmt_val(e.candidate_value, None),
                            fmt_pct(e.em),
                            e.tolerance.map_or("—".into(), format_percent),
                            e.verdict.clone(),
                        ]
                    })
                    .collect();
                let notes = em_summary(ems)
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
                let mut table = Table {
                    id: t.id.clone(),
                    title,
                    header,
                    rows,
                    notes,
                };
                reports::unify_number_columns(&mut table);
                out.push(table);
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
                let mut header: Vec<String> = m.axes.clone();
                for s in &series {
                    for k in &metrics {
                        header.push(format!("{s}: {k}"));
                    }
                }
                let rows = m
                    .points
                    .iter()
                    .map(|p| {
                        let mut row: Vec<String> = m
                            .axes
                            .iter()
                            .map(|a| p.values.get(a).map_or("—".into(), |v| v.to_string()))
                            .collect();
                        for s in &series {
                            let st = r
                                .status
                                .get(&(p.index, s.clone()))
                                .map_or("missing", String::as_str);
                            for k in &metrics {
                                row.push(match st {
                                    "done" => {
                                        let a = r.get(p.index, s, k);
                                        fmt_val(a.map(|a| a.value), a.and_then(|a| a.half_width))
                                    }
                                    other => other.to_string(),
                                });
                            }
                        }
                        row
                    })
                    .collect();
                // Where a series has no value, say why, point by point.
                let mut notes = Vec::new();
                for p in &m.points {
                    for s in &series {
                        let key = (p.index, s.clone());
                        let st = r.status.get(&key).map_or("missing", String::as_str);
                        if st != "done" {
                            let why = r
                                .reasons
                                .get(&key)
                                .map_or(String::new(), |w| format!(": {w}"));
                            notes.push(format!("{} — `{s}` {st}{why}", point_label(&p.json())));
                        }
                    }
                }
                let mut table = Table {
                    id: t.id.clone(),
                    title,
                    header,
                    rows,
                    notes,
                };
                reports::unify_number_columns(&mut table);
                out.push(table);
            }
        }
    }
    out
}

/// Renders one experiment into `out_dir` (the folder of its fidelity, see
/// [`crate::fidelity_dir`]); returns its index entry.
pub fn render_experiment(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    registry: &Registry,
    out_dir: &Path,
    fidelity: Fidelity,
) -> anyhow::Result<IndexExperiment> {
    build(r, ems, registry, out_dir, true, fidelity)
}

/// The index entry of an experiment whose files are already in `out_dir`.
pub fn index_entry_without_files(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    registry: &Registry,
    out_dir: &Path,
    fidelity: Fidelity,
) -> IndexExperiment {
    build(r, ems, registry, out_dir, false, fidelity).expect("nothing is written, nothing can fail")
}

/// Error measures over the rows that `keep` selects (`None` when it selects none).
fn output_em(ems: &[ErrorMeasureRow], keep: impl Fn(&ErrorMeasureRow) -> bool) -> Option<OutputEm> {
    let rows: Vec<&ErrorMeasureRow> = ems.iter().filter(|e| keep(e)).collect();
    if rows.is_empty() {
        return None;
    }
    let (mean_em, max_em) = reports::em::summarise(&rows.iter().map(|r| r.em).collect::<Vec<_>>());
    let count = |v: &str| rows.iter().filter(|r| r.verdict == v).count();
    Some(OutputEm {
        mean_em,
        max_em,
        passed: count("pass"),
        failed: count("fail"),
        inconclusive: count("inconclusive"),
    })
}

/// `to` relative to the folder `from` (both made absolute against the current
/// directory), with `/` separators, for links in index.html.
fn relative_href(from: &Path, to: &Path) -> Option<String> {
    let from = std::path::absolute(from).ok()?;
    let to = std::path::absolute(to).ok()?;
    let norm = |p: &Path| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for c in p.components() {
            match c {
                Component::ParentDir => {
                    v.pop();
                }
                Component::Normal(x) => v.push(x.to_string_lossy().into_owned()),
                _ => {}
            }
        }
        v
    };
    let (f, t) = (norm(&from), norm(&to));
    let common = f.iter().zip(&t).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_string(); f.len() - common];
    parts.extend(t[common..].iter().cloned());
    Some(parts.join("/"))
}

/// The model documents behind an experiment: `docs/models/NAME.md` files its
/// manifest mentions or whose NAME is the family of one of its solvers
/// (`credit.ctmc` -> `credit.md`). Only files that exist here are linked, so a
/// results folder moved elsewhere gets no broken links.
fn model_docs(m: &crate::manifest::Manifest, out_dir: &Path) -> Vec<(String, String)> {
    let dir = PathBuf::from("docs/models");
    let mut names: Vec<String> = m
        .text
        .match_indices("docs/models/")
        .filter_map(|(i, pat)| {
            let rest = &m.text[i + pat.len()..];
            let end = rest.find(".md")?;
            let name = &rest[..end];
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                .then(|| name.to_string())
        })
        .collect();
    names.extend(
        m.series
            .iter()
            .filter_map(|s| s.solver.split('.').next().map(str::to_string)),
    );
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|n| {
            let f = dir.join(format!("{n}.md"));
            f.is_file()
                .then(|| relative_href(out_dir, &f).map(|h| (format!("{n}.md"), h)))
                .flatten()
        })
        .collect()
}

fn build(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    registry: &Registry,
    out_dir: &Path,
    write: bool,
    fidelity: Fidelity,
) -> anyhow::Result<IndexExperiment> {
    let m = &r.manifest;
    let results_dir = write.then_some(out_dir);
    let mut index_figs = Vec::new();
    for mut f in figures(r, registry) {
        let spec = m.figures.iter().find(|x| x.id == f.id);
        let em = output_em(ems, |e| {
            spec.is_some_and(|s| {
                s.y.contains(&e.metric)
                    && s.series.contains(&e.reference)
                    && s.series.contains(&e.candidate)
            })
        });
        if fidelity == Fidelity::Quick {
            // Every quick figure says so on its face, wherever it is copied to.
            f.title = format!("{} [quick]", f.title);
        }
        if let Some(dir) = results_dir {
            reports::render_figure(&f, &dir.join("figures"))
                .with_context(|| format!("rendering figure {}", f.id))?;
        }
        index_figs.push(IndexFigure {
            id: f.id.clone(),
            title: f.title.clone(),
            png: format!("figures/{}.png", f.id),
            svg: format!("figures/{}.svg", f.id),
            em,
        });
    }
    let mut index_tabs = Vec::new();
    for mut t in tables(r, ems) {
        let em = match m.tables.iter().find(|x| x.id == t.id).map(|x| &x.kind) {
            Some(crate::manifest::TableKind::ErrorMeasures) => output_em(ems, |_| true),
            _ => None,
        };
        if fidelity == Fidelity::Quick {
            t.notes.insert(
                0,
                "Quick (CI) fidelity: not the paper's numbers.".to_string(),
            );
        }
        if let Some(dir) = results_dir {
            reports::write_table(&t, &dir.join("tables"))
                .with_context(|| format!("writing table {}", t.id))?;
        }
        index_tabs.push(IndexTable {
            id: t.id.clone(),
            title: t.title.clone(),
            markdown: format!("tables/{}.md", t.id),
            csv: format!("tables/{}.csv", t.id),
            table: t,
            em,
        });
    }
    let sims: Vec<&crate::manifest::Series> = m
        .series
        .iter()
        .filter(|s| {
            registry
                .get(&s.solver)
                .is_some_and(|x| x.kind() == Kind::Simulation)
        })
        .collect();
    let mut provenance = vec![
        ("manifest".to_string(), m.path.display().to_string()),
        ("manifest sha256".to_string(), m.hash.clone()),
        ("points".to_string(), m.points.len().to_string()),
        ("tasks".to_string(), r.tasks.len().to_string()),
        (
            "task wall time (sum)".to_string(),
            format!(
                "{:.3} s",
                r.tasks.values().map(|t| t.wall_ms).sum::<f64>() / 1e3
            ),
        ),
    ];
    for s in &m.series {
        let keys: Vec<&String> = r
            .keys
            .iter()
            .filter(|((_, sn), _)| *sn == s.name)
            .flat_map(|(_, k)| k)
            .collect();
        let recs: Vec<&store::TaskRecord> = keys.iter().filter_map(|k| r.tasks.get(*k)).collect();
        let wall: f64 = recs.iter().map(|t| t.wall_ms).sum();
        let mut line = format!(
            "{} (v{}), {} tasks, {:.3} s",
            s.solver,
            recs.first().map_or(0, |t| t.solver_version),
            recs.len(),
            wall / 1e3
        );
        if sims.iter().any(|x| x.name == s.name) {
            let fid: Vec<&str> = recs.iter().map(|t| t.fidelity.as_str()).collect();
            let seeds: Vec<String> = recs.iter().take(3).map(|t| t.seed.to_string()).collect();
            line.push_str(&format!(
                ", base seed {}, fidelity {}, seeds {}{}",
                s.seed,
                fid.first().copied().unwrap_or("?"),
                seeds.join(", "),
                if recs.len() > 3 { ", …" } else { "" }
            ));
        }
        for st in ["undefined", "saturated", "failed", "missing"] {
            let n = r
                .status
                .iter()
                .filter(|((_, sn), v)| *sn == s.name && v.as_str() == st)
                .count();
            if n > 0 {
                line.push_str(&format!("; {st} at {n} of {} points", m.points.len()));
            }
        }
        provenance.push((format!("series {}", s.name), line));
    }
    Ok(IndexExperiment {
        id: m.id.clone(),
        version: m.version,
        title: m.title.clone(),
        source: m.source.clone(),
        manifest_hash: m.hash.clone(),
        figures: index_figs,
        tables: index_tabs,
        provenance,
        em_summary: em_summary(ems),
        docs: model_docs(m, out_dir),
    })
}

/// `docs/figures.md`, compiled in: the papers' figures and tables in order.
const FIGURES_MD: &str = include_str!("../../docs/figures.md");

/// The catalogue of paper figures and tables (the table rows of `docs/figures.md`).
pub fn catalogue() -> Vec<CatalogueEntry> {
    FIGURES_MD
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim()
                .strip_prefix('|')?
                .split('|')
                .map(str::trim)
                .collect();
            let (id, paper, what) = (cells.first()?, cells.get(1)?, cells.get(2)?);
            let is_id = id.contains('-')
                && id.starts_with(|c: char| c.is_ascii_lowercase())
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            is_id.then(|| CatalogueEntry {
                id: id.to_string(),
                paper: paper.to_string(),
                what: what.to_string(),
            })
        })
        .collect()
}

/// Writes the index of one fidelity into its folder (see [`crate::fidelity_dir`]).
/// It links the other fidelity's index when that exists or `other_coming` says
/// it is being written too.
pub fn write_index(
    experiments: Vec<IndexExperiment>,
    results_dir: &Path,
    fidelity: Fidelity,
    other_coming: bool,
) -> anyhow::Result<()> {
    let out_dir = crate::fidelity_dir(results_dir, fidelity);
    let other = |f| {
        other_coming
            || crate::fidelity_dir(results_dir, f)
                .join("index.html")
                .is_file()
    };
    let other_fidelity = match fidelity {
        Fidelity::Full => other(Fidelity::Quick).then(|| {
            (
                "Quick (CI) results".to_string(),
                "quick/index.html".to_string(),
            )
        }),
        Fidelity::Quick => other(Fidelity::Full).then(|| {
            (
                "Full-fidelity results".to_string(),
                "../index.html".to_string(),
            )
        }),
    };
    let index = Index {
        generated_by: format!("repro {}", env!("CARGO_PKG_VERSION")),
        code_version: crate::CODE_VERSION.to_string(),
        generated_at: store::now_rfc3339(),
        fidelity: fidelity.as_str().to_string(),
        other_fidelity,
        catalogue: catalogue(),
        experiments,
    };
    reports::write_index(&index, &out_dir.join("index.html")).context("writing index.html")
}

#[cfg(test)]
mod tests {
    use super::*;

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
