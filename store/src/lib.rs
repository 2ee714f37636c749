//! The result database of repro. SQLite (WAL) by default at `results/repro.sqlite`.
//!
//! Architecture invariant: the store knows no solver. It stores tasks by key,
//! their metrics and series, which experiment points use which task, runs for
//! provenance, and error measures. The pool type stays behind [`Store`], so a
//! PostgreSQL backend can be added without touching callers.

use serde::{Deserialize, Serialize};

/// Schema version this binary understands. A store with a higher version is refused.
pub const SCHEMA_VERSION: i64 = 1;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the result store at {location}: {reason}")]
    Open { location: String, reason: String },
    #[error("the result store at {location} has schema version {found}, newer than this binary understands ({supported}); upgrade repro or use another --store")]
    TooNew {
        location: String,
        found: i64,
        supported: i64,
    },
    #[error("database error: {0}")]
    Db(String),
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// One experiment version as loaded from its manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRow {
    pub id: String,
    pub version: i64,
    pub title: String,
    /// Hex SHA-256 of the manifest text.
    pub manifest_hash: String,
    pub manifest_text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    pub name: String,
    pub value: f64,
    pub half_width: Option<f64>,
    pub n: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPointRow {
    pub name: String,
    pub x: f64,
    pub y: f64,
}

/// Task outcome status as stored: "done", "saturated" or "failed".
/// Only "done" and "saturated" tasks count as cached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub key: String,
    pub solver: String,
    pub solver_version: i64,
    /// Canonical JSON of the parameters.
    pub params: String,
    pub seed: i64,
    /// "quick" or "full" (analytic tasks: "any").
    pub fidelity: String,
    pub status: String,
    pub wall_ms: f64,
    pub error: Option<String>,
    pub metrics: Vec<MetricRow>,
    pub series: Vec<SeriesPointRow>,
}

/// Which task serves which point of which series of an experiment version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRow {
    pub experiment: String,
    pub version: i64,
    /// Canonical JSON object of the sweep-axis values of the point.
    pub point: String,
    /// Index of the point in sweep order (for stable ordering).
    pub point_index: i64,
    pub series: String,
    pub replication: i64,
    pub task_key: String,
}

/// One run of `repro run/check` for provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub started: String,
    pub finished: Option<String>,
    pub code_version: String,
    pub host: String,
    pub args: String,
    pub status: String,
}

/// One error measure per compared point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorMeasureRow {
    pub experiment: String,
    pub version: i64,
    pub metric: String,
    pub reference: String,
    pub candidate: String,
    pub point: String,
    pub point_index: i64,
    pub reference_value: Option<f64>,
    pub reference_half_width: Option<f64>,
    pub candidate_value: Option<f64>,
    pub em: Option<f64>,
    pub tolerance: Option<f64>,
    /// "pass", "fail", "inconclusive" or "unchecked" (no tolerance).
    pub verdict: String,
}

/// Handle on the result database.
pub struct Store {
    _private: (),
}

impl Store {
    /// Opens (creating if needed) the store. `location` is a file path or a
    /// `sqlite://` URL (later also `postgres://`). Creates parent directories,
    /// sets WAL + busy timeout, runs embedded migrations, refuses a newer schema.
    pub async fn open(location: &str) -> Result<Store> {
        let _ = location;
        todo!()
    }
    pub async fn close(self) {}

    pub async fn upsert_experiment(&self, e: &ExperimentRow) -> Result<()> {
        let _ = e;
        todo!()
    }
    pub async fn experiments(&self) -> Result<Vec<ExperimentRow>> {
        todo!()
    }

    /// Starts a run; returns its id.
    pub async fn begin_run(&self, code_version: &str, host: &str, args: &str) -> Result<i64> {
        let _ = (code_version, host, args);
        todo!()
    }
    pub async fn finish_run(&self, run: i64, status: &str) -> Result<()> {
        let _ = (run, status);
        todo!()
    }
    pub async fn runs(&self) -> Result<Vec<RunRow>> {
        todo!()
    }

    /// Keys among `keys` whose stored status is "done" or "saturated".
    pub async fn cached_keys(&self, keys: &[String]) -> Result<std::collections::HashSet<String>> {
        let _ = keys;
        todo!()
    }
    /// Stored wall times (ms) of the given keys, for longest-first ordering.
    pub async fn wall_times(
        &self,
        keys: &[String],
    ) -> Result<std::collections::HashMap<String, f64>> {
        let _ = keys;
        todo!()
    }
    /// Writes one task (row, metrics, series) in its own transaction, replacing
    /// any earlier record of the same key, and links it to `run`.
    pub async fn record_task(&self, run: i64, t: &TaskRecord) -> Result<()> {
        let _ = (run, t);
        todo!()
    }
    pub async fn tasks(&self, keys: &[String]) -> Result<Vec<TaskRecord>> {
        let _ = keys;
        todo!()
    }

    /// Replaces the plan (point/series -> task) of one experiment version.
    pub async fn replace_plan(
        &self,
        experiment: &str,
        version: i64,
        rows: &[PlanRow],
    ) -> Result<()> {
        let _ = (experiment, version, rows);
        todo!()
    }
    pub async fn plan(&self, experiment: &str, version: i64) -> Result<Vec<PlanRow>> {
        let _ = (experiment, version);
        todo!()
    }

    pub async fn replace_error_measures(
        &self,
        experiment: &str,
        version: i64,
        rows: &[ErrorMeasureRow],
    ) -> Result<()> {
        let _ = (experiment, version, rows);
        todo!()
    }
    pub async fn error_measures(
        &self,
        experiment: &str,
        version: i64,
    ) -> Result<Vec<ErrorMeasureRow>> {
        let _ = (experiment, version);
        todo!()
    }
}
