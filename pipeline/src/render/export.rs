//! `repro export`: tidy rows (one per point, series and metric) of the
//! latest version of each selected experiment, in sweep order.

use crate::manifest::{unknown_id_message, Manifest};
use crate::measure::{collect_fidelity, stored_manifests};
use crate::store_open::open_existing_store;
use crate::InputError;
use anyhow::bail;
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use store::Store;

/// The `solver` column of rows that carry a paper's printed numbers.
const REFERENCE_SOLVER: &str = "reference_data";

/// `repro export --format csv`: tidy rows of the latest version of each (selected) experiment.
pub async fn export(
    store_loc: &str,
    ids: &[String],
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Vec<reports::TidyRow>> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored_manifests(&store, registry).await?;
    let registry = &crate::manifest::with_declared(registry, &manifests);
    for id in ids {
        if !manifests.iter().any(|m| &m.id == id) {
            let known: Vec<String> = manifests.iter().map(|m| m.id.clone()).collect();
            bail!(InputError(unknown_id_message(
                &format!("no experiment `{id}` in the store {store_loc}"),
                id,
                &known
            )));
        }
    }
    let code = code_versions(&store).await?;
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for m in manifests
        .iter()
        .filter(|m| ids.is_empty() || ids.contains(&m.id))
    {
        let r = match collect_fidelity(&store, m, registry, fidelity).await {
            Ok(r) => r,
            // Exporting everything skips what was never run at this fidelity.
            Err(e) if ids.is_empty() && e.is::<InputError>() => {
                skipped.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        for ((pi, series, metric), a) in &r.values {
            // A name that is no series is one of the manifest's
            // `reference_data` entries (a paper's printed numbers), which the
            // measure stage joins in like a series.
            let solver = match m.series(series) {
                Some(s) => s.solver.clone(),
                None => REFERENCE_SOLVER.to_string(),
            };
            let (fidelity, code_version) = task_provenance(&r, *pi, series, &code);
            rows.push(reports::TidyRow {
                experiment: m.id.clone(),
                version: m.version,
                series: series.clone(),
                solver,
                point: m.points.get(*pi).map(|p| p.json()).unwrap_or_default(),
                metric: metric.clone(),
                value: a.value,
                half_width: a.half_width,
                n: a.n,
                status: r
                    .status
                    .get(&(*pi, series.clone()))
                    .map_or("done", |s| s.as_str())
                    .to_string(),
                fidelity,
                code_version,
            });
        }
    }
    if rows.is_empty() && !skipped.is_empty() {
        return Err(InputError(format!(
            "nothing to export at {} fidelity: {}",
            fidelity.as_str(),
            skipped.join("; ")
        ))
        .into());
    }
    for why in &skipped {
        tracing::info!("skipped: {why}");
    }
    // Sweep order, then series and metric, so exports diff cleanly.
    rows.sort_by(|a, b| {
        (
            a.experiment.as_str(),
            point_order(&manifests, a),
            a.series.as_str(),
            a.metric.as_str(),
        )
            .cmp(&(
                b.experiment.as_str(),
                point_order(&manifests, b),
                b.series.as_str(),
                b.metric.as_str(),
            ))
    });
    store.close().await;
    Ok(rows)
}

pub fn point_order(ms: &[Manifest], r: &reports::TidyRow) -> usize {
    ms.iter()
        .find(|m| m.id == r.experiment)
        .and_then(|m| m.points.iter().position(|p| p.json() == r.point))
        .unwrap_or(usize::MAX)
}

/// Task key -> the code version of the first run that recorded the task.
pub async fn code_versions(store: &Store) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for run in store.runs().await? {
        for key in store.run_task_keys(run.id).await? {
            out.entry(key).or_insert_with(|| run.code_version.clone());
        }
    }
    Ok(out)
}

/// The fidelity and code version of the tasks behind a (point, series): those
/// of its first replication; empty for reference data and unrecorded tasks.
pub fn task_provenance(
    r: &crate::measure::ExperimentResults,
    point: usize,
    series: &str,
    code: &BTreeMap<String, String>,
) -> (String, String) {
    let key = r
        .keys
        .get(&(point, series.to_string()))
        .and_then(|k| k.first());
    let fidelity = key
        .and_then(|k| r.tasks.get(k))
        .map_or(String::new(), |t| t.fidelity.clone());
    let code_version = key.and_then(|k| code.get(k)).cloned().unwrap_or_default();
    (fidelity, code_version)
}
