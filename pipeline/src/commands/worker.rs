//! `repro worker`: claims queued tasks until the queue is empty.

use super::runtime;
use crate::WorkerArgs;
use anyhow::Context;
use pipeline::shared::{exit, open_store};
use solvers::Registry;
use std::process::ExitCode;

/// `repro worker`: claims queued tasks until the queue is empty.
pub(crate) fn worker(args: WorkerArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let store = open_store(&args.store.store).await?;
        let opts = pipeline::execute::queue::WorkerOptions {
            lease: std::time::Duration::from_secs(args.lease),
            max_tasks: args.max_tasks,
            ..Default::default()
        };
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let workers = pipeline::execute::queue::spawn_workers(
            &store,
            registry,
            args.jobs,
            &opts,
            cancel.clone(),
        );
        // Ctrl-C, or SIGTERM from scancel or a time limit: hand the running
        // tasks back to the queue instead of leaving them to their leases.
        let stop = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                #[cfg(unix)]
                {
                    let mut term =
                        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                            .expect("SIGTERM handler");
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                }
                #[cfg(not(unix))]
                tokio::signal::ctrl_c().await.ok();
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let mut total = pipeline::execute::queue::WorkerSummary::default();
        for w in workers {
            let s = w.await.context("worker task")??;
            total.completed += s.completed;
            total.failed += s.failed;
            total.lost += s.lost;
        }
        stop.abort();
        store.close().await;
        let interrupted = cancel.load(std::sync::atomic::Ordering::Relaxed);
        if !crate::quiet() {
            eprintln!(
                "worker {}: {} results stored ({} failed tasks), {} tasks lost to other workers{}",
                pipeline::execute::queue::worker_id(0),
                total.completed,
                total.failed,
                total.lost,
                if interrupted {
                    "; interrupted"
                } else {
                    "; the queue is empty"
                }
            );
        }
        Ok(ExitCode::from(if interrupted {
            exit::INTERRUPTED
        } else {
            exit::OK
        }))
    })
}
