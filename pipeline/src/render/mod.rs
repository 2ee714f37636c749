//! Render: figures, tables, index.html, JUnit and export from measured results.
//!
//! `figures` and `timeseries` draw (a new figure kind is drawn in
//! `timeseries`), `tables` tabulates, `index` writes index.html, `junit` the
//! JUnit XML of `check`, `export` the tidy rows of `repro export`, `compare`
//! two versions of an experiment (`repro compare`, and index.html when the
//! store holds several versions).

pub mod compare;
pub mod export;
pub mod figures;
pub mod index;
pub mod junit;
pub mod tables;
pub mod timeseries;

pub use figures::figures;
pub use index::{catalogue, write_full_index, write_index};
pub use tables::{em_summary, tables};

use crate::manifest::predicate::interval::Truth;
use crate::measure::claims::ClaimResult;
use crate::measure::ExperimentResults;
use anyhow::Context;
use reports::{IndexClaim, IndexClaimChange, IndexClaimStep};
use reports::{IndexExperiment, IndexFigure, IndexTable, OutputEm};
use solvers::{Fidelity, Kind, Registry};
use std::path::{Component, Path, PathBuf};
use store::ErrorMeasureRow;
use verdicts::Verdict;

/// Where the pages of a fidelity go: full results in `results/`, quick (CI)
/// results in `results/quick/`, so a quick run never overwrites the paper figures.
pub fn fidelity_dir(results_dir: &Path, fidelity: Fidelity) -> PathBuf {
    match fidelity {
        Fidelity::Full => results_dir.to_path_buf(),
        Fidelity::Quick => results_dir.join("quick"),
    }
}

/// Renders one experiment into `out_dir` (the folder of its fidelity, see
/// [`fidelity_dir`]); returns its index entry.
pub fn render_experiment(
    r: &ExperimentResults,
    m: &Measured,
    registry: &Registry,
    out_dir: &Path,
    fidelity: Fidelity,
) -> anyhow::Result<IndexExperiment> {
    build(r, m, registry, out_dir, true, fidelity)
}

/// What the measure stage found of one experiment besides its values.
pub struct Measured<'a> {
    pub ems: &'a [ErrorMeasureRow],
    pub claims: &'a [ClaimResult],
    /// Claims with results that the manifest no longer has.
    pub removed: &'a [store::ClaimDefinitionRow],
}

fn change(d: &store::ClaimDefinitionRow) -> IndexClaimChange {
    IndexClaimChange {
        id: d.claim_id.clone(),
        definition: d.definition.clone(),
        first_evaluated: d.first_seen.clone(),
        last_evaluated: d.last_evaluated.clone(),
        last_verdict: d.last_verdict,
    }
}

/// A claim result as the index shows it.
fn index_claim(c: &ClaimResult, r: &ExperimentResults) -> IndexClaim {
    let truth = |t: Truth| match t {
        Truth::True => Verdict::Holds,
        Truth::False => Verdict::Fails,
        Truth::Unknown => Verdict::Inconclusive,
    };
    IndexClaim {
        id: c.id.clone(),
        kind: c.kind,
        quote: c.quote.clone(),
        where_: c.where_.clone(),
        entries: c.entries.clone(),
        holds: match c.tolerance {
            Some(_) => c.holds.clone(),
            None => c.holds.clone(),
        },
        points: c.points_filter.clone(),
        expect: c.expect,
        why: c.why.clone(),
        note: c.note.clone(),
        sanity: c.sanity.clone(),
        fit: c.fit.clone(),
        verdict: c.verdict,
        status: c.status,
        reason: c.reason.clone(),
        evaluated: c.points.len(),
        skipped: c
            .skipped
            .iter()
            .map(|(p, w)| (r.point(*p).map(|x| x.json()).unwrap_or_default(), w.clone()))
            .collect(),
        steps: c
            .steps
            .iter()
            .map(|s| IndexClaimStep {
                text: s.text.clone(),
                point: s.point.clone(),
                lhs: (s.lhs.lo, s.lhs.hi),
                op: s.op.clone(),
                rhs: (s.rhs.lo, s.rhs.hi),
                verdict: truth(s.truth),
            })
            .collect(),
        history: c.history.iter().map(change).collect(),
    }
}

/// The index entry of an experiment whose files are already in `out_dir`.
pub fn index_entry_without_files(
    r: &ExperimentResults,
    m: &Measured,
    registry: &Registry,
    out_dir: &Path,
    fidelity: Fidelity,
) -> anyhow::Result<IndexExperiment> {
    build(r, m, registry, out_dir, false, fidelity)
}

/// Error measures over the rows that `keep` selects (`None` when it selects
/// none), aggregated by polars in `reports`.
fn output_em(
    ems: &[ErrorMeasureRow],
    keep: impl Fn(&ErrorMeasureRow) -> bool,
) -> anyhow::Result<Option<OutputEm>> {
    let rows: Vec<ErrorMeasureRow> = ems.iter().filter(|e| keep(e)).cloned().collect();
    Ok(reports::output_em(&tables::em_points(&rows))?)
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
/// (`credit.ctmc` -> `credit.md`). Each is copied into `<out_dir>/models/`
/// and linked there, so the results folder keeps working links when it is
/// published or moved on its own.
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
            let file = format!("{n}.md");
            let src = dir.join(&file);
            if !src.is_file() {
                return None;
            }
            let copy = out_dir.join("models").join(&file);
            let copied = std::fs::create_dir_all(out_dir.join("models"))
                .and_then(|()| std::fs::copy(&src, &copy))
                .is_ok();
            // Unwritable results folder: link the source instead.
            let href = if copied {
                Some(format!("models/{file}"))
            } else {
                relative_href(out_dir, &src)
            };
            href.map(|h| (file, h))
        })
        .collect()
}

fn build(
    r: &ExperimentResults,
    measured: &Measured,
    registry: &Registry,
    out_dir: &Path,
    write: bool,
    fidelity: Fidelity,
) -> anyhow::Result<IndexExperiment> {
    let m = &r.manifest;
    let ems = measured.ems;
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
        })?;
        if fidelity == Fidelity::Quick {
            // Every quick figure says so on its face, wherever it is copied to.
            f.title = format!("{} [quick]", f.title);
        }
        if let Some(dir) = results_dir {
            reports::render_figure(&f, &dir.join("figures"))
                .with_context(|| format!("rendering figure {}", f.id))?;
        }
        index_figs.push(IndexFigure {
            alt: reports::figure_alt(&f),
            id: f.id.clone(),
            title: f.title.clone(),
            png: format!("figures/{}.png", f.id),
            svg: format!("figures/{}.svg", f.id),
            em,
        });
    }
    let mut index_tabs = Vec::new();
    for mut t in tables(r, ems)? {
        let em = match m.tables.iter().find(|x| x.id == t.id).map(|x| &x.kind) {
            Some(crate::manifest::TableKind::ErrorMeasures) => output_em(ems, |_| true)?,
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
        use crate::measure::PointStatus;
        for st in [
            PointStatus::Undefined,
            PointStatus::Saturated,
            PointStatus::Failed,
            PointStatus::Missing,
        ] {
            let n = r
                .status
                .iter()
                .filter(|((_, sn), v)| *sn == s.name && **v == st)
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
        em_summary: em_summary(ems)?,
        docs: model_docs(m, out_dir),
        comparison: None,
        claims: measured.claims.iter().map(|c| index_claim(c, r)).collect(),
        removed_claims: measured.removed.iter().map(change).collect(),
        calibrated_against: m
            .calibrated
            .as_ref()
            .map(|c| c.against.clone())
            .unwrap_or_default(),
    })
}
