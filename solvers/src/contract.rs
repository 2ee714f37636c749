//! The solver contract (docs/design.md, "The solver contract").

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Whether a solver computes a model (deterministic, no seed) or simulates (seeded).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Analytic,
    Simulation,
}

/// Fidelity profile. `Quick` is the CI profile: same manifests, shorter simulations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Fidelity {
    Quick,
    #[default]
    Full,
}

impl Fidelity {
    pub fn as_str(self) -> &'static str {
        match self {
            Fidelity::Quick => "quick",
            Fidelity::Full => "full",
        }
    }
}

/// Everything a solver may know about the task besides its parameters.
#[derive(Debug, Clone)]
pub struct TaskContext {
    /// Seed of this task (already derived from the task's identity and replication index).
    pub seed: u64,
    /// Replication index (0-based) within its series point.
    pub replication: u32,
    pub fidelity: Fidelity,
    cancel: Arc<AtomicBool>,
}

impl TaskContext {
    pub fn new(seed: u64, fidelity: Fidelity) -> Self {
        TaskContext {
            seed,
            replication: 0,
            fidelity,
            cancel: Arc::new(AtomicBool::new(false)),
        }
    }

    pub fn with_replication(mut self, replication: u32) -> Self {
        self.replication = replication;
        self
    }

    pub fn with_cancel_flag(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = flag;
        self
    }

    /// Long-running solvers poll this now and then and return `SolveError::Cancelled`.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// Convenience for simulation loops: `ctx.check_cancel()?` every few thousand events.
    pub fn check_cancel(&self) -> Result<(), SolveError> {
        if self.is_cancelled() {
            Err(SolveError::Cancelled)
        } else {
            Ok(())
        }
    }
}

/// One named result. `half_width` is the 95% confidence half-width (simulations).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub value: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub half_width: Option<f64>,
    /// Number of observations behind the value (batches, replications, samples).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
}

impl Metric {
    pub fn exact(value: f64) -> Self {
        Metric {
            value,
            half_width: None,
            n: None,
        }
    }
    pub fn estimate(value: f64, half_width: f64, n: u64) -> Self {
        Metric {
            value,
            half_width: Some(half_width),
            n: Some(n),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    #[default]
    Ok,
    /// The point lies past saturation, not an error: no metrics, or only
    /// those that stay finite there (multicluster.model's intra-cluster
    /// latency past the inter-cluster saturation), which reports keep.
    Saturated,
    /// The model is not defined at this point (for example a formula as
    /// printed in a paper leaves its domain): no metrics, a reason in `note`.
    /// A finding to report, not a failure of the run.
    Undefined,
}

/// What a solver returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Outcome {
    pub status: Status,
    pub metrics: BTreeMap<String, Metric>,
    /// Named series such as throughput per flow against time: (x, y) pairs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub series: BTreeMap<String, Vec<(f64, f64)>>,
    /// Why the outcome is `Undefined` (or any remark the report should show).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Outcome {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn saturated() -> Self {
        Outcome {
            status: Status::Saturated,
            ..Default::default()
        }
    }

    /// Saturated, with the reason (which queue or bound) as the note.
    pub fn saturated_because(reason: impl Into<String>) -> Self {
        Outcome {
            note: Some(reason.into()),
            ..Self::saturated()
        }
    }

    /// The model is undefined here, for the reason given.
    pub fn undefined(reason: impl Into<String>) -> Self {
        Outcome {
            status: Status::Undefined,
            note: Some(reason.into()),
            ..Default::default()
        }
    }

    /// Adds an exact (analytic) metric.
    pub fn with(mut self, name: &str, value: f64) -> Self {
        self.metrics.insert(name.to_string(), Metric::exact(value));
        self
    }

    /// Adds a simulation estimate with its 95% half-width and observation count.
    pub fn with_estimate(mut self, name: &str, value: f64, half_width: f64, n: u64) -> Self {
        self.metrics
            .insert(name.to_string(), Metric::estimate(value, half_width, n));
        self
    }

    pub fn insert(&mut self, name: &str, metric: Metric) {
        self.metrics.insert(name.to_string(), metric);
    }

    pub fn get(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).map(|m| m.value)
    }

    /// Refuses non-finite values: a NaN must never reach the store silently.
    pub fn checked(self, solver: &str) -> Result<Self, SolveError> {
        for (k, m) in &self.metrics {
            if !m.value.is_finite() || m.half_width.is_some_and(|h| !h.is_finite()) {
                return Err(SolveError::Numerical(format!(
                    "{solver}: metric `{k}` is not finite ({}); this is a bug or a parameter outside the model's domain",
                    m.value
                )));
            }
        }
        Ok(self)
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize, Deserialize)]
pub enum SolveError {
    /// A parameter breaks a rule: names the parameter and the rule.
    #[error("parameter `{param}`: {rule}")]
    InvalidParam { param: String, rule: String },
    /// The parameters do not deserialise (unknown field, wrong type, missing field).
    #[error("bad parameters: {0}")]
    BadParams(String),
    /// The model is unstable for these parameters where it requires stability.
    #[error("unstable: {0}")]
    Unstable(String),
    /// A numerical method failed (did not converge, singular system).
    #[error("numerical failure: {0}")]
    Numerical(String),
    #[error("cancelled")]
    Cancelled,
    /// A program outside repro (a solver a manifest declares) failed: it
    /// exited non-zero, was killed, timed out or broke the output protocol.
    /// The message says which, with the tail of the program's stderr.
    #[error("{0}")]
    Program(String),
}

impl SolveError {
    pub fn param(param: &str, rule: impl Into<String>) -> Self {
        SolveError::InvalidParam {
            param: param.to_string(),
            rule: rule.into(),
        }
    }
}

/// One documented parameter of a solver.
#[derive(Debug, Clone, Serialize)]
pub struct ParamDoc {
    pub name: &'static str,
    pub doc: &'static str,
}

/// What `repro list --solvers` and `repro solve --help` print.
#[derive(Debug, Clone, Serialize)]
pub struct SolverDoc {
    pub summary: &'static str,
    pub params: Vec<ParamDoc>,
    pub metrics: Vec<&'static str>,
}

impl SolverDoc {
    /// The metric names of [`SolverDoc::metrics`]. Each entry lists names
    /// separated by commas, with remarks in parentheses (dropped here) and time
    /// series as `series NAME` (not metrics, left out); `<k>` in a name stands
    /// for any non-empty run of letters, digits and `_` (`thr_F<k>_<j>` names
    /// `thr_F1_2`). A solvers test keeps every entry in this form.
    pub fn metric_names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for entry in &self.metrics {
            let mut plain = String::new();
            let mut depth = 0usize;
            for c in entry.chars() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    c if depth == 0 => plain.push(c),
                    _ => {}
                }
            }
            for name in plain.split(',').map(str::trim) {
                if !name.is_empty()
                    && !name.starts_with("series ")
                    && !out.iter().any(|n| n == name)
                {
                    out.push(name.to_string());
                }
            }
        }
        out
    }
}

/// Whether a metric name matches a documented name ([`SolverDoc::metric_names`]),
/// whose `<..>` placeholders each match a non-empty run of `[A-Za-z0-9_]`.
pub fn metric_matches(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.first() {
            None => n.is_empty(),
            Some(b'<') => {
                let Some(close) = p.iter().position(|&c| c == b'>') else {
                    return false;
                };
                let rest = &p[close + 1..];
                let run = n
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                (1..=run).any(|k| go(rest, &n[k..]))
            }
            Some(&c) => n.first() == Some(&c) && go(&p[1..], &n[1..]),
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// What is known of a metric's values before solving, for the loader's
/// classification of checks that cannot fail (a "sanity" check).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum MetricFact {
    /// Every value of the metrics matching the name lies in `[lo, hi]`
    /// (probabilities, fractions of time, indicators, normalised differences).
    Range(&'static str, f64, f64),
    /// A function of the parameters alone (an input echoed back, such as a
    /// packet size): comparing it checks the manifest, not the solver.
    FromParams(&'static str),
}

impl MetricFact {
    /// A probability or fraction: `[0, 1]`.
    pub const fn fraction(name: &'static str) -> Self {
        MetricFact::Range(name, 0.0, 1.0)
    }

    pub fn name(&self) -> &'static str {
        match self {
            MetricFact::Range(n, ..) | MetricFact::FromParams(n) => n,
        }
    }
}

pub trait Solver: Send + Sync {
    /// Stable name such as `credit.ctmc`.
    fn name(&self) -> &'static str;
    /// Bump whenever results for the same inputs change.
    fn version(&self) -> u32;
    fn kind(&self) -> Kind;
    fn doc(&self) -> SolverDoc;
    fn solve(&self, params: &serde_json::Value, ctx: &TaskContext) -> Result<Outcome, SolveError>;

    /// Hash of the code outside this binary that the results depend on (the
    /// files of a program a manifest declares); `None` for the solvers
    /// compiled into repro, whose `version` says it all. Part of every task
    /// key besides `version`, so editing such a program reruns its tasks.
    fn code_hash(&self) -> Option<String> {
        None
    }

    /// A self-contained description from which another process rebuilds
    /// this solver (a declared program: its command, folder, files and
    /// limits); `None` for compiled-in solvers. Queued tasks carry it to
    /// workers, which know only the compiled-in solvers.
    fn definition(&self) -> Option<serde_json::Value> {
        None
    }

    /// What is known of its metrics' values before solving (bounded ranges,
    /// metrics computed from the parameters alone). Solvers with bounded or
    /// echoed metrics list them; the default knows nothing.
    fn metric_facts(&self) -> Vec<MetricFact> {
        Vec::new()
    }
}
