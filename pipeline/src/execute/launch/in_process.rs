//! `--executor queue`: workers in this process (`--jobs` of them; none with
//! `--detach`, when `repro worker` processes started by hand do the work).

use super::{Launched, Launcher, Start};
use crate::execute::queue::{spawn_workers, WorkerSummary};
use tokio::task::JoinHandle;

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
