//! Runs that share a store share their work (issue 32 item 6: two
//! simultaneous `repro run` on one store each executed 94-105 of the same
//! 105 tasks).
//!
//! Before it starts a task, the local executor claims the task's key in the
//! store's queue table, under a lease it renews while the task runs, exactly
//! as a queue worker does (`store::Store::claim_key`). A key another process
//! holds is set aside and waited for: when its result is stored it counts as
//! cached; when its holder is gone (its lease expired, or a process of this
//! machine that no longer exists) this run claims and runs it. The row a
//! claim inserts is removed in the transaction that stores the result, so a
//! local run leaves nothing in the queue; its spec is the queue executor's,
//! so a worker may also take over a task whose local run was killed.

use crate::plan::Task;
use anyhow::Context;
use solvers::{Kind, Registry};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use store::{Claimed, Enqueue, KeyClaim, Store, TaskRecord, WorkerId};

/// How long a claim holds without renewal; renewed every third of it.
const LEASE: Duration = Duration::from_secs(30);

/// How often a run waiting for tasks another process runs looks at the store
/// (`REPRO_SHARE_POLL_MS` overrides it, for tests).
fn poll() -> Duration {
    std::env::var("REPRO_SHARE_POLL_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(Duration::from_secs(1), Duration::from_millis)
}

/// A task this run holds in the queue table.
#[derive(Debug)]
pub(crate) struct Held {
    claimed: Claimed,
    inserted: bool,
}

/// What a claim found.
pub(crate) enum Turn {
    /// This run holds the task: run it, then [`Sharing::finish`] it.
    Run(Held),
    /// Its result is stored (another run finished it).
    Done,
    /// Another process runs it (its worker name).
    Busy(String),
}

/// This run's claims in one store, with the task renewing their leases.
pub(crate) struct Sharing {
    store: Store,
    run: i64,
    force: bool,
    worker: WorkerId,
    held: Arc<Mutex<HashSet<String>>>,
    keeper: tokio::task::JoinHandle<()>,
}

impl Drop for Sharing {
    fn drop(&mut self) {
        self.keeper.abort();
    }
}

impl Sharing {
    pub(crate) fn new(store: &Store, run: i64, force: bool) -> Self {
        let worker = WorkerId(format!("{} run {run}", super::queue::worker_id(0)));
        let held: Arc<Mutex<HashSet<String>>> = Arc::default();
        let keeper = {
            let (store, worker, held) = (store.clone(), worker.clone(), held.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(LEASE / 3).await;
                    let keys: Vec<String> = lock(&held).iter().cloned().collect();
                    for key in keys {
                        if let Err(e) = store.renew(&key, &worker, LEASE).await {
                            tracing::warn!(%key, error = %e, "renewing the claim of a task");
                        }
                    }
                }
            })
        };
        Sharing {
            store: store.clone(),
            run,
            force,
            worker,
            held,
            keeper,
        }
    }

    /// Claims `task`; a holder that is a process of this machine that no
    /// longer exists (killed before its lease ran out) is taken over at once.
    pub(crate) async fn claim(&self, registry: &Registry, task: &Task) -> anyhow::Result<Turn> {
        let item = Enqueue {
            task_key: task.key.clone(),
            spec: super::programs::spec(registry, task),
            priority: match task.kind {
                Kind::Simulation => 1e3,
                Kind::Analytic => 0.0,
            },
        };
        let mut dead: Option<String> = None;
        loop {
            let found = self
                .store
                .claim_key(
                    self.run,
                    &item,
                    &self.worker,
                    LEASE,
                    self.force,
                    dead.as_deref(),
                )
                .await
                .with_context(|| format!("claiming task {}", task.key))?;
            return Ok(match found {
                KeyClaim::Claimed(claimed, inserted) => {
                    lock(&self.held).insert(task.key.clone());
                    let held = Held { claimed, inserted };
                    // Finished by another run since this one planned: its
                    // row is gone with the result stored. Looked at after
                    // claiming, so a result stored meanwhile is seen.
                    if !self.force && self.is_stored(&task.key).await? {
                        self.release(&held).await?;
                        Turn::Done
                    } else {
                        Turn::Run(held)
                    }
                }
                KeyClaim::Done => Turn::Done,
                KeyClaim::Busy(w) if dead.is_none() && process_gone(&w) => {
                    dead = Some(w);
                    continue;
                }
                KeyClaim::Busy(w) => Turn::Busy(w),
            });
        }
    }

    async fn is_stored(&self, key: &str) -> anyhow::Result<bool> {
        let keys = [key.to_string()];
        let stored = self.store.cached_keys(&keys).await;
        Ok(stored.context("reading the cache")?.contains(key))
    }

    /// Stores a held task's result with its row; `false` (nothing stored) if
    /// the claim was lost to another process meanwhile.
    pub(crate) async fn finish(&self, held: &Held, rec: &TaskRecord) -> anyhow::Result<bool> {
        let stored = self
            .store
            .finish_key(&held.claimed, held.inserted, &self.worker, rec)
            .await
            .with_context(|| format!("storing task {}", rec.key))?;
        lock(&self.held).remove(&held.claimed.task_key);
        Ok(stored)
    }

    /// Gives a held task back (cancelled before it finished).
    pub(crate) async fn release(&self, held: &Held) -> anyhow::Result<()> {
        lock(&self.held).remove(&held.claimed.task_key);
        self.store
            .release_key(&held.claimed.task_key, held.inserted, &self.worker)
            .await
            .with_context(|| format!("releasing task {}", held.claimed.task_key))
    }

    /// One look at the tasks other processes held when this run wanted
    /// them, after a pause: returns those whose result is now stored (with
    /// `None`) and those whose holder is gone, now claimed (with their
    /// claim); the others stay in `busy`.
    pub(crate) async fn poll_busy(
        &self,
        registry: &Registry,
        busy: &mut Vec<Task>,
    ) -> anyhow::Result<Vec<(Task, Option<Held>)>> {
        tokio::time::sleep(poll()).await;
        let keys: Vec<String> = busy.iter().map(|t| t.key.clone()).collect();
        let stored = if self.force {
            HashSet::new()
        } else {
            self.store
                .cached_keys(&keys)
                .await
                .context("reading the cache")?
        };
        let mut out = Vec::new();
        for task in std::mem::take(busy) {
            if stored.contains(&task.key) {
                out.push((task, None));
                continue;
            }
            match self.claim(registry, &task).await? {
                Turn::Run(held) => out.push((task, Some(held))),
                Turn::Done => out.push((task, None)),
                Turn::Busy(_) => busy.push(task),
            }
        }
        Ok(out)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `worker` (a name from `queue::worker_id`: `host:pid ...`) is a
/// process of this machine that no longer exists. Unknown (another host, no
/// `/proc`) is `false`: the lease decides then.
fn process_gone(worker: &str) -> bool {
    let Some(rest) = worker.strip_prefix(&format!("{}:", crate::shared::host())) else {
        return false;
    };
    let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    let proc = std::path::Path::new("/proc");
    pid != std::process::id() && proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_of_this_machine_that_ended_is_gone() {
        let host = crate::shared::host();
        let me = format!("{host}:{} run 1", std::process::id());
        assert!(!process_gone(&me));
        // Linux pids stay below 2^22.
        assert!(process_gone(&format!("{host}:4294967 run 1")));
        assert!(!process_gone("elsewhere.example:1 run 1"));
        assert!(!process_gone(&format!("{host}:x")));
    }
}
