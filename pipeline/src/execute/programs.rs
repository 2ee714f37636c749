//! Declared programs on the queue: a queued task of a program carries the
//! program's definition (command, folder, files and their hashes, limits), so
//! a worker, which knows only the compiled-in solvers and reads no manifest,
//! rebuilds it. The worker hashes the files it finds at the same path and
//! refuses to run if they differ from those the task was planned with:
//! workers need the same files at the same path (a shared file system, as
//! Slurm sites have).

use super::queue::TaskSpec;
use crate::plan::Task;
use external::ExternalSolver;
use solvers::{Registry, SolveError};
use std::sync::Arc;

/// The queue row's spec of `task`: with the program's definition when its
/// solver is a declared program.
pub(crate) fn spec(registry: &Registry, task: &Task) -> String {
    let spec = TaskSpec {
        program: registry.get(&task.solver).and_then(|s| s.definition()),
        ..TaskSpec::of(task)
    };
    serde_json::to_string(&spec).expect("spec serialises")
}

/// The solvers a worker runs a claimed task with: `registry`, plus the
/// program the task's spec carries, if any. The error (stored as the task's
/// failure) when the program's definition is unusable, or when this worker's
/// solver is of another version than the task was planned for: a worker
/// built from other code must not store results under keys that promise
/// this solver version.
pub(crate) fn registry_for(
    registry: &Registry,
    spec: &str,
    task: &Task,
) -> Result<Registry, SolveError> {
    let def = serde_json::from_str::<TaskSpec>(spec)
        .ok()
        .and_then(|s| s.program);
    let mut r = registry.clone();
    if let Some(def) = def {
        let solver = ExternalSolver::from_definition(&def).map_err(|e| {
            SolveError::Program(format!(
                "the queued task's program definition is unusable: {e}"
            ))
        })?;
        r.add_shared(Arc::new(solver));
    }
    if let Some(s) = r.get(&task.solver) {
        if s.version() != task.solver_version {
            return Err(SolveError::BadParams(format!(
                "this worker has {} v{} but the task was planned for v{}: start workers built \
                 from the same code as `repro run`",
                task.solver,
                s.version(),
                task.solver_version
            )));
        }
    }
    Ok(r)
}
