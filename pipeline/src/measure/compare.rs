//! `repro compare`: two experiment versions or variants joined on point,
//! series and metric.

use super::{collect_fidelity, stored_manifest};
use crate::store_open::open_existing_store;
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;

/// One line of `repro compare`: the same (point, series, metric) in two experiment versions or variants.
#[derive(Debug, Clone)]
pub struct CompareRow {
    pub point: String,
    pub series: String,
    pub metric: String,
    pub a: Option<super::Agg>,
    pub b: Option<super::Agg>,
}

/// `repro compare A B`: two experiment versions (`id@1` vs `id@2`) or two variants
/// (different ids over the same axes) side by side, joined on point, series and metric.
pub async fn compare(
    store_loc: &str,
    a: &str,
    b: &str,
    metrics: &[String],
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Vec<CompareRow>> {
    let store = open_existing_store(store_loc).await?;
    let (ma, mb) = (
        stored_manifest(&store, registry, a).await?,
        stored_manifest(&store, registry, b).await?,
    );
    let (ra, rb) = (
        collect_fidelity(&store, &ma, registry, fidelity).await?,
        collect_fidelity(&store, &mb, registry, fidelity).await?,
    );
    store.close().await;
    let key = |r: &super::ExperimentResults| -> BTreeMap<(String, String, String), super::Agg> {
        r.values
            .iter()
            .map(|((pi, s, m), v)| {
                (
                    (
                        r.manifest
                            .points
                            .get(*pi)
                            .map(|p| p.json())
                            .unwrap_or_default(),
                        s.clone(),
                        m.clone(),
                    ),
                    *v,
                )
            })
            .collect()
    };
    let (ka, kb) = (key(&ra), key(&rb));
    let mut keys: Vec<&(String, String, String)> = ka.keys().chain(kb.keys()).collect();
    keys.sort();
    keys.dedup();
    let order = |p: &str| {
        ma.points
            .iter()
            .position(|x| x.json() == p)
            .or_else(|| {
                mb.points
                    .iter()
                    .position(|x| x.json() == p)
                    .map(|i| i + ma.points.len())
            })
            .unwrap_or(usize::MAX)
    };
    let mut rows: Vec<CompareRow> = keys
        .into_iter()
        .filter(|(_, _, m)| metrics.is_empty() || metrics.contains(m))
        .map(|k| CompareRow {
            point: k.0.clone(),
            series: k.1.clone(),
            metric: k.2.clone(),
            a: ka.get(k).copied(),
            b: kb.get(k).copied(),
        })
        .collect();
    rows.sort_by(|x, y| {
        (x.series.as_str(), x.metric.as_str(), order(&x.point)).cmp(&(
            y.series.as_str(),
            y.metric.as_str(),
            order(&y.point),
        ))
    });
    Ok(rows)
}
