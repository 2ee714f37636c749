//! The task records one command has read, by key, so that measuring the
//! same experiments again (each round of replications of `run`/`check`,
//! then the pages; the rounds `collect_at` replays) reads each stored
//! result from the store once instead of once per pass.
//!
//! The outcomes a run stored itself are kept as it wrote them ([`Records::keep`],
//! in the form the store reads them back), so they are not read at all.
//!
//! Only outcomes are kept (done, saturated, undefined): a task key names its
//! solver version, parameters and seed, so its outcome is what any run
//! stores for it (apart from its wall time), while a failed task may be
//! retried and stored again by another run sharing the store, and a missing
//! one may appear; those are read again each time.

use anyhow::Context;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use store::{Store, TaskRecord, TaskStatus};

/// Outcomes read from the store, by task key.
#[derive(Debug, Default)]
pub struct Records(HashMap<String, Arc<TaskRecord>>);

impl Records {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the outcomes among `stored` (records as the store reads them
    /// back, `Store::as_read_back`): what an executor just stored.
    pub fn keep(&mut self, stored: Vec<TaskRecord>) {
        for t in stored {
            if t.status != TaskStatus::Failed {
                self.0.insert(t.key.clone(), Arc::new(t));
            }
        }
    }

    /// The stored records of `keys` (sorted, unique), read from the store
    /// where this cache does not hold them; unknown keys are absent.
    pub async fn read(
        &mut self,
        store: &Store,
        keys: &[String],
    ) -> anyhow::Result<BTreeMap<String, Arc<TaskRecord>>> {
        let missing: Vec<String> = keys
            .iter()
            .filter(|k| !self.0.contains_key(*k))
            .cloned()
            .collect();
        let mut out = BTreeMap::new();
        if !missing.is_empty() {
            for t in store
                .tasks(&missing)
                .await
                .context("reading task results")?
            {
                if t.status == TaskStatus::Failed {
                    out.insert(t.key.clone(), Arc::new(t));
                } else {
                    self.0.insert(t.key.clone(), Arc::new(t));
                }
            }
        }
        for k in keys {
            if let Some(t) = self.0.get(k) {
                out.insert(k.clone(), Arc::clone(t));
            }
        }
        Ok(out)
    }
}
