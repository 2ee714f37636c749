//! Measure: joins the stored tasks of an experiment into per-point values
//! (replications combined), computes error measures between series, and
//! everything else the reports show ([`Measured`]: summaries, precision,
//! comparisons with earlier versions). Render draws from that alone.

pub mod claims;
pub mod compare;
pub mod em;
mod measured;
pub mod precision;
mod records;
pub mod status;
mod stored;

pub use measured::{em_summary, measured, planned, stored, Measured};
pub use records::Records;

pub use stored::{
    code_versions, collect_at, collect_fidelity, stored_manifest, stored_manifests,
    stored_manifests_except,
};

use crate::manifest::{FigureKind, Manifest, Point};
use anyhow::Context;
use serde_json::Value as Json;
use solvers::des::ci95;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use store::{ErrorMeasureRow, PlanRow, Store, TaskRecord, TaskStatus};
use verdicts::PointVerdict;

/// The state of one series at one point, over its replications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PointStatus {
    Done,
    Saturated,
    Undefined,
    Failed,
    /// Some replication has no stored result.
    Missing,
}

impl PointStatus {
    /// The text tables, the index and notes show.
    pub fn as_str(self) -> &'static str {
        match self {
            PointStatus::Done => "done",
            PointStatus::Saturated => "saturated",
            PointStatus::Undefined => "undefined",
            PointStatus::Failed => "failed",
            PointStatus::Missing => "missing",
        }
    }
}

impl std::fmt::Display for PointStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict of a stored error measure.
pub fn verdict_of(r: &ErrorMeasureRow) -> PointVerdict {
    r.verdict
}

/// A metric at one point of one series, replications combined.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Agg {
    pub value: f64,
    pub half_width: Option<f64>,
    pub n: Option<i64>,
}

#[derive(Debug, Clone)]
pub struct ExperimentResults {
    pub manifest: Manifest,
    /// (point index, series, metric) -> value.
    pub values: BTreeMap<(usize, String, String), Agg>,
    /// (point index, series) -> state over its replications.
    pub status: BTreeMap<(usize, String), PointStatus>,
    /// (point index, series) -> why it is undefined or failed (first replication's reason).
    pub reasons: BTreeMap<(usize, String), String>,
    /// Task records used, by key (shared with the [`Records`] they were read
    /// through); their `series` are sure to be read only for the tasks a
    /// timeseries figure draws (the first replication at point 0).
    pub tasks: BTreeMap<String, Arc<TaskRecord>>,
    /// (point index, series) -> task keys (one per replication).
    pub keys: BTreeMap<(usize, String), Vec<String>>,
}

impl ExperimentResults {
    pub fn get(&self, point: usize, series: &str, metric: &str) -> Option<Agg> {
        self.values
            .get(&(point, series.to_string(), metric.to_string()))
            .copied()
    }

    pub fn point(&self, index: usize) -> Option<Point> {
        self.manifest.points.get(index)
    }

    pub fn x_of(&self, index: usize, axis: &str) -> Option<f64> {
        self.point(index)?.values.get(axis).and_then(Json::as_f64)
    }

    /// Replications stored for a point of a series (its planned task keys).
    pub fn replications(&self, point: usize, series: &str) -> u32 {
        self.keys
            .get(&(point, series.to_string()))
            .map_or(0, |k| k.len() as u32)
    }
}

/// Combines replications: one replication keeps its own CI; several give the
/// mean and a Student-t CI across replication means.
fn combine(reps: &[&TaskRecord], metric: &str) -> Option<Agg> {
    let vals: Vec<(f64, Option<f64>, Option<i64>)> = reps
        .iter()
        .map(|t| {
            t.metrics
                .iter()
                .find(|m| m.name == metric)
                .map(|m| (m.value, m.half_width, m.n))
        })
        .collect::<Option<_>>()?;
    if vals.len() == 1 {
        let (value, half_width, n) = vals[0];
        return Some(Agg {
            value,
            half_width,
            n,
        });
    }
    let xs: Vec<f64> = vals.iter().map(|v| v.0).collect();
    let (mean, hw) = ci95(&xs);
    Some(Agg {
        value: mean,
        half_width: Some(hw),
        n: Some(xs.len() as i64),
    })
}

/// Results of the plan last stored for the experiment (by whichever run came last).
pub async fn collect(store: &Store, manifest: &Manifest) -> anyhow::Result<ExperimentResults> {
    let plan = store
        .plan(&manifest.id, manifest.version)
        .await
        .with_context(|| format!("reading the plan of {}", manifest.id))?;
    collect_plan(store, manifest, &plan).await
}

/// Results of the given plan rows: rendering plans one fidelity in memory, so a
/// quick run never decides what the full-fidelity pages show.
pub async fn collect_plan(
    store: &Store,
    manifest: &Manifest,
    plan: &[PlanRow],
) -> anyhow::Result<ExperimentResults> {
    collect_plan_with(store, &mut Records::new(), manifest, plan).await
}

/// [`collect_plan`], reading through `records` the task results it has not
/// read yet (a command that measures the same experiments several times).
pub async fn collect_plan_with(
    store: &Store,
    records: &mut Records,
    manifest: &Manifest,
    plan: &[PlanRow],
) -> anyhow::Result<ExperimentResults> {
    let keys: Vec<String> = {
        let mut k: Vec<String> = plan.iter().map(|p| p.task_key.clone()).collect();
        k.sort();
        k.dedup();
        k
    };
    let mut by_cell: BTreeMap<(usize, String), Vec<String>> = BTreeMap::new();
    for p in plan {
        by_cell
            .entry((p.point_index as usize, p.series.clone()))
            .or_default()
            .push(p.task_key.clone());
    }
    // Series are drawn only by timeseries figures, from the first
    // replication at point 0 (`render::timeseries`): only those tasks'
    // series are read.
    let series_of: HashSet<&String> = manifest
        .figures
        .iter()
        .filter(|f| f.kind == FigureKind::Timeseries)
        .flat_map(|f| &f.series)
        .filter_map(|s| by_cell.get(&(0, s.clone())).and_then(|k| k.first()))
        .collect();
    let tasks = records.read(store, &keys, &series_of).await?;
    let mut values = BTreeMap::new();
    let mut status = BTreeMap::new();
    let mut reasons = BTreeMap::new();
    for ((pi, series), ks) in &by_cell {
        let recs: Vec<&TaskRecord> = ks
            .iter()
            .filter_map(|k| tasks.get(k).map(Arc::as_ref))
            .collect();
        let done: Vec<&TaskRecord> = recs
            .iter()
            .copied()
            .filter(|t| t.status == TaskStatus::Done)
            .collect();
        let any = |s: TaskStatus| recs.iter().any(|t| t.status == s);
        let st = if recs.len() < ks.len() {
            PointStatus::Missing
        } else if any(TaskStatus::Failed) {
            PointStatus::Failed
        } else if any(TaskStatus::Undefined) {
            PointStatus::Undefined
        } else if any(TaskStatus::Saturated) {
            PointStatus::Saturated
        } else {
            PointStatus::Done
        };
        status.insert((*pi, series.clone()), st);
        if let Some(why) = recs.iter().find_map(|t| t.error.clone()) {
            reasons.insert((*pi, series.clone()), why);
        }
        // A saturated point keeps the metrics that every one of its tasks
        // still reports (multicluster.model's intra-cluster latency past the
        // inter-cluster saturation); tasks that report none give none.
        let used: Vec<&TaskRecord> = match st {
            PointStatus::Done => done,
            PointStatus::Saturated => recs.clone(),
            _ => continue,
        };
        let mut names: Vec<&str> = used
            .iter()
            .flat_map(|t| t.metrics.iter().map(|m| m.name.as_str()))
            .collect();
        names.sort();
        names.dedup();
        for name in names {
            if let Some(a) = combine(&used, name) {
                values.insert((*pi, series.clone(), name.to_string()), a);
            }
        }
    }
    inject(
        &manifest.references,
        manifest.points.len(),
        &mut values,
        &mut status,
    );
    Ok(ExperimentResults {
        manifest: manifest.clone(),
        values,
        status,
        reasons,
        tasks,
        keys: by_cell,
    })
}

/// Puts every reference value into the results at every point, as exact
/// values with status "done", so compare entries, value tables and figures
/// read them like any series.
pub fn inject(
    refs: &[crate::manifest::Reference],
    points: usize,
    values: &mut BTreeMap<(usize, String, String), Agg>,
    status: &mut BTreeMap<(usize, String), PointStatus>,
) {
    for r in refs {
        for p in 0..points {
            status.insert((p, r.name.clone()), PointStatus::Done);
            for (m, v) in &r.values {
                values.insert(
                    (p, r.name.clone(), m.clone()),
                    Agg {
                        value: *v,
                        half_width: None,
                        n: None,
                    },
                );
            }
        }
    }
}

/// Error measures of every `compare` entry at every point.
pub fn error_measures(r: &ExperimentResults) -> Vec<ErrorMeasureRow> {
    let m = &r.manifest;
    let mut rows = Vec::new();
    for c in &m.compare {
        for p in &m.points {
            let rf = r.get(p.index, &c.reference, &c.metric);
            let cd = r.get(p.index, &c.candidate, &c.metric);
            let (e, verdict) = match (rf, cd) {
                (Some(a), Some(b)) => em::verdict(a.value, a.half_width, b.value, c.tolerance),
                _ => (
                    None,
                    if c.tolerance.is_some() {
                        PointVerdict::Inconclusive
                    } else {
                        PointVerdict::Unchecked
                    },
                ),
            };
            rows.push(ErrorMeasureRow {
                experiment: m.id.clone(),
                version: m.version,
                metric: c.metric.clone(),
                reference: c.reference.clone(),
                candidate: c.candidate.clone(),
                point: p.json(),
                point_index: p.index as i64,
                reference_value: rf.map(|a| a.value),
                reference_half_width: rf.and_then(|a| a.half_width),
                candidate_value: cd.map(|a| a.value),
                em: e,
                tolerance: c.tolerance,
                verdict,
            });
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use store::MetricRow;

    fn rec(value: f64, hw: Option<f64>) -> TaskRecord {
        TaskRecord {
            key: format!("k{value}"),
            solver: "s".into(),
            solver_version: 1,
            params: "{}".into(),
            seed: 1,
            fidelity: "full".into(),
            status: TaskStatus::Done,
            wall_ms: 1.0,
            error: None,
            metrics: vec![MetricRow {
                name: "L".into(),
                value,
                half_width: hw,
                n: Some(10),
            }],
            series: vec![],
        }
    }

    #[test]
    fn one_replication_keeps_its_own_ci() {
        let r = rec(2.0, Some(0.1));
        assert_eq!(
            combine(&[&r], "L"),
            Some(Agg {
                value: 2.0,
                half_width: Some(0.1),
                n: Some(10)
            })
        );
        assert_eq!(combine(&[&r], "missing"), None);
    }

    #[test]
    fn replications_give_a_student_t_ci_across_their_means() {
        let rs = [
            rec(1.0, Some(0.5)),
            rec(2.0, Some(0.5)),
            rec(3.0, Some(0.5)),
            rec(4.0, Some(0.5)),
        ];
        let refs: Vec<&TaskRecord> = rs.iter().collect();
        let a = combine(&refs, "L").unwrap();
        assert_eq!(a.value, 2.5);
        assert_eq!(a.n, Some(4));
        // s = sqrt(5/3), t(0.975, 3) = 3.182446.
        let expect = 3.182_446 * (5.0f64 / 3.0 / 4.0).sqrt();
        assert!((a.half_width.unwrap() - expect).abs() < 1e-5);
    }
}
