//! The one step every executor starts with: the tasks of a plan that must
//! run, the plan minus what the store holds (all of it with `--force`), in
//! the order they should start.

use crate::plan::{Plan, Task};
use anyhow::Context;
use solvers::Kind;
use std::collections::HashSet;
use store::Store;

/// The tasks of `plan` that must run (not cached, or all with `force`),
/// longest expected first (stored wall times where known, simulations
/// before models), with the number of cached tasks.
pub async fn todo(plan: &Plan, store: &Store, force: bool) -> anyhow::Result<(Vec<Task>, usize)> {
    let keys: Vec<String> = plan.tasks.iter().map(|t| t.key.clone()).collect();
    let cached = if force {
        HashSet::new()
    } else {
        store
            .cached_keys(&keys)
            .await
            .context("reading the cache")?
    };
    let walls = store
        .wall_times(&keys)
        .await
        .context("reading wall times")?;
    let mut todo: Vec<(Task, f64)> = plan
        .tasks
        .iter()
        .filter(|t| !cached.contains(&t.key))
        .map(|t| {
            let w = walls
                .get(&t.key)
                .copied()
                .unwrap_or(if t.kind == Kind::Simulation { 1e3 } else { 0.0 });
            (t.clone(), w)
        })
        .collect();
    todo.sort_by(|a, b| b.1.total_cmp(&a.1));
    Ok((todo.into_iter().map(|(t, _)| t).collect(), cached.len()))
}
