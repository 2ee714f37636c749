//! Launchers: how the workers of a queued run (`--executor queue|slurm`) are
//! started, watched and stopped. The queue executor
//! ([`crate::execute::queue`]) enqueues the run's tasks, asks its launcher to
//! start workers, follows the store's queue until the tasks are finished and
//! collects their results; a launcher only starts and stops workers, which
//! all run the same `repro worker` loop. A launcher is one file here
//! implementing [`Launcher`] and declaring its `--executor` value as a
//! [`Registration`] (name, help, constructor): [`InProcess`] (`queue`:
//! workers in this process) and [`slurm::Slurm`] (`slurm`: an sbatch job
//! array). [`LAUNCHERS`] lists them; `repro run --executor` takes its values
//! and their help from it and builds the launcher it names ([`build`]), so
//! neither main.rs nor commands/run.rs names a launcher.

pub mod in_process;
pub mod slurm;

pub use in_process::InProcess;

/// Every launcher, in the order `--help` lists them: a new launcher is a
/// file in this folder, its `mod` line above and its registration here.
pub const LAUNCHERS: &[Registration] = &[in_process::REGISTRATION, slurm::REGISTRATION];

/// A launcher's `--executor` value and how to build it from the run's flags.
#[derive(Clone, Copy)]
pub struct Registration {
    /// The `--executor` value.
    pub name: &'static str,
    /// One line for `--help`.
    pub help: &'static str,
    pub build: fn(&LaunchArgs<'_>) -> anyhow::Result<Arc<dyn Launcher>>,
}

/// The flags of `repro run` a launcher may be built from.
pub struct LaunchArgs<'a> {
    /// `--jobs` (already resolved to the core count when not given).
    pub jobs: usize,
    /// `--detach`: enqueue and return; the workers finish the run.
    pub detach: bool,
    pub slurm: &'a slurm::SlurmArgs,
    /// `--results`.
    pub results: &'a std::path::Path,
}

/// The launcher registered as `name`; `None` for a name no launcher has
/// (such as `local`, which runs tasks without the queue).
pub fn build(name: &str, args: &LaunchArgs<'_>) -> Option<anyhow::Result<Arc<dyn Launcher>>> {
    LAUNCHERS
        .iter()
        .find(|r| r.name == name)
        .map(|r| (r.build)(args))
}

use crate::execute::queue::{WorkerOptions, WorkerSummary};
use crate::shared::InputError;
use solvers::Registry;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;
use store::{QueueCounts, Store};
use tokio::task::JoinHandle;

/// What a launcher is given to start the workers of one run.
pub struct Start<'a> {
    pub store: &'a Store,
    pub registry: &'a Registry,
    /// The run's tasks on the queue.
    pub tasks: usize,
    pub worker_options: &'a WorkerOptions,
    /// Set on Ctrl-C: workers in this process hand their tasks back.
    pub cancel: Arc<AtomicBool>,
}

/// Starts the workers of a queued run.
pub trait Launcher: std::fmt::Debug + Send + Sync {
    /// Refuses, before anything is queued, a store its workers cannot reach.
    fn check_store(&self, _store: &Store) -> Result<(), InputError> {
        Ok(())
    }
    /// Starts the workers (and says so on stderr where they run elsewhere).
    fn launch(&self, start: Start<'_>) -> anyhow::Result<Box<dyn Launched>>;
}

/// Workers a [`Launcher`] started.
pub trait Launched: Send {
    /// The id they are followed by outside repro (a Slurm job id); `None`
    /// for workers in this process.
    fn job(&self) -> Option<&str> {
        None
    }
    /// Who runs the tasks queued with `--detach`, for the line that says so
    /// ("N queued for ...").
    fn workers(&self) -> String {
        "workers (start them with `repro worker`)".into()
    }
    /// A line to print when the run's first task started `after` the launch.
    fn first_start(&self, _after: Duration) -> Option<String> {
        None
    }
    /// Whether every worker has ended (asked every few seconds while the
    /// run's tasks are open).
    fn ended(&self) -> anyhow::Result<bool> {
        Ok(false)
    }
    /// The error when the workers ended with the run's tasks `open` still
    /// unfinished.
    fn ended_early(&self, open: &QueueCounts) -> anyhow::Error {
        anyhow::anyhow!(
            "the workers ended with {} of this run's tasks not finished; \
             `repro status` shows the queue, and `repro worker` or the same `repro run` resumes it",
            open.open()
        )
    }
    /// On Ctrl-C: stops the workers; returns what to tell the user.
    fn interrupt(&self) -> String;
    /// The workers running in this process, to wait for once the queue is done.
    fn into_local(self: Box<Self>) -> Vec<JoinHandle<anyhow::Result<WorkerSummary>>> {
        Vec::new()
    }
}
