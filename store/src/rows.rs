//! The rows the store reads and writes: plain data, one struct per table.

use serde::{Deserialize, Serialize};

use crate::TaskStatus;

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

/// One task's result as stored (its status says whether it counts as cached:
/// see [`TaskStatus`]).
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
    pub status: TaskStatus,
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
    /// Kept as its text ("pass", "fail", "inconclusive", "unchecked").
    pub verdict: verdicts::PointVerdict,
}
