//! `repro list`: each manifest's current and stored versions, and how many
//! of its tasks are cached at each fidelity.

use crate::manifest::{discover, load_or_input_error};
use crate::store_open::{open_existing_store, sqlite_file};
use crate::InputError;
use solvers::{Fidelity, Registry};
use std::path::Path;
use store::Store;

/// One line of `repro list`.
#[derive(Debug, Clone)]
pub struct ListEntry {
    pub id: String,
    pub version: i64,
    pub title: String,
    pub points: usize,
    pub tasks_full: usize,
    pub cached_full: usize,
    pub tasks_quick: usize,
    pub cached_quick: usize,
    /// Versions of this id in the store (what `repro compare ID@V` accepts).
    pub stored_versions: Vec<i64>,
}

pub async fn list(
    experiments_dir: &Path,
    targets: &[String],
    store_loc: &str,
    registry: &Registry,
) -> anyhow::Result<Vec<ListEntry>> {
    let paths = discover(targets, experiments_dir)?;
    let manifests = load_or_input_error(&paths, registry)?;
    let registry = &crate::manifest::with_declared(registry, &manifests);
    // Listing never creates a store: with none yet, nothing is cached.
    let store = match sqlite_file(store_loc) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_existing_store(store_loc).await?),
    };
    let stored = match &store {
        Some(s) => s.experiments().await?,
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for m in &manifests {
        let mut stored_versions: Vec<i64> = stored
            .iter()
            .filter(|e| e.id == m.id)
            .map(|e| e.version)
            .collect();
        stored_versions.sort_unstable();
        stored_versions.dedup();
        // One plan at a time, keeping only its keys: a manifest at the task
        // limit is listed within bounded memory.
        let keys = |fidelity| -> anyhow::Result<Vec<String>> {
            let p = super::plan(std::slice::from_ref(m), registry, fidelity)
                .map_err(|e| InputError(format!("error: {e}")))?;
            Ok(p.tasks.into_iter().map(|t| t.key).collect())
        };
        let kf = keys(Fidelity::Full)?;
        let cached_full = cached_count(store.as_ref(), &kf).await?;
        let tasks_full = kf.len();
        drop(kf);
        // Without simulations the quick plan is the full one (analytic tasks are
        // shared between profiles): no need to plan it again.
        let has_sim = m.series.iter().any(|s| {
            registry
                .get(&s.solver)
                .is_some_and(|x| x.kind() == solvers::Kind::Simulation)
        });
        let kq = if has_sim {
            keys(Fidelity::Quick)?
        } else {
            Vec::new()
        };
        let (tasks_quick, cached_quick) = if has_sim {
            (kq.len(), cached_count(store.as_ref(), &kq).await?)
        } else {
            (tasks_full, cached_full)
        };
        out.push(ListEntry {
            id: m.id.clone(),
            version: m.version,
            title: m.title.clone(),
            points: m.points.len(),
            tasks_full,
            cached_full,
            tasks_quick,
            cached_quick,
            stored_versions,
        });
    }
    if let Some(s) = store {
        s.close().await;
    }
    Ok(out)
}

pub async fn cached_count(store: Option<&Store>, keys: &[String]) -> anyhow::Result<usize> {
    Ok(match store {
        Some(s) => s.cached_keys(keys).await?.len(),
        None => 0,
    })
}
