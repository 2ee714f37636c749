//! `repro export`: tidy rows (one per point, series and metric) of the
//! latest version of each selected experiment, in sweep order.

use crate::manifest::{unknown_id_message, Manifest};
use crate::measure::{collect_fidelity, stored_manifests};
use crate::store_open::open_existing_store;
use crate::InputError;
use anyhow::bail;
use solvers::{Fidelity, Registry};

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
