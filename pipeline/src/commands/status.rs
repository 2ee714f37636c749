//! `repro status`: the store's task queue.

use super::runtime;
use crate::StatusArgs;
use pipeline::exit;
use solvers::Registry;
use std::process::ExitCode;

/// `repro status`: the store's task queue.
pub(crate) fn status(args: StatusArgs, _registry: &Registry) -> anyhow::Result<ExitCode> {
    let s = runtime()?.block_on(async {
        let store = pipeline::open_existing_store(&args.store.store).await?;
        let s = pipeline::execute::queue::status(&store).await;
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
            let solver = pipeline::execute::queue::task_of(&r.task_key, &r.spec)
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
