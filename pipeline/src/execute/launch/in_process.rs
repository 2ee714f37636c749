//! `--executor queue`: workers in this process (`--jobs` of them; none with
//! `--detach`, when `repro worker` processes started by hand do the work).

use super::{LaunchArgs, Launched, Launcher, Registration, Start};
use crate::execute::queue::{spawn_workers, WorkerSummary};
use std::sync::Arc;
use tokio::task::JoinHandle;

pub const REGISTRATION: Registration = Registration {
    name: "queue",
    help: "the store's task queue, with --jobs workers in this process and any started by `repro worker`",
    build,
};

/// Detached: only enqueue; workers are started by hand (`repro worker`).
fn build(a: &LaunchArgs<'_>) -> anyhow::Result<Arc<dyn Launcher>> {
    Ok(Arc::new(InProcess(if a.detach { 0 } else { a.jobs })))
}

/// `n` workers in this process.
#[derive(Debug, Clone, Copy)]
pub struct InProcess(pub usize);

impl Launcher for InProcess {
    fn launch(&self, s: Start<'_>) -> anyhow::Result<Box<dyn Launched>> {
        Ok(Box::new(Workers(spawn_workers(
            s.store,
            s.registry,
            self.0,
            s.worker_options,
            s.cancel,
        ))))
    }
}

struct Workers(Vec<JoinHandle<anyhow::Result<WorkerSummary>>>);

impl Launched for Workers {
    fn interrupt(&self) -> String {
        "interrupted: handing the running tasks back to the queue; finished tasks are kept".into()
    }
    fn into_local(self: Box<Self>) -> Vec<JoinHandle<anyhow::Result<WorkerSummary>>> {
        self.0
    }
}
