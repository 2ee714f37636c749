//! The task records one command has read, by key, so that measuring the
//! same experiments again (each round of replications of `run`/`check`,
//! then the pages; the rounds `collect_at` replays) reads each stored
//! result from the store once instead of once per pass.
//!
//! The outcomes a run stored itself are kept as it wrote them ([`Records::keep`],
//! in the form the store reads them back), so they are not read at all.
//!
//! A task's series (most of a store's rows) are read only where a figure
//! draws them (`series_of` of [`Records::read`]); the other records are
//! read without them (`series` empty) and read again whole if a later pass
//! draws them.
//!
//! Only outcomes are kept (done, saturated, undefined): a task key names its
//! solver version, parameters and seed, so its outcome is what any run
//! stores for it (apart from its wall time), while a failed task may be
//! retried and stored again by another run sharing the store, and a missing
//! one may appear; those are read again each time.

use anyhow::Context;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use store::{Store, TaskRecord, TaskStatus};

/// Outcomes read from the store, by task key, each with whether its series
/// were read.
#[derive(Debug, Default)]
pub struct Records(HashMap<String, (Arc<TaskRecord>, bool)>);

impl Records {
    pub fn new() -> Self {
        Self::default()
    }

    /// Keeps the outcomes among `stored` (records as the store reads them
    /// back, `Store::as_read_back`): what an executor just stored.
    pub fn keep(&mut self, stored: Vec<TaskRecord>) {
        for t in stored {
            if t.status != TaskStatus::Failed {
                self.0.insert(t.key.clone(), (Arc::new(t), true));
            }
        }
    }

    /// The stored records of `keys` (sorted, unique), read from the store
    /// where this cache does not hold them; unknown keys are absent. Only
    /// the keys in `series_of` are sure to have their series.
    pub async fn read(
        &mut self,
        store: &Store,
        keys: &[String],
        series_of: &HashSet<&String>,
    ) -> anyhow::Result<BTreeMap<String, Arc<TaskRecord>>> {
        let (mut whole, mut bare) = (Vec::new(), Vec::new());
        for k in keys {
            let drawn = series_of.contains(k);
            match self.0.get(k) {
                Some((_, with_series)) if *with_series || !drawn => {}
                _ if drawn => whole.push(k.clone()),
                _ => bare.push(k.clone()),
            }
        }
        let mut out = BTreeMap::new();
        for (missing, series) in [(whole, true), (bare, false)] {
            if missing.is_empty() {
                continue;
            }
            let read = if series {
                store.tasks(&missing).await
            } else {
                store.tasks_without_series(&missing).await
            };
            for t in read.context("reading task results")? {
                if t.status == TaskStatus::Failed {
                    out.insert(t.key.clone(), Arc::new(t));
                } else {
                    self.0.insert(t.key.clone(), (Arc::new(t), series));
                }
            }
        }
        for k in keys {
            if let Some((t, _)) = self.0.get(k) {
                out.insert(k.clone(), Arc::clone(t));
            }
        }
        Ok(out)
    }
}
