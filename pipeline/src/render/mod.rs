//! Render: figures, tables, index.html, JUnit and export from what measure
//! produced ([`crate::measure::Measured`]). Render reads no store and measures
//! nothing; it writes files and returns what it wrote.
//!
//! `figures` and `timeseries` draw (a new figure kind is drawn in
//! `timeseries`), `tables` tabulates, `index` writes index.html, `junit` the
//! JUnit XML of `check`, `export` the tidy rows of `repro export`, `compare`
//! the overlay figures of two versions of an experiment, `drawn` the record of
//! what was drawn (whether an output must be drawn again).

mod claims;
pub mod compare;
pub mod drawn;
pub mod export;
pub mod figures;
pub mod index;
pub mod junit;
pub mod tables;
pub mod timeseries;

pub use drawn::{Draw, Drawn, DrawnOutput};
pub use figures::figures;
pub use index::{catalogue, write_index};
pub use tables::tables;

use crate::measure::Measured;
use anyhow::Context;
use reports::{FigureOverrides, IndexExperiment, IndexFigure, IndexTable};
use solvers::{Fidelity, Kind, Registry};
use std::path::{Component, Path, PathBuf};

/// Where the pages of a fidelity go: full results in `results/`, quick (CI)
/// results in `results/quick/`, so a quick run never overwrites the paper figures.
pub fn fidelity_dir(results_dir: &Path, fidelity: Fidelity) -> PathBuf {
    match fidelity {
        Fidelity::Full => results_dir.to_path_buf(),
        Fidelity::Quick => results_dir.join("quick"),
    }
}

/// An experiment rendered: its index entry and what it shows, output by
/// output (for the store's record of what was drawn).
pub struct Rendered {
    pub entry: IndexExperiment,
    pub drawn: Vec<DrawnOutput>,
}

/// Renders one measured experiment into `out_dir` (the folder of its
/// fidelity, see [`fidelity_dir`]): its figures (laid out as its manifest's
/// `layout:` says, with `layout`'s options over it) and tables as `draw`
/// decides, the comparison with its previous version, and its index entry.
pub fn render_experiment(
    x: &Measured,
    registry: &Registry,
    out_dir: &Path,
    fidelity: Fidelity,
    draw: Draw<'_>,
    layout: &FigureOverrides,
) -> anyhow::Result<Rendered> {
    let (m, r) = (x.manifest(), &x.results);
    let mut drawn = Vec::new();
    let mut record = |output: &str, hash: String| {
        drawn.push(DrawnOutput {
            experiment: m.id.clone(),
            version: m.version,
            output: output.to_string(),
            hash,
        })
    };
    let mut index_figs = Vec::new();
    for mut f in figures(&x.results, registry) {
        if fidelity == Fidelity::Quick {
            // Every quick figure says so on its face, wherever it is copied to.
            f.title = format!("{} [quick]", f.title);
        }
        let spec = m.figures.iter().find(|s| s.id == f.id);
        let opts = layout.apply(spec.map(|s| s.layout).unwrap_or_default());
        // What it shows includes how it is laid out.
        let hash = drawn::content_hash(&(&f, &opts))?;
        let files =
            ["png", "svg", "pdf", "csv"].map(|x| out_dir.join(format!("figures/{}.{x}", f.id)));
        if draw.needed(&m.id, &f.id, &hash, &files) {
            reports::render_figure_with(&f, &opts, &out_dir.join("figures"))
                .with_context(|| format!("rendering figure {}", f.id))?;
        }
        record(&f.id, hash);
        index_figs.push(IndexFigure {
            alt: reports::figure_alt(&f),
            id: f.id.clone(),
            title: f.title.clone(),
            png: format!("figures/{}.png", f.id),
            svg: format!("figures/{}.svg", f.id),
            em: x.figure_ems.get(&f.id).cloned(),
        });
    }
    let mut index_tabs = Vec::new();
    for mut t in tables(&x.results, &x.error_measures, &x.em_summary)? {
        if fidelity == Fidelity::Quick {
            t.notes.insert(
                0,
                "Quick (CI) fidelity: not the paper's numbers.".to_string(),
            );
        }
        let hash = drawn::content_hash(&t)?;
        let files = ["md", "csv"].map(|x| out_dir.join(format!("tables/{}.{x}", t.id)));
        if draw.needed(&m.id, &t.id, &hash, &files) {
            reports::write_table(&t, &out_dir.join("tables"))
                .with_context(|| format!("writing table {}", t.id))?;
        }
        record(&t.id, hash);
        index_tabs.push(IndexTable {
            id: t.id.clone(),
            title: t.title.clone(),
            markdown: format!("tables/{}.md", t.id),
            csv: format!("tables/{}.csv", t.id),
            em: x.table_ems.get(&t.id).cloned(),
            table: t,
        });
    }
    let comparison = match &x.previous {
        Some(c) => {
            let rel = format!("compare/{}/", m.id);
            Some(compare::write_comparison(
                c,
                registry,
                &out_dir.join(&rel),
                &rel,
            )?)
        }
        None => None,
    };
    Ok(Rendered {
        entry: IndexExperiment {
            id: m.id.clone(),
            version: m.version,
            title: m.title.clone(),
            source: m.source.clone(),
            manifest_hash: m.hash.clone(),
            figures: index_figs,
            tables: index_tabs,
            provenance: provenance(x),
            series: series_provenance(x, registry),
            em_summary: x.em_summary.clone(),
            docs: model_docs(m, out_dir),
            comparison,
            claims: x.claims.iter().map(|c| claims::index_claim(c, r)).collect(),
            removed_claims: x.removed_claims.iter().map(claims::change).collect(),
            calibrated_against: m
                .calibrated
                .as_ref()
                .map(|c| c.against.clone())
                .unwrap_or_default(),
        },
        drawn,
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
                .and_then(|()| reports::copy_atomic(&src, &copy))
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

/// Where an experiment's results come from: its manifest, task counts and
/// wall times.
fn provenance(x: &Measured) -> Vec<(String, String)> {
    let (m, r) = (x.manifest(), &x.results);
    vec![
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
    ]
}

/// Per series: its solver, tasks, wall time, base seed and fidelity
/// (simulations; each task's seed follows from the base seed and is in
/// `repro export`), and the points where it has no value.
fn series_provenance(x: &Measured, registry: &Registry) -> Vec<reports::SeriesProvenance> {
    use crate::measure::PointStatus;
    let (m, r) = (x.manifest(), &x.results);
    m.series
        .iter()
        .map(|s| {
            let recs: Vec<&store::TaskRecord> = r
                .keys
                .iter()
                .filter(|((_, sn), _)| *sn == s.name)
                .flat_map(|(_, k)| k)
                .filter_map(|k| r.tasks.get(k).map(AsRef::as_ref))
                .collect();
            let simulation = registry
                .get(&s.solver)
                .is_some_and(|x| x.kind() == Kind::Simulation);
            let without_value = [
                PointStatus::Undefined,
                PointStatus::Saturated,
                PointStatus::Failed,
                PointStatus::Missing,
            ]
            .into_iter()
            .map(|st| {
                let n = r
                    .status
                    .iter()
                    .filter(|((_, sn), v)| *sn == s.name && **v == st)
                    .count();
                (st.to_string(), n)
            })
            .filter(|(_, n)| *n > 0)
            .collect();
            reports::SeriesProvenance {
                series: s.name.clone(),
                solver: s.solver.clone(),
                solver_version: recs.first().map_or(0, |t| t.solver_version),
                tasks: recs.len(),
                wall_s: recs.iter().map(|t| t.wall_ms).sum::<f64>() / 1e3,
                base_seed: simulation.then_some(s.seed),
                fidelity: simulation
                    .then(|| recs.first().map(|t| t.fidelity.clone()))
                    .flatten(),
                points: m.points.len(),
                without_value,
            }
        })
        .collect()
}
