//! Render: figures, tables and index.html from measured results.

use crate::results::ExperimentResults;
use anyhow::Context;
use reports::{
    EmSummaryLine, Figure, FigureSeries, Index, IndexExperiment, IndexFigure, IndexTable,
    SeriesStyle, Table, Value,
};
use solvers::{Kind, Registry};
use std::path::Path;
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
                            let x = r.x_of(p.index, &f.x)?;
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
                    });
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
        })
        .collect()
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
    out
}

/// Renders one experiment into `results_dir`; returns its index entry.
pub fn render_experiment(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    registry: &Registry,
    results_dir: &Path,
) -> anyhow::Result<IndexExperiment> {
    build(r, ems, registry, Some(results_dir))
}

/// The index entry of an experiment whose files are already on disk.
pub fn index_entry_without_files(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    registry: &Registry,
) -> IndexExperiment {
    build(r, ems, registry, None).expect("nothing is written, nothing can fail")
}

fn build(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    registry: &Registry,
    results_dir: Option<&Path>,
) -> anyhow::Result<IndexExperiment> {
    let m = &r.manifest;
    let mut index_figs = Vec::new();
    for f in figures(r, registry) {
        if let Some(dir) = results_dir {
            reports::render_figure(&f, &dir.join("figures"))
                .with_context(|| format!("rendering figure {}", f.id))?;
        }
        index_figs.push(IndexFigure {
            id: f.id.clone(),
            title: f.title.clone(),
            png: format!("figures/{}.png", f.id),
            svg: format!("figures/{}.svg", f.id),
        });
    }
    let mut index_tabs = Vec::new();
    for t in tables(r, ems) {
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
    })
}

pub fn write_index(experiments: Vec<IndexExperiment>, results_dir: &Path) -> anyhow::Result<()> {
    let index = Index {
        generated_by: format!("repro {}", env!("CARGO_PKG_VERSION")),
        code_version: crate::CODE_VERSION.to_string(),
        experiments,
    };
    reports::write_index(&index, &results_dir.join("index.html")).context("writing index.html")
}
