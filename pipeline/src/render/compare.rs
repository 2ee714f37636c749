//! `repro compare A B`: two versions (`id@1`, `id@2`) or variants (other ids
//! over the same axes) of an experiment, joined on point, series and metric
//! (a polars full join in `reports`); what differs between them (parameters,
//! solver versions, code version); with `--figure`, and in index.html when
//! the store holds several versions, each figure with both overlaid.

use super::figures;
use crate::manifest::{Manifest, Series};
use crate::measure::{code_versions, collect_fidelity, stored_manifest, ExperimentResults};
use anyhow::Context;
use reports::{DataFrame, IndexComparison, IndexFigure, IndexTable, VersionDiff, VersionValue};
use solvers::{Fidelity, Registry};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use store::Store;

/// Two experiment versions or variants side by side.
pub struct Comparison {
    /// `id@version` of each side.
    pub a: String,
    pub b: String,
    /// The joined values (`reports::compare_frame`): what `--format parquet` writes.
    pub frame: DataFrame,
    pub diffs: Vec<VersionDiff>,
    /// What differs between the versions, one sentence each.
    pub differences: Vec<String>,
    ra: ExperimentResults,
    rb: ExperimentResults,
}

/// Two result sets joined: `ra` is A (the reference), `rb` is B; `code` maps
/// task keys to code versions.
pub fn join(
    ra: ExperimentResults,
    rb: ExperimentResults,
    metrics: &[String],
    code: &BTreeMap<String, String>,
    fidelity: Fidelity,
) -> anyhow::Result<Comparison> {
    let (ma, mb) = (&ra.manifest, &rb.manifest);
    // Sweep order of A; points only B has come after A's (one map, built once).
    let mut positions: BTreeMap<String, u64> = BTreeMap::new();
    for (offset, m) in [(0, ma), (ma.points.len(), mb)] {
        for i in 0..m.points.len() {
            if let Some(p) = m.points.get(i) {
                positions.entry(p.json()).or_insert((offset + i) as u64);
            }
        }
    }
    let order = |p: &str| -> u64 { positions.get(p).copied().unwrap_or(u64::MAX) };
    let values = |r: &ExperimentResults| -> Vec<VersionValue> {
        r.values
            .iter()
            .map(|((pi, s, m), v)| {
                let point = r
                    .manifest
                    .points
                    .get(*pi)
                    .map(|p| p.json())
                    .unwrap_or_default();
                VersionValue {
                    order: order(&point),
                    point,
                    series: s.clone(),
                    metric: m.clone(),
                    value: v.value,
                    half_width: v.half_width,
                    n: v.n,
                }
            })
            .collect()
    };
    let frame = reports::compare_frame(&values(&ra), &values(&rb), metrics)?;
    let diffs = reports::version_diffs(&frame)?;
    let differences = differences(&ra, &rb, code, fidelity);
    Ok(Comparison {
        a: format!("{}@{}", ma.id, ma.version),
        b: format!("{}@{}", mb.id, mb.version),
        frame,
        diffs,
        differences,
        ra,
        rb,
    })
}

/// Keys whose values differ between two parameter maps, as `key: a → b`.
fn changed(
    a: &BTreeMap<String, serde_json::Value>,
    b: &BTreeMap<String, serde_json::Value>,
) -> Vec<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let show = |v: Option<&serde_json::Value>| v.map_or("(unset)".to_string(), |v| v.to_string());
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: {} → {}", show(a.get(k)), show(b.get(k))))
        .collect()
}

fn series_changes(x: &Series, y: &Series, fidelity: Fidelity) -> Vec<String> {
    let mut out = Vec::new();
    if x.solver != y.solver {
        out.push(format!("solver: {} → {}", x.solver, y.solver));
    }
    out.extend(changed(&x.params, &y.params));
    if fidelity == Fidelity::Quick {
        out.extend(
            changed(&x.quick_params, &y.quick_params)
                .into_iter()
                .map(|c| format!("quick {c}")),
        );
    }
    if x.replications != y.replications {
        out.push(format!(
            "replications: {} → {}",
            x.replications, y.replications
        ));
    }
    if x.seed != y.seed {
        out.push(format!("seed: {} → {}", x.seed, y.seed));
    }
    out
}

fn parameter_differences(ma: &Manifest, mb: &Manifest, fidelity: Fidelity) -> Vec<String> {
    // The manifest's shared `params:` (every series gets them), then each series'.
    let mut out = changed(&ma.params, &mb.params);
    for x in &ma.series {
        match mb.series(&x.name) {
            None => out.push(format!("series `{}` only in A", x.name)),
            Some(y) => {
                let c = series_changes(x, y, fidelity);
                if !c.is_empty() {
                    out.push(format!("series `{}` ({})", x.name, c.join("; ")));
                }
            }
        }
    }
    for y in mb.series.iter().filter(|y| ma.series(&y.name).is_none()) {
        out.push(format!("series `{}` only in B", y.name));
    }
    let points = |m: &Manifest| -> BTreeSet<String> {
        (0..m.points.len())
            .filter_map(|i| m.points.get(i).map(|p| p.json()))
            .collect()
    };
    let (pa, pb) = (points(ma), points(mb));
    if pa != pb {
        out.push(format!(
            "sweep points ({} only in A, {} only in B)",
            pa.difference(&pb).count(),
            pb.difference(&pa).count()
        ));
    }
    out
}

/// The distinct values of `f` over the tasks of a result set.
fn task_set(
    r: &ExperimentResults,
    f: impl Fn(&str, &store::TaskRecord) -> Option<String>,
) -> BTreeSet<String> {
    r.tasks
        .iter()
        .filter_map(|(k, t)| f(k.as_str(), t))
        .collect()
}

/// What differs between the versions: parameters, solver versions, code version.
fn differences(
    ra: &ExperimentResults,
    rb: &ExperimentResults,
    code: &BTreeMap<String, String>,
    fidelity: Fidelity,
) -> Vec<String> {
    let mut out = Vec::new();
    let params = parameter_differences(&ra.manifest, &rb.manifest, fidelity);
    out.push(if params.is_empty() {
        "Parameters: the same.".to_string()
    } else {
        format!("Parameters differ: {}.", params.join(", "))
    });
    let solvers = |r: &ExperimentResults| {
        task_set(r, |_, t| {
            Some(format!("{} v{}", t.solver, t.solver_version))
        })
    };
    let (sa, sb) = (solvers(ra), solvers(rb));
    let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
    out.push(if sa == sb {
        format!("Solver versions: the same ({}).", list(&sa))
    } else {
        format!("Solver versions differ: A {}; B {}.", list(&sa), list(&sb))
    });
    let codes = |r: &ExperimentResults| task_set(r, |k, _| code.get(k).cloned());
    let (ca, cb) = (codes(ra), codes(rb));
    out.push(if ca == cb {
        format!("Code version: the same ({}).", list(&ca))
    } else {
        format!("Code version differs: A {}; B {}.", list(&ca), list(&cb))
    });
    out
}

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

/// For every experiment of the index whose store holds an earlier version:
/// the previous version against the one shown, written under
/// `<out_dir>/compare/<id>/` and attached to its entry. A previous version
/// without results at this fidelity is left out.
pub async fn attach_comparisons(
    store: &Store,
    registry: &Registry,
    out_dir: &Path,
    fidelity: Fidelity,
    entries: &mut BTreeMap<String, reports::IndexExperiment>,
) -> anyhow::Result<()> {
    let mut versions: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for e in store.experiments().await? {
        versions.entry(e.id).or_default().push(e.version);
    }
    let code = code_versions(store).await?;
    for (id, entry) in entries.iter_mut() {
        let Some(prev) = versions
            .get(id)
            .and_then(|v| v.iter().filter(|x| **x < entry.version).max())
        else {
            continue;
        };
        let (a, b) = (format!("{id}@{prev}"), format!("{id}@{}", entry.version));
        let sides = async {
            let (ma, mb) = (
                stored_manifest(store, registry, &a).await?,
                stored_manifest(store, registry, &b).await?,
            );
            anyhow::Ok((
                collect_fidelity(store, &ma, registry, fidelity).await?,
                collect_fidelity(store, &mb, registry, fidelity).await?,
            ))
        };
        let (ra, rb) = match sides.await {
            Ok(x) => x,
            Err(e) => {
                tracing::info!("no comparison of {a} and {b} in the index: {e}");
                continue;
            }
        };
        let c = join(ra, rb, &[], &code, fidelity)?;
        let rel = format!("compare/{id}/");
        entry.comparison = Some(write_comparison(&c, registry, &out_dir.join(&rel), &rel)?);
    }
    Ok(())
}
