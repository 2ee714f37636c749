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

/// At most this many tasks are claimed, or results stored, in one
/// transaction; the local executor claims models (milliseconds each, about a
/// claim's own cost) and short simulations ([`Lengths`]) this many at a time
/// and other simulations one per free slot, so that runs sharing a store
/// split the long tasks between them as evenly as before.
pub(crate) const BATCH: usize = 64;

/// A simulation that took at most this long is short: claiming it alone
/// costs about as much as running it.
const SHORT_MS: f64 = 20.0;

/// How long the tasks of each simulation solver took in this run, so that
/// short ones are claimed in batches like models (issue 35: 3,864 quick
/// multicluster.sim sweep points outside their series' `loads` end at once,
/// and a claim each cost about a millisecond). A solver's simulations are
/// batched once most of its tasks that finished in this run were short;
/// its first ones are claimed one per free slot, as every simulation was.
#[derive(Default)]
pub(crate) struct Lengths(Mutex<std::collections::HashMap<String, (u32, u32)>>);

impl Lengths {
    /// Notes that a task of `solver` took `wall_ms`.
    pub(crate) fn record(&self, solver: &str, wall_ms: f64) {
        let mut m = lock(&self.0);
        let (short, long) = m.entry(solver.to_string()).or_default();
        if wall_ms <= SHORT_MS {
            *short += 1;
        } else {
            *long += 1;
        }
    }

    /// Whether `task` is claimed with its neighbours: a model, or a
    /// simulation of a solver whose tasks in this run were mostly short.
    pub(crate) fn batched(&self, task: &Task) -> bool {
        task.kind == Kind::Analytic
            || lock(&self.0)
                .get(&*task.solver)
                .is_some_and(|(short, long)| short > long)
    }
}

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

    /// Claims `tasks` in one store transaction (issue 35: a claim write per
    /// task cost a quick check 8 s of system time), each under its own
    /// lease; a holder that is a process of this machine that no longer
    /// exists (killed before its lease ran out) is taken over at once. The
    /// turns are in the order of `tasks`.
    pub(crate) async fn claim(
        &self,
        registry: &Registry,
        tasks: &[Task],
    ) -> anyhow::Result<Vec<Turn>> {
        let items: Vec<Enqueue> = tasks.iter().map(|t| enqueue(registry, t)).collect();
        let what = || match tasks {
            [t] => format!("claiming task {}", t.key),
            _ => format!("claiming {} tasks", tasks.len()),
        };
        let mut found = self
            .store
            .claim_keys(self.run, &items, &self.worker, LEASE, self.force, None)
            .await
            .with_context(what)?;
        // Keys held by processes that are gone: claimed again, naming each.
        let mut gone: Vec<String> = found
            .iter()
            .filter_map(|f| match f {
                KeyClaim::Busy(w) if process_gone(w) => Some(w.clone()),
                _ => None,
            })
            .collect();
        gone.sort();
        gone.dedup();
        for dead in gone {
            let at: Vec<usize> = (0..found.len())
                .filter(|&i| matches!(&found[i], KeyClaim::Busy(w) if *w == dead))
                .collect();
            let again: Vec<Enqueue> = at.iter().map(|&i| items[i].clone()).collect();
            let claims = self
                .store
                .claim_keys(
                    self.run,
                    &again,
                    &self.worker,
                    LEASE,
                    self.force,
                    Some(&dead),
                )
                .await
                .with_context(what)?;
            for (i, c) in at.into_iter().zip(claims) {
                found[i] = c;
            }
        }
        // A key whose result another run stored since this one planned is
        // `Done` (the store reads the cache in the claim's transaction).
        let mut turns = Vec::with_capacity(found.len());
        let mut held = lock(&self.held);
        for f in found {
            turns.push(match f {
                KeyClaim::Claimed(claimed, inserted) => {
                    held.insert(claimed.task_key.clone());
                    Turn::Run(Held { claimed, inserted })
                }
                KeyClaim::Done => Turn::Done,
                KeyClaim::Busy(w) => Turn::Busy(w),
            });
        }
        Ok(turns)
    }

    /// Stores held tasks' results with their rows, in one transaction; for
    /// each, `false` (nothing stored) if the claim was lost to another
    /// process meanwhile.
    pub(crate) async fn finish(&self, done: &[(&Held, &TaskRecord)]) -> anyhow::Result<Vec<bool>> {
        let items: Vec<_> = done
            .iter()
            .map(|(h, r)| (&h.claimed, h.inserted, *r))
            .collect();
        let stored = self
            .store
            .finish_keys(&items, &self.worker)
            .await
            .with_context(|| match done {
                [(_, r)] => format!("storing task {}", r.key),
                _ => format!("storing {} tasks", done.len()),
            })?;
        let mut held = lock(&self.held);
        for (h, _) in done {
            held.remove(&h.claimed.task_key);
        }
        Ok(stored)
    }

    /// Those of `keys` whose result is in the store (none with `--force`,
    /// which runs every task again).
    async fn stored_among(&self, keys: &[String]) -> anyhow::Result<HashSet<String>> {
        if self.force || keys.is_empty() {
            return Ok(HashSet::new());
        }
        self.store
            .cached_keys(keys)
            .await
            .context("reading the cache")
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
        let stored = self.stored_among(&keys).await?;
        let mut out = Vec::new();
        let (done, left): (Vec<Task>, Vec<Task>) = std::mem::take(busy)
            .into_iter()
            .partition(|t| stored.contains(&t.key));
        out.extend(done.into_iter().map(|t| (t, None)));
        for chunk in left.chunks(BATCH) {
            for (task, turn) in chunk.iter().zip(self.claim(registry, chunk).await?) {
                match turn {
                    Turn::Run(held) => out.push((task.clone(), Some(held))),
                    Turn::Done => out.push((task.clone(), None)),
                    Turn::Busy(_) => busy.push(task.clone()),
                }
            }
        }
        Ok(out)
    }
}

/// The queue row of `task`: the queue executor's spec, so a worker may take
/// over a task whose local run was killed.
fn enqueue(registry: &Registry, task: &Task) -> Enqueue {
    Enqueue {
        task_key: task.key.clone(),
        spec: super::programs::spec(registry, task),
        priority: match task.kind {
            Kind::Simulation => 1e3,
            Kind::Analytic => 0.0,
        },
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
