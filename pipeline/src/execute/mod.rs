//! Execute: run the tasks of a plan that the store does not hold yet.
//!
//! Every executor implements [`Executor`], starts from the same tasks
//! ([`todo`]: the plan minus what the store holds, longest first) and shares
//! one unit of work ([`run_task`], the same code and seed everywhere): [`Local`] (this process,
//! `--jobs` at a time), and [`queue::Queued`], which puts the tasks on the
//! store's task queue for workers that its [`launch::Launcher`] starts: in
//! this process (`--executor queue`, [`launch::InProcess`]) or as an sbatch
//! job array (`--executor slurm`, [`launch::slurm`]). A new executor is a
//! type here implementing [`Executor`]; a new way to start queue workers is
//! one file in `launch/` implementing [`launch::Launcher`]; either is then a
//! value of `--executor` (main.rs, mapped in commands/run.rs).

pub mod launch;
pub mod local;
mod programs;
pub mod queue;
mod shared;
mod todo;

pub(crate) use local::record;
pub use local::{execute, run_task, ExecOptions, ExecSummary};
pub use todo::todo;

use crate::plan::Plan;
use solvers::Registry;
use std::future::Future;
use std::pin::Pin;
use store::Store;

/// What an executor did with a plan.
#[derive(Debug, Default)]
pub struct Executed {
    pub summary: ExecSummary,
    /// `--detach`: the tasks were queued and handed to workers, said as the
    /// launcher says who runs them (`Launched::workers`: "Slurm job 42");
    /// nothing is measured yet.
    pub detached: Option<String>,
    /// The outcomes (not failures) this executor stored, as the store reads
    /// them back ([`Store::as_read_back`]), so that measuring them needs no
    /// second read.
    pub stored: Vec<store::TaskRecord>,
}

/// A boxed future, so that `dyn Executor` can be chosen at run time.
pub type ExecFuture<'a> = Pin<Box<dyn Future<Output = anyhow::Result<Executed>> + Send + 'a>>;

/// Runs the tasks of a plan that the store does not hold (all with `--force`),
/// storing each result as it finishes, linked to run `run_id`.
pub trait Executor: std::fmt::Debug + Send + Sync {
    fn execute<'a>(
        &'a self,
        plan: &'a Plan,
        registry: &'a Registry,
        store: &'a Store,
        run_id: i64,
    ) -> ExecFuture<'a>;
}

/// `--executor local`: in this process, `jobs` at a time.
#[derive(Debug, Clone)]
pub struct Local(pub ExecOptions);

impl Executor for Local {
    fn execute<'a>(
        &'a self,
        plan: &'a Plan,
        registry: &'a Registry,
        store: &'a Store,
        run_id: i64,
    ) -> ExecFuture<'a> {
        Box::pin(async move {
            let (summary, stored) = execute(plan, registry, store, run_id, &self.0).await?;
            Ok(Executed {
                summary,
                detached: None,
                stored,
            })
        })
    }
}

/// `--executor queue|slurm`.
impl Executor for queue::Queued {
    fn execute<'a>(
        &'a self,
        plan: &'a Plan,
        registry: &'a Registry,
        store: &'a Store,
        run_id: i64,
    ) -> ExecFuture<'a> {
        Box::pin(async move {
            let (summary, job, stored) =
                queue::execute_queued(plan, registry, store, run_id, self).await?;
            Ok(Executed {
                summary,
                detached: self.detach.then(|| job.unwrap_or_default()),
                stored,
            })
        })
    }
}
