//! Pull-based execution through the store's task queue (see `store::queue`).
//!
//! `repro run --executor queue|slurm` plans as usual, enqueues the tasks the
//! store does not hold, starts workers through a [`Launcher`] (in this process
//! for `queue`, an `sbatch` job array for `slurm`: `launch/`; anyone may add
//! more with `repro worker`),
//! follows their progress in the store, and then measures and renders like a
//! local run. A worker claims one task at a time under a lease, runs it with
//! the same code and seed as the local executor ([`exec::run_task`]), renews
//! the lease while it runs, and commits the result together with the queue
//! row. It exits when nothing is pending or running any more: while another
//! worker still holds a task it waits, because that worker may die and its
//! task must then be reclaimed by someone.

use crate::execute::launch::{Launcher, Start};
use crate::execute::{self as exec, ExecSummary};
use crate::plan::{Plan, Task, TaskFidelity};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};
use solvers::{Kind, Registry, SolveError};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{Claimed, Enqueue, QueueState, Store, TaskRecord, TaskStatus, WorkerId};

/// Default lease: long enough that a busy node's renewals (every third of
/// it) never miss it, short enough that a lost task restarts within a minute.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);
/// How often an idle worker or a waiting run looks at the queue again.
const POLL: Duration = Duration::from_millis(500);

/// What a worker needs to run a task, stored as JSON in the queue row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub solver: String,
    pub solver_version: u32,
    pub kind: Kind,
    pub params: serde_json::Value,
    pub seed: u64,
    pub replication: u32,
    pub fidelity: TaskFidelity,
    /// A declared program's definition ([`super::programs`]), which the
    /// worker rebuilds the solver from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<serde_json::Value>,
}

impl TaskSpec {
    pub fn of(t: &Task) -> TaskSpec {
        TaskSpec {
            solver: t.solver.to_string(),
            solver_version: t.solver_version,
            kind: t.kind,
            params: t.params_value(),
            seed: t.seed,
            replication: t.replication,
            fidelity: t.fidelity,
            program: None,
        }
    }

    pub fn into_task(self, key: String) -> Task {
        Task {
            key,
            solver: self.solver.into(),
            solver_version: self.solver_version,
            kind: self.kind,
            // serde_json's maps are ordered, so this is the planner's
            // canonical text again (the key is not recomputed from it).
            params: self.params.to_string(),
            seed: self.seed,
            replication: self.replication,
            fidelity: self.fidelity,
        }
    }
}

/// The task of a queue row; `None` if its spec does not parse (a row written
/// by another version of repro, say with a fidelity this one does not plan).
pub fn task_of(key: &str, spec: &str) -> Option<Task> {
    serde_json::from_str::<TaskSpec>(spec)
        .ok()
        .map(|s| s.into_task(key.to_string()))
}

/// This process's worker name: host and pid, plus the Slurm job and array
/// index when Slurm started it; `slot` tells apart the workers of one process.
pub fn worker_id(slot: usize) -> WorkerId {
    let mut id = format!("{}:{}", crate::shared::host(), std::process::id());
    if let Ok(job) = std::env::var("SLURM_ARRAY_JOB_ID").or_else(|_| std::env::var("SLURM_JOB_ID"))
    {
        id.push_str(&format!(" slurm {job}"));
        if let Ok(i) = std::env::var("SLURM_ARRAY_TASK_ID") {
            id.push_str(&format!("_{i}"));
        }
    }
    if slot > 0 {
        id.push_str(&format!(" #{slot}"));
    }
    WorkerId(id)
}

#[derive(Debug, Clone)]
pub struct WorkerOptions {
    pub lease: Duration,
    /// Stop after this many tasks (tests, and workers that must make room).
    pub max_tasks: Option<usize>,
    /// Set: finish the task in hand, then stop instead of claiming another
    /// (a run's own workers, once its tasks are done, leave other runs' to theirs).
    pub drain: Arc<AtomicBool>,
}

impl Default for WorkerOptions {
    fn default() -> Self {
        WorkerOptions {
            lease: DEFAULT_LEASE,
            max_tasks: None,
            drain: Arc::new(AtomicBool::new(false)),
        }
    }
}

/// What one worker did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WorkerSummary {
    /// Results committed (done, saturated, undefined or failed).
    pub completed: usize,
    pub failed: usize,
    /// Tasks whose lease was lost (taken over by another worker): nothing stored.
    pub lost: usize,
}

/// Runs claimed tasks until the queue has nothing pending or running, `cancel`
/// is set (a task in flight is then handed back) or `max_tasks` is reached.
pub async fn work(
    store: &Store,
    registry: &Registry,
    id: &WorkerId,
    opts: &WorkerOptions,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<WorkerSummary> {
    let mut summary = WorkerSummary::default();
    loop {
        if cancel.load(Ordering::Relaxed)
            || opts.drain.load(Ordering::Relaxed)
            || opts.max_tasks.is_some_and(|m| summary.completed >= m)
        {
            return Ok(summary);
        }
        let Some(claimed) = store.claim(id, opts.lease).await? else {
            // Nothing claimable. Another worker's task may still come back
            // (its worker may die), so leave only when nothing is running.
            if store.queue_counts(None).await?.open() == 0 {
                return Ok(summary);
            }
            tokio::time::sleep(POLL).await;
            continue;
        };
        tracing::debug!(worker = %id, key = %claimed.task_key, attempt = claimed.attempt, "claimed");
        match run_claimed(store, registry, id, opts, &claimed, cancel.clone()).await? {
            Finished::Stored { failed } => {
                summary.completed += 1;
                summary.failed += usize::from(failed);
            }
            Finished::Lost => summary.lost += 1,
            Finished::Released => return Ok(summary),
        }
    }
}

enum Finished {
    Stored { failed: bool },
    Lost,
    Released,
}

async fn run_claimed(
    store: &Store,
    registry: &Registry,
    id: &WorkerId,
    opts: &WorkerOptions,
    claimed: &Claimed,
    cancel: Arc<AtomicBool>,
) -> anyhow::Result<Finished> {
    let Some(task) = task_of(&claimed.task_key, &claimed.spec) else {
        let rec = store::TaskRecord {
            key: claimed.task_key.clone(),
            solver: "?".into(),
            solver_version: 0,
            params: "{}".into(),
            seed: 0,
            fidelity: "any".into(),
            status: TaskStatus::Failed,
            wall_ms: 0.0,
            error: Some(format!(
                "the queued task does not parse ({}); it was enqueued by another version of repro",
                claimed.spec
            )),
            metrics: Vec::new(),
            series: Vec::new(),
        };
        store.complete(claimed, id, &rec).await?;
        return Ok(Finished::Stored { failed: true });
    };
    // The solvers this worker runs the task with: its own, or the declared
    // program the task carries, of the version the task was planned for.
    let registry = &match super::programs::registry_for(registry, &claimed.spec, &task) {
        Ok(r) => r,
        Err(e) => {
            let rec = exec::record(&task, &Err(e), 0.0);
            let stored = store.complete(claimed, id, &rec).await?;
            return Ok(if stored {
                Finished::Stored { failed: true }
            } else {
                Finished::Lost
            });
        }
    };

    let task_cancel = Arc::new(AtomicBool::new(false));
    let handle = {
        let registry = registry.clone();
        let task = task.clone();
        let task_cancel = task_cancel.clone();
        tokio::task::spawn_blocking(move || exec::run_task(&registry, &task, task_cancel))
    };
    tokio::pin!(handle);
    // Ticks often enough to hand a task back soon after SIGTERM (Slurm kills
    // for good a few seconds later); the lease is renewed every third of it.
    let mut tick = tokio::time::interval(Duration::from_millis(200));
    let mut renewed = Instant::now();
    let mut lost = false;
    let mut released = false;
    let (result, wall) = loop {
        tokio::select! {
            r = &mut handle => break r.context("task thread")?,
            _ = tick.tick() => {
                if lost || released {
                    continue;
                }
                if cancel.load(Ordering::Relaxed) {
                    task_cancel.store(true, Ordering::Relaxed);
                    released = true;
                } else if renewed.elapsed() >= opts.lease / 3 {
                    renewed = Instant::now();
                    if !store.renew(&claimed.task_key, id, opts.lease).await? {
                        tracing::warn!(worker = %id, key = %claimed.task_key, "lease lost; abandoning the task");
                        task_cancel.store(true, Ordering::Relaxed);
                        lost = true;
                    }
                }
            }
        }
    };
    if lost {
        return Ok(Finished::Lost);
    }
    if released || matches!(result, Err(SolveError::Cancelled)) {
        store.release(&claimed.task_key, id).await?;
        return Ok(Finished::Released);
    }
    let rec = exec::record(&task, &result, wall);
    let failed = rec.status == TaskStatus::Failed;
    if store
        .complete(claimed, id, &rec)
        .await
        .with_context(|| format!("storing task {}", task.key))?
    {
        Ok(Finished::Stored { failed })
    } else {
        tracing::warn!(worker = %id, key = %claimed.task_key, "lease lost before the result was stored; discarded");
        Ok(Finished::Lost)
    }
}

/// Starts `n` workers in this process; they stop when the queue is empty or
/// `cancel` is set.
pub fn spawn_workers(
    store: &Store,
    registry: &Registry,
    n: usize,
    opts: &WorkerOptions,
    cancel: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<anyhow::Result<WorkerSummary>>> {
    (0..n)
        .map(|slot| {
            let (store, registry, opts, cancel) = (
                store.clone(),
                registry.clone(),
                opts.clone(),
                cancel.clone(),
            );
            tokio::spawn(async move {
                let id = worker_id(slot + 1);
                work(&store, &registry, &id, &opts, cancel).await
            })
        })
        .collect()
}

/// `--executor queue` and `--executor slurm`: the tasks go on the store's
/// queue and workers started by `launcher` (in this process, or an sbatch
/// job array) run them.
#[derive(Debug, Clone)]
pub struct Queued {
    pub force: bool,
    pub progress: bool,
    pub launcher: Arc<dyn Launcher>,
    /// Return once the workers are started, without waiting (`--detach`).
    pub detach: bool,
}

/// Enqueues the plan's tasks that must run, launches workers and waits for
/// the queue to finish them (unless `detach`). The summary has the same
/// meaning as the local executor's.
pub async fn execute_queued(
    plan: &Plan,
    registry: &Registry,
    store: &Store,
    run_id: i64,
    q: &Queued,
) -> anyhow::Result<(ExecSummary, Option<String>, Vec<TaskRecord>)> {
    let Queued {
        force,
        progress,
        launcher,
        detach,
    } = q.clone();
    let start = Instant::now();
    launcher.check_store(store)?;
    let (todo, cached) = exec::todo(plan, store, force).await?;
    let walls = store
        .wall_times(&todo.iter().map(|t| t.key.clone()).collect::<Vec<_>>())
        .await?;
    let items: Vec<Enqueue> = todo
        .iter()
        .map(|t| Enqueue {
            task_key: t.key.clone(),
            spec: super::programs::spec(registry, t),
            priority: walls.get(&t.key).copied().unwrap_or(match t.kind {
                Kind::Simulation => 1e3,
                Kind::Analytic => 0.0,
            }),
        })
        .collect();
    let fresh = store.enqueue(run_id, &items, force).await?;
    tracing::info!(
        tasks = todo.len(),
        newly_queued = fresh,
        "enqueued (tasks already queued by another run are shared)"
    );
    let keys: Vec<String> = todo.iter().map(|t| t.key.clone()).collect();
    let mut summary = ExecSummary {
        total: plan.tasks.len(),
        cached,
        ..Default::default()
    };
    if todo.is_empty() {
        summary.wall = start.elapsed();
        return Ok((summary, None, Vec::new()));
    }

    let cancel = Arc::new(AtomicBool::new(false));
    let worker_opts = WorkerOptions::default();
    let submitted = Instant::now();
    let launched = launcher.launch(Start {
        store,
        registry,
        tasks: todo.len(),
        worker_options: &worker_opts,
        cancel: cancel.clone(),
    })?;
    let job = launched.job().map(str::to_string);
    if detach {
        summary.wall = start.elapsed();
        return Ok((summary, Some(launched.workers()), Vec::new()));
    }

    let bar = if progress {
        let b =
            ProgressBar::with_draw_target(Some(summary.total as u64), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} tasks ({msg}) ETA {eta}",
            )
            .expect("valid template"),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    } else {
        ProgressBar::hidden()
    };
    let mut ctrl_c = Box::pin(tokio::signal::ctrl_c());
    let mut first_start: Option<Duration> = None;
    let mut last_launcher_check = Instant::now();
    loop {
        let c = store.queue_counts(Some(&keys)).await?;
        if first_start.is_none() && (c.running > 0 || c.done + c.failed > 0) {
            let d = submitted.elapsed();
            first_start = Some(d);
            if let Some(line) = launched.first_start(d) {
                bar.suspend(|| eprintln!("{line}"));
            }
        }
        bar.set_position((cached + c.done + c.failed) as u64);
        bar.set_message(format!(
            "{cached} cached, {} running, {} done, {} failed",
            c.running, c.done, c.failed
        ));
        if c.open() == 0 {
            break;
        }
        if last_launcher_check.elapsed() > Duration::from_secs(5) {
            last_launcher_check = Instant::now();
            if launched.ended()? {
                // Give the last commits a moment to become visible.
                tokio::time::sleep(POLL).await;
                let c = store.queue_counts(Some(&keys)).await?;
                if c.open() > 0 {
                    bar.finish_and_clear();
                    return Err(launched.ended_early(&c));
                }
                continue;
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(POLL) => {}
            _ = &mut ctrl_c => {
                cancel.store(true, Ordering::Relaxed);
                summary.cancelled = true;
                let said = launched.interrupt();
                bar.suspend(|| eprintln!("{said}"));
                break;
            }
        }
    }
    worker_opts.drain.store(true, Ordering::Relaxed);
    for w in launched.into_local() {
        match w.await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(e.context("a worker failed")),
            Err(e) => return Err(anyhow::anyhow!("a worker panicked: {e}")),
        }
    }
    bar.finish_and_clear();

    // The outcome of each task as stored, whichever worker ran it.
    let records = store.tasks(&keys).await?;
    let by_key: std::collections::HashMap<&str, &Task> =
        todo.iter().map(|t| (t.key.as_str(), t)).collect();
    for r in &records {
        let Some(t) = by_key.get(r.key.as_str()) else {
            continue;
        };
        match r.status {
            TaskStatus::Saturated => summary.saturated += 1,
            TaskStatus::Undefined => summary.undefined += 1,
            TaskStatus::Failed => summary
                .failed
                .push(((*t).clone(), r.error.clone().unwrap_or_default())),
            TaskStatus::Done => {}
        }
    }
    // Tasks failed by the queue itself (their workers were lost too often).
    let stored: HashSet<&str> = records.iter().map(|r| r.key.as_str()).collect();
    for row in store.queue_rows(&[QueueState::Failed]).await? {
        if let Some(t) = by_key.get(row.task_key.as_str()) {
            if !stored.contains(row.task_key.as_str()) {
                summary
                    .failed
                    .push(((*t).clone(), row.error.unwrap_or_default()));
            }
        }
    }
    summary.executed = records.len().max(summary.failed.len());
    summary.wall = start.elapsed();
    // Read from the store: as it reads them back.
    let outcomes = records
        .into_iter()
        .filter(|r| r.status != TaskStatus::Failed)
        .collect();
    Ok((summary, job, outcomes))
}
