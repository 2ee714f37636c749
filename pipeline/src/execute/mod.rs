//! Execute: run the tasks of a plan that the store does not hold yet.
//!
//! Three executors share one unit of work ([`run_task`], the same code and
//! seed everywhere): `local` (this process, `--jobs` at a time), `queue` (the
//! store's task queue, drained by `repro worker` processes) and `slurm` (an
//! sbatch job array of such workers). A new executor is a module here and a
//! variant of `Dispatch` (lib.rs) and of `--executor` (main.rs).

pub mod local;
pub mod queue;
pub mod slurm;

pub(crate) use local::record;
pub use local::{execute, run_task, ExecOptions, ExecSummary};
