//! Two versions (`id@1`, `id@2`) or variants (other ids over the same axes)
//! of an experiment, joined on point, series and metric (a polars full join in
//! `reports`), and what differs between them (parameters, solver versions,
//! code version): `repro compare A B`, and index.html's comparison of an
//! experiment's previous stored version with the one shown
//! ([`previous_version`]). Render draws the overlay figures.

use super::{collect_fidelity, stored_manifest, ExperimentResults};
use crate::manifest::{Manifest, Series};
use reports::{DataFrame, VersionDiff, VersionValue};
use solvers::{Fidelity, Registry};
use std::collections::{BTreeMap, BTreeSet};
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
    /// Each side's results (render draws both into each figure).
    pub ra: ExperimentResults,
    pub rb: ExperimentResults,
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

/// What [`previous_version`] reads once per command: every stored version of
/// each experiment, and the code version of each stored task.
pub struct History {
    versions: BTreeMap<String, Vec<i64>>,
    code: BTreeMap<String, String>,
}

impl History {
    pub async fn read(store: &Store) -> anyhow::Result<History> {
        let mut versions: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for e in store.experiments().await? {
            versions.entry(e.id).or_default().push(e.version);
        }
        Ok(History {
            versions,
            code: super::code_versions(store).await?,
        })
    }
}

/// The previous stored version of experiment `id` against `version` (the one
/// the index shows), at `fidelity`; `None` when the store holds no earlier
/// version, or none with results at this fidelity.
pub async fn previous_version(
    store: &Store,
    registry: &Registry,
    history: &History,
    id: &str,
    version: i64,
    fidelity: Fidelity,
) -> anyhow::Result<Option<Comparison>> {
    let Some(prev) = history
        .versions
        .get(id)
        .and_then(|v| v.iter().filter(|x| **x < version).max())
    else {
        return Ok(None);
    };
    let (a, b) = (format!("{id}@{prev}"), format!("{id}@{version}"));
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
            return Ok(None);
        }
    };
    join(ra, rb, &[], &history.code, fidelity).map(Some)
}
