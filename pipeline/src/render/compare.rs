//! Overlay figures of two versions or variants of an experiment (`repro
//! compare A B --figure`, and index.html's comparison of an experiment's
//! previous and current version), and their difference table, from a
//! [`Comparison`] measure made.

use super::figures;
use crate::measure::compare::Comparison;
use anyhow::Context;
use reports::{IndexComparison, IndexFigure, IndexTable};
use solvers::Registry;
use std::path::Path;

/// Writes the overlay figures (`figures/<figure id>.png|svg`) and the
/// difference table (`tables/<id>.md|csv`, id `<a>-vs-<b>`) into `dir`;
/// returns their index entries, paths relative to `rel` (the index's folder).
pub fn write_comparison(
    c: &Comparison,
    registry: &Registry,
    dir: &Path,
    rel: &str,
) -> anyhow::Result<IndexComparison> {
    let fb = figures(&c.rb, registry);
    let mut index_figs = Vec::new();
    for fa in figures(&c.ra, registry) {
        let Some(fb) = fb.iter().find(|f| f.id == fa.id) else {
            continue;
        };
        let f = reports::overlay_figure(&fa, fb, (&c.a, &c.b));
        reports::render_figure(&f, &dir.join("figures"))
            .with_context(|| format!("rendering overlay figure {}", f.id))?;
        index_figs.push(IndexFigure {
            alt: reports::figure_alt(&f),
            id: format!("{}-vs-{}", f.id, c.b.replace('@', "-v")),
            title: f.title.clone(),
            png: format!("{rel}figures/{}.png", f.id),
            svg: format!("{rel}figures/{}.svg", f.id),
            em: None,
        });
    }
    let id = format!("{}-vs-{}", c.a.replace('@', "-v"), c.b.replace('@', "-v"));
    let t = reports::compare_table(&id, (&c.a, &c.b), &c.diffs, &c.differences);
    reports::write_table(&t, &dir.join("tables")).with_context(|| format!("writing table {id}"))?;
    Ok(IndexComparison {
        a: c.a.clone(),
        b: c.b.clone(),
        differences: c.differences.clone(),
        figures: index_figs,
        table: IndexTable {
            id: t.id.clone(),
            title: t.title.clone(),
            markdown: format!("{rel}tables/{id}.md"),
            csv: format!("{rel}tables/{id}.csv"),
            table: t,
            em: None,
        },
    })
}
