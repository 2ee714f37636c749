//! Error measures, figures (plotters: PNG + SVG), tables (Markdown + CSV), the
//! HTML index and tidy exports.
//!
//! Architecture invariant: reports renders what it is given. It neither runs
//! solvers nor opens the database; the pipeline reads the store and hands
//! reports plain data, so `repro report` re-renders from the store alone.
//!
//! Modules: `em` (error measures, verdicts), `figure` (one drawing routine,
//! generic over the plotters backend, for PNG and SVG; `axis` picks the ticks,
//! `fonts` registers the bundled DejaVu Sans, as CI has no system fonts),
//! `table` (Markdown + CSV), `index` (self-contained `index.html`), `export`
//! (tidy CSV) and `format` (tick labels, EM percentages).
//! `cargo run --release -p reports --example demo [dir]` renders samples of all.

pub mod em;

mod axis;
mod export;
mod figure;
mod fonts;
mod format;
mod index;
mod table;

pub use export::{write_tidy_csv, TIDY_HEADER};
pub use figure::{render_figure, FIGURE_SIZE};
pub use fonts::{ensure_fonts, FAMILY as FONT_FAMILY};
pub use format::{format_em, format_percent, format_tick};
pub use index::{html_escape, index_html, write_index};
pub use table::{table_csv, table_markdown, write_table};

use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}: {reason}")]
    Write { path: String, reason: String },
    #[error("cannot draw figure {id}: {reason}")]
    Draw { id: String, reason: String },
}

pub type Result<T> = std::result::Result<T, ReportError>;

/// Figure and table ids become file names: refuse anything that could leave
/// the output directory or is not a file name at all.
pub(crate) fn check_id(id: &str) -> std::result::Result<(), String> {
    let bad = id.is_empty()
        || id == "."
        || id == ".."
        || id.chars().any(|c| matches!(c, '/' | '\\' | '\0'));
    if bad {
        Err(format!("id {id:?} is not a plain file name"))
    } else {
        Ok(())
    }
}

pub(crate) fn write_err(path: &Path, e: impl std::fmt::Display) -> ReportError {
    ReportError::Write {
        path: path.display().to_string(),
        reason: e.to_string(),
    }
}

/// A value with its optional 95% half-width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub value: f64,
    pub half_width: Option<f64>,
}

/// How a series is drawn: models as lines, simulations as markers with CI bars,
/// reference data (numbers printed in a paper) as hollow markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SeriesStyle {
    Line,
    Markers,
    Reference,
    /// A dense simulated time series: a thin line without markers.
    Trace,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureSeries {
    /// Legend label, e.g. "model (credit.ctmc)".
    pub label: String,
    pub style: SeriesStyle,
    /// (x, value). `None` = no value at that x (failed or saturated point).
    pub points: Vec<(f64, Option<Value>)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub xlabel: String,
    pub ylabel: String,
    pub log_y: bool,
    pub series: Vec<FigureSeries>,
}

/// A plain table: header + rows of already formatted cells.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    pub id: String,
    pub title: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Free text printed under the table (summary lines such as mean/max EM).
    pub notes: Vec<String>,
}

/// Everything `results/index.html` shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Index {
    pub generated_by: String,
    pub code_version: String,
    pub experiments: Vec<IndexExperiment>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexExperiment {
    pub id: String,
    pub version: i64,
    pub title: String,
    pub source: String,
    pub manifest_hash: String,
    /// Relative paths (from index.html) of figure images (PNG; the SVG sits beside).
    pub figures: Vec<IndexFigure>,
    pub tables: Vec<IndexTable>,
    /// Seeds, task counts, wall times: (label, value) pairs shown as provenance.
    pub provenance: Vec<(String, String)>,
    /// EM summaries: one line per compared metric.
    pub em_summary: Vec<EmSummaryLine>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexFigure {
    pub id: String,
    pub title: String,
    pub png: String,
    pub svg: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexTable {
    pub id: String,
    pub title: String,
    pub markdown: String,
    pub csv: String,
    /// The table itself, inlined into the page.
    pub table: Table,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmSummaryLine {
    pub metric: String,
    pub reference: String,
    pub candidate: String,
    pub mean_em: Option<f64>,
    pub max_em: Option<f64>,
    pub tolerance: Option<f64>,
    pub passed: usize,
    pub failed: usize,
    pub inconclusive: usize,
}

/// One row of the tidy export (`repro export --format csv`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TidyRow {
    pub experiment: String,
    pub version: i64,
    pub series: String,
    pub solver: String,
    /// JSON object of the sweep-axis values.
    pub point: String,
    pub metric: String,
    pub value: f64,
    pub half_width: Option<f64>,
    pub n: Option<i64>,
}
