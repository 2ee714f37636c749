//! Execution: runs the tasks of a plan that the store does not already hold.
//!
//! tokio drives; each solver runs on the blocking pool, at most `jobs` at a
//! time. Finished tasks are written to the store in groups, one
//! transaction each: those that finish within [`GROUP`] of the first, at
//! most [`BATCH`]; so a killed run loses at most the group not yet
//! committed and resumes where it stopped. Ctrl-C cancels the
//! tasks in flight (they are not stored) and keeps everything finished.

use super::shared::{Held, Lengths, Sharing, Turn, BATCH};
use crate::plan::{Plan, Task};
use anyhow::Context;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use solvers::{Fidelity, Outcome, Registry, SolveError, Status, TaskContext};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{MetricRow, SeriesPointRow, Store, TaskRecord, TaskStatus};
use tokio::sync::{mpsc, Semaphore};

#[derive(Debug, Clone)]
pub struct ExecOptions {
    pub jobs: usize,
    pub force: bool,
    pub fidelity: Fidelity,
    pub progress: bool,
}

#[derive(Debug, Default)]
pub struct ExecSummary {
    pub total: usize,
    pub cached: usize,
    pub executed: usize,
    pub saturated: usize,
    /// Points where a model is undefined (e.g. a printed formula leaves its domain).
    pub undefined: usize,
    /// Failed tasks with their error text.
    pub failed: Vec<(Task, String)>,
    pub cancelled: bool,
    pub wall: Duration,
}

impl ExecSummary {
    /// Adds a later round's counts (its tasks are new to this run).
    pub fn absorb(&mut self, later: ExecSummary) {
        self.total += later.total;
        self.cached += later.cached;
        self.executed += later.executed;
        self.saturated += later.saturated;
        self.undefined += later.undefined;
        self.failed.extend(later.failed);
        self.cancelled |= later.cancelled;
        self.wall += later.wall;
    }
}

/// Runs one task in the current thread: the unit both executors and `repro solve` share.
pub fn run_task(
    registry: &Registry,
    task: &Task,
    cancel: Arc<AtomicBool>,
) -> (Result<Outcome, SolveError>, f64) {
    let ctx = TaskContext::new(task.seed, task.fidelity.profile())
        .with_replication(task.replication)
        .with_cancel_flag(cancel);
    let start = Instant::now();
    let result = match registry.get(&task.solver) {
        None => Err(SolveError::BadParams(format!(
            "unknown solver `{}`",
            task.solver
        ))),
        Some(solver) => {
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                solver.solve(&task.params_value(), &ctx)
            })) {
                Ok(r) => r.and_then(|o| o.checked(&task.solver)),
                Err(p) => {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    Err(SolveError::Numerical(format!(
                        "solver panicked (a bug): {msg}"
                    )))
                }
            }
        }
    };
    (result, start.elapsed().as_secs_f64() * 1e3)
}

pub(crate) fn record(
    task: &Task,
    result: &Result<Outcome, SolveError>,
    wall_ms: f64,
) -> TaskRecord {
    let (status, error, metrics, series) = match result {
        Ok(o) => (
            match o.status {
                Status::Ok => TaskStatus::Done,
                Status::Saturated => TaskStatus::Saturated,
                Status::Undefined => TaskStatus::Undefined,
            },
            o.note.clone(),
            o.metrics
                .iter()
                .map(|(k, m)| MetricRow {
                    name: k.clone(),
                    value: m.value,
                    half_width: m.half_width,
                    n: m.n.map(|n| n as i64),
                })
                .collect(),
            o.series
                .iter()
                .flat_map(|(k, pts)| {
                    pts.iter().map(move |(x, y)| SeriesPointRow {
                        name: k.clone(),
                        x: *x,
                        y: *y,
                    })
                })
                .collect(),
        ),
        Err(e) => (
            TaskStatus::Failed,
            Some(e.to_string()),
            Vec::new(),
            Vec::new(),
        ),
    };
    TaskRecord {
        key: task.key.clone(),
        solver: task.solver.to_string(),
        solver_version: task.solver_version as i64,
        params: task.params_json(),
        seed: task.seed as i64,
        fidelity: task.fidelity.to_string(),
        status,
        wall_ms,
        error,
        metrics,
        series,
    }
}

pub async fn execute(
    plan: &Plan,
    registry: &Registry,
    store: &Store,
    run_id: i64,
    opts: &ExecOptions,
) -> anyhow::Result<(ExecSummary, Vec<TaskRecord>)> {
    let start = Instant::now();
    let mut summary = ExecSummary {
        total: plan.tasks.len(),
        ..Default::default()
    };
    let (todo, cached) = super::todo(plan, store, opts.force).await?;
    summary.cached = cached;

    // On a terminal: a bar whose fixed parts take about 40 columns and whose
    // `wide_bar` takes the rest of the terminal's width, so it never wraps.
    // Otherwise (CI logs): a plain line at an interval (`lines`).
    let on_terminal = std::io::stderr().is_terminal();
    let bar = if opts.progress && on_terminal && !todo.is_empty() {
        let b =
            ProgressBar::with_draw_target(Some(summary.total as u64), ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} {elapsed_precise} {wide_bar} {pos}/{len}{msg} ETA {eta}",
            )
            .expect("valid template"),
        );
        b.set_position(summary.cached as u64);
        b.enable_steady_tick(Duration::from_millis(200));
        b
    } else {
        ProgressBar::hidden()
    };
    let mut lines = (opts.progress && !on_terminal && !todo.is_empty())
        .then(|| ProgressLines::new(summary.total, summary.cached));

    let cancel = Arc::new(AtomicBool::new(false));
    // Room for a batch of results, so that solvers need not wait for the
    // store while it writes the previous ones.
    let (tx, mut rx) = mpsc::channel::<Finished>((opts.jobs.max(1) * 2).max(BATCH));
    let sem = Arc::new(Semaphore::new(opts.jobs.max(1)));
    // Each task is claimed in the store before it runs, so runs sharing the
    // store run it once (execute/shared.rs); those another process holds are
    // waited for after this run's own.
    let sharing = Arc::new(Sharing::new(store, run_id, opts.force));
    let feeder = {
        let (cancel, sharing) = (cancel.clone(), sharing.clone());
        let registry = registry.clone();
        let done_tx = tx.clone();
        let (run_cancel, run_registry) = (cancel.clone(), registry.clone());
        let lengths = Arc::new(Lengths::default());
        let run_lengths = lengths.clone();
        let start = move |task: Task, held, permit: tokio::sync::OwnedSemaphorePermit| {
            let (tx, cancel, registry) = (tx.clone(), run_cancel.clone(), run_registry.clone());
            let lengths = run_lengths.clone();
            tokio::task::spawn_blocking(move || {
                let (r, wall) = run_task(&registry, &task, cancel);
                drop(permit);
                lengths.record(&task.solver, wall);
                let _ = tx.blocking_send(Finished::Ran(task, r, wall, held));
            });
        };
        tokio::spawn(async move {
            let mut busy = Vec::new();
            let mut todo = todo.into_iter().peekable();
            while let Some(first) = todo.next() {
                let permit = sem.clone().acquire_owned().await.expect("semaphore open");
                if cancel.load(Ordering::Relaxed) {
                    return Ok(());
                }
                // Models and short simulations in batches of consecutive
                // ones, other simulations alone (shared.rs, BATCH, Lengths).
                let mut batch = vec![first];
                while lengths.batched(&batch[0]) && batch.len() < BATCH {
                    match todo.next_if(|t| lengths.batched(t)) {
                        Some(t) => batch.push(t),
                        None => break,
                    }
                }
                let turns = sharing.claim(&registry, &batch).await?;
                let mut permit = Some(permit);
                for (task, turn) in batch.into_iter().zip(turns) {
                    match turn {
                        Turn::Run(held) => {
                            let permit = match permit.take() {
                                Some(p) => p,
                                None => sem.clone().acquire_owned().await.expect("semaphore open"),
                            };
                            if cancel.load(Ordering::Relaxed) {
                                // Claimed with the batch, never started.
                                sharing.release(&held).await?;
                                continue;
                            }
                            start(task, held, permit);
                        }
                        Turn::Done => {
                            let _ = done_tx.send(Finished::Shared(task)).await;
                        }
                        Turn::Busy(worker) => {
                            tracing::debug!(key = %task.key, %worker, "another process runs this task: waiting for it");
                            busy.push(task);
                        }
                    }
                }
                if cancel.load(Ordering::Relaxed) {
                    return Ok(());
                }
            }
            while !busy.is_empty() && !cancel.load(Ordering::Relaxed) {
                for (task, held) in sharing.poll_busy(&registry, &mut busy).await? {
                    let permit = sem.clone().acquire_owned().await.expect("semaphore open");
                    match held {
                        Some(held) => start(task, held, permit),
                        None => {
                            drop(permit);
                            let _ = done_tx.send(Finished::Shared(task)).await;
                        }
                    }
                }
            }
            anyhow::Ok(())
        })
    };

    let mut ctrl_c = Box::pin(tokio::signal::ctrl_c());
    let (mut failed_n, mut done_n) = (0usize, 0usize);
    // The outcomes stored, kept for measuring (`Executed::stored`).
    let mut kept = Vec::new();
    loop {
        tokio::select! {
            msg = rx.recv() => {
                let Some(first) = msg else { break };
                // The results that finish within GROUP of the first (those
                // that finished while the last ones were being written
                // included) are stored together, in one transaction: a
                // commit per result or two cost a quick check seconds of
                // writing the store's log (issue 35). A killed run loses at
                // most this group, which the next run runs again.
                let mut msgs = vec![first];
                let until = tokio::time::Instant::now() + GROUP;
                while msgs.len() < BATCH {
                    match rx.try_recv() {
                        Ok(m) => msgs.push(m),
                        Err(mpsc::error::TryRecvError::Disconnected) => break,
                        Err(mpsc::error::TryRecvError::Empty) => {
                            match tokio::time::timeout_at(until, rx.recv()).await {
                                Ok(Some(m)) => msgs.push(m),
                                Ok(None) | Err(_) => break,
                            }
                        }
                    }
                }
                let mut ran = Vec::with_capacity(msgs.len());
                for msg in msgs {
                    match msg {
                        Finished::Shared(task) => {
                            tracing::debug!(key = %task.key, "task run by another process sharing the store");
                            summary.cached += 1;
                            bar.inc(1);
                        }
                        Finished::Ran(_, Err(SolveError::Cancelled), _, held) => {
                            sharing.release(&held).await?;
                        }
                        Finished::Ran(task, result, wall, held) => {
                            let rec = record(&task, &result, wall);
                            tracing::debug!(key = %task.key, solver = %task.solver, status = %rec.status, wall_ms = wall, "task finished");
                            ran.push((task, result, held, rec));
                        }
                    }
                }
                let finished: Vec<(&Held, &TaskRecord)> = ran.iter().map(|(_, _, h, r)| (h, r)).collect();
                let stored = sharing.finish(&finished).await?;
                for ((task, result, _, rec), stored) in ran.into_iter().zip(stored) {
                    if !stored {
                        bar.suspend(|| eprintln!("task {}: another process took it over (this run's claim lapsed); its result is that process's", task.key));
                        summary.cached += 1;
                        bar.inc(1);
                        continue;
                    }
                    match result {
                        Ok(o) => {
                            kept.push(store.as_read_back(rec));
                            done_n += 1;
                            match o.status {
                                Status::Saturated => summary.saturated += 1,
                                Status::Undefined => summary.undefined += 1,
                                Status::Ok => {}
                            }
                        }
                        Err(e) => {
                            failed_n += 1;
                            bar.suspend(|| {
                                eprintln!("task {} failed: {e}\n  rerun it with: {}", task.key, task.solve_command());
                            });
                            summary.failed.push((task, e.to_string()));
                        }
                    }
                    bar.inc(1);
                    if failed_n > 0 {
                        bar.set_message(format!(", {failed_n} failed"));
                    }
                    if let Some(l) = lines.as_mut() {
                        l.task_done(done_n, failed_n);
                    }
                }
            }
            _ = &mut ctrl_c, if !cancel.load(Ordering::Relaxed) => {
                cancel.store(true, Ordering::Relaxed);
                summary.cancelled = true;
                bar.suspend(|| eprintln!("interrupted: finishing the store writes; tasks already finished are kept"));
            }
        }
    }
    // The feeder ends once the channel is closed; its error (a store that
    // failed a claim) is this run's.
    feeder.await.context("the task feeder stopped")??;
    bar.finish_and_clear();
    summary.executed = done_n + failed_n;
    summary.wall = start.elapsed();
    Ok((summary, kept))
}

/// How long a finished result may wait for others to be stored with it: at
/// most this long, or [`BATCH`] results, whichever comes first.
const GROUP: Duration = Duration::from_millis(100);

/// What the feeder hands the recording loop.
enum Finished {
    /// A task this run claimed and ran (or that was cancelled).
    Ran(Task, Result<Outcome, SolveError>, f64, Held),
    /// A task another process sharing the store ran.
    Shared(Task),
}

/// Progress for logs (stderr not a terminal): one line when a task finishes
/// and at least `REPRO_PROGRESS_SECS` (default 10) seconds passed since the
/// last line, and always one for the last task.
struct ProgressLines {
    total: usize,
    cached: usize,
    start: Instant,
    last: Option<Instant>,
    every: Duration,
}

impl ProgressLines {
    fn new(total: usize, cached: usize) -> Self {
        let secs = std::env::var("REPRO_PROGRESS_SECS")
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(10.0);
        ProgressLines {
            total,
            cached,
            start: Instant::now(),
            last: None,
            every: Duration::from_secs_f64(secs),
        }
    }

    fn task_done(&mut self, done: usize, failed: usize) {
        let now = Instant::now();
        let finished = self.cached + done + failed;
        let due = self.last.map_or(now - self.start, |l| now - l) >= self.every;
        if !due && finished < self.total {
            return;
        }
        self.last = Some(now);
        let elapsed = now - self.start;
        let ran = done + failed;
        let left = self.total.saturating_sub(finished);
        let eta = if ran > 0 && left > 0 {
            format!(
                ", ETA {:.0} s",
                elapsed.as_secs_f64() / ran as f64 * left as f64
            )
        } else {
            String::new()
        };
        eprintln!(
            "progress: {finished}/{} tasks ({} cached, {done} run, {failed} failed), {:.0} s elapsed{eta}",
            self.total,
            self.cached,
            elapsed.as_secs_f64()
        );
    }
}
