//! `repro status`: the store's task queue.

use super::runtime;
use crate::StatusArgs;
use pipeline::execute::queue;
use pipeline::shared::{exit, open_existing_store};
use solvers::Registry;
use std::process::ExitCode;
use store::{QueueState, Store};

/// `repro status`: the store's task queue.
pub(crate) fn status(args: StatusArgs, _registry: &Registry) -> anyhow::Result<ExitCode> {
    let s = runtime()?.block_on(async {
        let store = open_existing_store(&args.store.store).await?;
        let s = read(&store).await;
        store.close().await;
        s
    })?;
    let c = s.counts;
    println!(
        "queue: {} pending, {} running, {} done, {} failed",
        c.pending, c.running, c.done, c.failed
    );
    if !s.running.is_empty() {
        println!("running:");
        for r in &s.running {
            let solver = queue::task_of(&r.task_key, &r.spec)
                .map_or("?".to_string(), |t| t.solver.to_string());
            let lease = match r.lease_until {
                Some(t) if t >= s.now_ms => {
                    format!("lease {:.0} s left", (t - s.now_ms) as f64 / 1e3)
                }
                Some(t) => format!(
                    "lease expired {:.0} s ago: the next worker reclaims it",
                    (s.now_ms - t) as f64 / 1e3
                ),
                None => "no lease".into(),
            };
            println!(
                "  {} {:<20} on {} (attempt {}, {lease})",
                r.task_key,
                solver,
                r.worker.as_deref().unwrap_or("?"),
                r.attempts
            );
        }
    }
    if !s.failed.is_empty() {
        println!("failed (rerun one with the command shown):");
        for (r, t) in &s.failed {
            println!("  {}: {}", r.task_key, r.error.as_deref().unwrap_or(""));
            if let Some(t) = t {
                println!("    {}", t.solve_command());
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}

/// What `repro status` shows: the queue's counts, the running tasks with
/// their workers and leases, and the failed tasks with their rerun commands.
#[derive(Debug)]
struct QueueStatus {
    counts: store::QueueCounts,
    running: Vec<store::QueueRow>,
    failed: Vec<(store::QueueRow, Option<pipeline::plan::Task>)>,
    /// Unix milliseconds when the status was read (to show lease time left).
    now_ms: i64,
}

async fn read(store: &Store) -> anyhow::Result<QueueStatus> {
    let counts = store.queue_counts(None).await?;
    let running = store.queue_rows(&[QueueState::Running]).await?;
    let failed = store
        .queue_rows(&[QueueState::Failed])
        .await?
        .into_iter()
        .map(|r| {
            let t = queue::task_of(&r.task_key, &r.spec);
            (r, t)
        })
        .collect();
    Ok(QueueStatus {
        counts,
        running,
        failed,
        now_ms: store::now_ms(),
    })
}
