//! Experiment manifests: YAML in, a validated [`Manifest`] out.
//!
//! Every error names the file, the line and column (where it can be found)
//! and the key, from the YAML parser itself (`place.rs`): serde-saphyr
//! reports where syntax and type errors are; for semantic errors found after
//! parsing (unknown solver, empty sweep, a figure naming a series that does
//! not exist) the place is the one the parser recorded for the key path.
//!
//! Every size is bounded before anything is allocated for it ([`limits`]),
//! and every series' merged parameters are checked against its solver's
//! documented parameters (`SolverDoc::params`) at load time, so a typo such
//! as `batch_lenn` is reported with its file, line and key and nothing runs.

pub mod catalogue;
pub mod claims;
mod classify;
mod discover;
pub mod figure;
pub mod limits;
pub mod metrics;
mod parse;
mod place;
mod precision;
pub mod predicate;
mod programs;
mod raw;
pub mod reference;
mod sweep;
mod validate;
mod values;
pub mod yaml;

pub use claims::{Calibrated, Claim, QuickMark};
pub use discover::{discover, load_all, load_or_input_error, unknown_id_message};
pub use figure::FigureKind;
pub use parse::{load, parse, parse_stored};
pub use place::{locate, Place};
pub use programs::{
    code_fact, conflicts, declared_in, dir_fact, facts_of, registry_with, with_declared, CodeRecord,
};
pub use reference::Reference;
pub use sweep::Points;
pub use values::{canonical_number, yaml_to_json};

use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// A manifest that cannot be used: file, line and column (where they can be
/// found), key and what is wrong, said as `FILE:LINE:COLUMN: key `KEY`: MESSAGE`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {}{message}", self.place(), self.key_said())]
pub struct ManifestError {
    pub file: PathBuf,
    pub line: Option<usize>,
    /// 1-based, counted in characters.
    pub column: Option<usize>,
    /// Dotted key path, e.g. `series.sim.solver`; empty when it concerns the whole file.
    pub key: String,
    pub message: String,
}

impl ManifestError {
    /// `FILE[:LINE[:COLUMN]]`: where the error is.
    fn place(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}", self.file.display()),
            (Some(l), None) => format!("{}:{l}", self.file.display()),
            _ => self.file.display().to_string(),
        }
    }
    /// `key `KEY`: ` when the error concerns a key.
    fn key_said(&self) -> String {
        if self.key.is_empty() {
            String::new()
        } else {
            format!("key `{}`: ", self.key)
        }
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    pub metric: String,
    pub reference: String,
    pub candidate: String,
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// `holds` (default) or `fails`: a tolerance known not to be met stays,
    /// marked, with the reason in `why`.
    #[serde(default)]
    pub expect: Option<verdicts::Expectation>,
    #[serde(default)]
    pub why: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub id: String,
    pub kind: TableKind,
    #[serde(default)]
    pub title: Option<String>,
    /// `values` tables: which series and metrics to tabulate (default: all series, every metric).
    #[serde(default)]
    pub series: Vec<String>,
    #[serde(default)]
    pub metrics: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    ErrorMeasures,
    Values,
}

/// One series: a solver with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub solver: String,
    pub label: String,
    pub params: BTreeMap<String, Json>,
    pub replications: u32,
    pub seed: u64,
    pub quick_params: BTreeMap<String, Json>,
    pub quick_replications: Option<u32>,
    /// Run replications in rounds until this precision is met (simulations only).
    pub precision: Option<Precision>,
}

/// A series' precision target: replications are added per sweep point, in
/// rounds, until the 95% half-width of `metric` across replications is at
/// most the target, or `max_replications` is reached.
#[derive(Debug, Clone, PartialEq)]
pub struct Precision {
    pub metric: String,
    pub target: PrecisionTarget,
    pub max_replications: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PrecisionTarget {
    /// Half-width at most this fraction of |mean| (`rel_half_width`).
    Relative(f64),
    /// Half-width at most this value (`half_width`).
    Absolute(f64),
}

impl PrecisionTarget {
    /// The largest half-width that meets the target for a mean of `mean`.
    pub fn half_width_for(self, mean: f64) -> f64 {
        match self {
            PrecisionTarget::Relative(r) => r * mean.abs(),
            PrecisionTarget::Absolute(h) => h,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub x: String,
    pub y: Vec<String>,
    pub series: Vec<String>,
    pub xlabel: String,
    pub ylabel: String,
    pub log_y: bool,
    /// What the x-axis is ([`figure`]): a sweep axis by default.
    pub kind: FigureKind,
    pub x_per: Option<String>,
    pub x_values: Vec<f64>,
    /// How it is drawn (`layout:`; cosmetic: in no task key).
    pub layout: reports::FigureOptions,
}

/// One point of the sweep: its index in sweep order and the axis values.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    pub values: BTreeMap<String, Json>,
}

impl Point {
    /// Canonical JSON object of the axis values.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.values).expect("point serialises")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    pub text: String,
    /// Hex SHA-256 of `text`.
    pub hash: String,
    pub id: String,
    pub title: String,
    pub source: String,
    pub description: String,
    pub version: i64,
    pub params: BTreeMap<String, Json>,
    /// Names of the sweep axes (zipped members included), in order.
    pub axes: Vec<String>,
    /// Every sweep point, computed from its index on demand.
    pub points: Points,
    pub series: Vec<Series>,
    pub compare: Vec<Compare>,
    pub figures: Vec<Figure>,
    pub tables: Vec<TableSpec>,
    /// Paper numbers ([`reference`]).
    pub references: Vec<Reference>,
    /// Programs this manifest declares as solvers (`solvers:`), seen by its
    /// own series only; [`with_declared`] adds them to a registry.
    pub solvers: Vec<std::sync::Arc<external::ExternalSolver>>,
    /// The claims: `claims:` first, then one per `compare:` entry with a tolerance.
    pub claims: Vec<Claim>,
    /// `calibrated:` ([`claims`]).
    pub calibrated: Option<Calibrated>,
}

impl Manifest {
    pub fn series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }

    /// The solver `name` as this manifest sees it: a program it declares, or
    /// else the registry's.
    pub fn solver(
        &self,
        name: &str,
        registry: &solvers::Registry,
    ) -> Option<std::sync::Arc<dyn solvers::Solver>> {
        use solvers::Solver;
        match self.solvers.iter().find(|s| s.name() == name) {
            Some(s) => Some(s.clone()),
            None => registry.get(name),
        }
    }
}

#[cfg(test)]
mod tests;
