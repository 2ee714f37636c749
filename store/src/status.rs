//! The fixed sets of values the store keeps as text: a task's status and a
//! queue row's state. Typed here and turned into text only at the SQL edge
//! (and in serde, with the same lowercase names), so adding a status makes the
//! compiler list every `match` that must handle it, and no text the store holds
//! changes.

use serde::{Deserialize, Serialize};

use verdicts::named_enum;
pub use verdicts::UnknownName;

/// A stored task's status. `Done`, `Saturated` and `Undefined` are outcomes
/// and count as cached (see [`crate::Store::cached_keys`]): being undefined is
/// a property of the parameters, so rerunning would give the same answer.
/// Only `Failed` tasks run again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    Done,
    /// The system is saturated at that point (no steady state).
    Saturated,
    /// The model is not defined at that point; the reason is in `error`.
    Undefined,
    Failed,
}

named_enum!(TaskStatus, "task status",
    Done => "done", Saturated => "saturated", Undefined => "undefined", Failed => "failed");

impl TaskStatus {
    /// An outcome (cached), as opposed to a failure (retried).
    pub fn is_outcome(self) -> bool {
        !matches!(self, TaskStatus::Failed)
    }
}

/// The state of a queue row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueueState {
    Pending,
    Running,
    Done,
    Failed,
}

named_enum!(QueueState, "queue state",
    Pending => "pending", Running => "running", Done => "done", Failed => "failed");

/// How a run of `repro run`/`check` ended (`runs.status`; "running" until then).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    Running,
    /// Every task ran (some may be saturated or undefined).
    Done,
    /// Some tasks failed.
    FailedTasks,
    /// Ctrl-C: finished tasks are kept.
    Interrupted,
    /// `--detach`: the tasks were queued for workers.
    Detached,
}

named_enum!(RunStatus, "run status",
    Running => "running", Done => "done", FailedTasks => "failed-tasks",
    Interrupted => "interrupted", Detached => "detached");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for s in TaskStatus::ALL {
            assert_eq!(s.as_str().parse::<TaskStatus>(), Ok(*s));
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{s}\""));
        }
        for s in QueueState::ALL {
            assert_eq!(s.as_str().parse::<QueueState>(), Ok(*s));
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{s}\""));
        }
        for s in RunStatus::ALL {
            assert_eq!(s.as_str().parse::<RunStatus>(), Ok(*s));
            assert_eq!(serde_json::to_string(s).unwrap(), format!("\"{s}\""));
        }
        let e = "finished".parse::<TaskStatus>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "task status \"finished\" is not one of done, saturated, undefined, failed"
        );
    }
}
