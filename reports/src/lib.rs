//! Error measures, figures (plotters: PNG + SVG), tables (Markdown + CSV), the
//! HTML index and tidy exports.
//!
//! Architecture invariant: reports renders what it is given. It neither runs
//! solvers nor opens the database; the pipeline reads the store and hands
//! reports plain data, so `repro report` re-renders from the store alone.
//!
//! Modules: `figure` (one drawing routine,
//! generic over the plotters backend, for PNG and SVG; `axis` picks the ticks,
//! `fonts` registers the bundled DejaVu Sans, as CI has no system fonts),
//! `table` (Markdown + CSV), `index` (self-contained `index.html`), `export`
//! (tidy CSV and JSON), `frame` (the tidy results table as a polars
//! `DataFrame`, Parquet and Arrow IPC files), `aggregate` (error-measure
//! summaries and value-table pivots as polars expressions), `versions` (two
//! versions of an experiment joined, their differences and overlay figures)
//! and `format` (tick labels, EM percentages).
//! `cargo run --release -p reports --example demo [dir]` renders samples of all.

mod aggregate;
mod atomic;
mod axis;
mod claims;
mod export;
mod figure;
mod fonts;
mod format;
mod frame;
mod index;
mod legend;
mod options;
mod records;
mod style;
mod table;
mod vector;
mod versions;

pub use aggregate::{em_summary_lines, output_em, pivot_cells, EmPoint, LongCell};
pub use atomic::{copy_atomic, write_atomic, AtomicFile};
pub use claims::{interval as format_interval, quick_counts};
pub use export::{axis_columns, tidy_json, write_tidy_csv, TIDY_HEADER, TIDY_TAIL};
pub use figure::{figure_alt, figure_csv, figure_size_px, render_figure, render_figure_with};
pub use fonts::{ensure_fonts, FAMILY as FONT_FAMILY};
pub use format::TickFormat;
pub use format::{format_em, format_percent, format_tick, unify_number_columns};
pub use frame::{tidy_frame, write_arrow, write_parquet, FRAME_HEAD, FRAME_TAIL};
pub use index::{html_escape, index_html, write_index};
pub use options::{FigureOptions, FigureOverrides, LegendPosition, Length};
/// The data-frame type of [`tidy_frame`] and [`compare_frame`].
pub use polars::prelude::DataFrame;
pub use records::{Records, Values};
pub use style::{DASH_COUNT, PALETTE_LEN};
pub use table::{table_csv, table_markdown, write_table};
pub use vector::PNG_SCALE;
pub use versions::{
    compare_frame, compare_table, full_percent, overlay_figure, version_diffs, VersionDiff,
    VersionValue,
};

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Why an output could not be made; its cause (an I/O, CSV or polars error,
/// or the reason a figure cannot be drawn) is kept as the error's source.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("cannot write {path}")]
    Write {
        path: String,
        #[source]
        cause: Cause,
    },
    #[error("cannot draw figure {id}")]
    Draw {
        id: String,
        #[source]
        cause: Cause,
    },
    /// A data-frame operation (polars) failed.
    #[error("data frame ({what})")]
    Frame {
        what: String,
        #[source]
        cause: Cause,
    },
}

/// The cause of a [`ReportError`]: any error, or a message where the cause
/// is only text (`String` and `&str` convert into it).
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

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

pub(crate) fn write_err(path: &Path, e: impl Into<Cause>) -> ReportError {
    ReportError::Write {
        path: path.display().to_string(),
        cause: e.into(),
    }
}

/// A header and its rows as CSV text (for the CSV files beside the index and
/// the figures); errors name `path`.
pub(crate) fn csv_text<R, F>(path: &Path, header: &[&str], rows: R) -> Result<String>
where
    R: IntoIterator,
    R::Item: IntoIterator<Item = F>,
    F: AsRef<[u8]>,
{
    let err = |e: csv::Error| write_err(path, e);
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header).map_err(err)?;
    for row in rows {
        w.write_record(row).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| err(e.into_error().into()))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A value with its optional 95% half-width.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Value {
    pub value: f64,
    pub half_width: Option<f64>,
    /// Replications (or batches) behind the value, when known.
    #[serde(default)]
    pub n: Option<i64>,
}

impl Value {
    /// A value without a CI.
    pub fn exact(value: f64) -> Value {
        Value {
            value,
            half_width: None,
            n: None,
        }
    }
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
    /// The series' name in its manifest (the figure's CSV `series` column).
    #[serde(default)]
    pub name: String,
    /// The metric drawn (the CSV's `metric` column).
    #[serde(default)]
    pub metric: String,
    /// When each point is a different metric (a `metrics` figure): their
    /// names, point by point, for the CSV.
    #[serde(default)]
    pub point_metrics: Vec<String>,
    pub style: SeriesStyle,
    /// (x, value). `None` = no value at that x (failed or saturated point).
    pub points: Vec<(f64, Option<Value>)>,
    /// Palette index. Series that share it share a colour (a model and the
    /// simulation it is compared with); `None`: the series' own position.
    #[serde(default)]
    pub colour: Option<usize>,
    /// Within a colour: the dash pattern of a line (0 solid, 1 dashed, 2
    /// dotted, 3 dash-dot, ..; [`DASH_COUNT`] of them) or the shape of markers.
    #[serde(default)]
    pub variant: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub xlabel: String,
    pub ylabel: String,
    pub log_y: bool,
    #[serde(default)]
    pub log_x: bool,
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
    /// When the page was written (RFC 3339 UTC).
    pub generated_at: String,
    /// "full" (the paper figures) or "quick" (CI fidelity: shorter simulations).
    pub fidelity: String,
    /// (label, relative href) of the other fidelity's index, when it exists.
    pub other_fidelity: Option<(String, String)>,
    /// The papers' figures and tables in order (`docs/catalogue.yaml`): the summary
    /// table at the top of the page has one row per entry.
    pub catalogue: Vec<CatalogueEntry>,
    pub experiments: Vec<IndexExperiment>,
    /// Each catalogue entry's (and each of the project's own outputs')
    /// status, derived from its claims by the measure stage.
    #[serde(default)]
    pub statuses: Vec<IndexEntryStatus>,
}

/// An entry's status and the claim counts behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexEntryStatus {
    pub id: String,
    pub status: verdicts::EntryStatus,
    /// Checkable claims (neither sanity checks nor fits) that hold, of `checkable`.
    pub holding: usize,
    pub checkable: usize,
    pub sanity: usize,
    pub fits: usize,
}

/// One claim as the index shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexClaim {
    pub id: String,
    pub kind: verdicts::ClaimKind,
    pub quote: String,
    #[serde(rename = "where")]
    pub where_: String,
    pub entries: Vec<String>,
    /// The predicate (tolerance claims: what is compared).
    pub holds: String,
    pub points: Option<String>,
    pub expect: verdicts::Expectation,
    pub why: Option<String>,
    /// `quick:` mark: the verdict expected at `--quick` (inconclusive) and
    /// why (the quick numbers); shown beside `expect`.
    #[serde(default)]
    pub quick_expect: Option<verdicts::Verdict>,
    #[serde(default)]
    pub quick_why: Option<String>,
    pub note: Option<String>,
    /// Why it cannot fail (a sanity check), if so.
    pub sanity: Option<String>,
    /// Why its agreement is a fit, if so.
    pub fit: Option<String>,
    pub verdict: verdicts::Verdict,
    pub status: verdicts::ClaimStatus,
    pub reason: Option<String>,
    pub evaluated: usize,
    /// Points left out, with why.
    pub skipped: Vec<(String, String)>,
    pub steps: Vec<IndexClaimStep>,
    /// Earlier definitions that had results.
    pub history: Vec<IndexClaimChange>,
    /// The current definition (canonical JSON, as the ledger keeps it).
    #[serde(default)]
    pub definition: String,
    /// When the current definition was first evaluated (RFC 3339), from the
    /// ledger; `None` before it is recorded.
    #[serde(default)]
    pub first_evaluated: Option<String>,
}

/// One comparison a claim made: both sides as intervals (lo, hi).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexClaimStep {
    pub text: String,
    /// The point (axis values as JSON); `None` for aggregates.
    pub point: Option<String>,
    pub lhs: (f64, f64),
    pub op: String,
    pub rhs: (f64, f64),
    pub verdict: verdicts::Verdict,
}

/// An earlier definition of a claim that had results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexClaimChange {
    pub id: String,
    /// Canonical JSON of the old definition.
    pub definition: String,
    pub first_evaluated: String,
    pub last_evaluated: String,
    pub last_verdict: verdicts::Verdict,
}

/// One figure or table of a paper, as listed in `docs/catalogue.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CatalogueEntry {
    pub id: String,
    pub paper: String,
    pub what: String,
    /// The paper's figure is a measurement on real hardware: with outputs,
    /// its status is "reference: hardware".
    #[serde(default)]
    pub hardware: bool,
}

/// Where one series' results come from: a row of `provenance/<experiment>.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeriesProvenance {
    pub series: String,
    pub solver: String,
    pub solver_version: i64,
    pub tasks: usize,
    /// Sum of the tasks' wall times, seconds.
    pub wall_s: f64,
    /// Simulations only: the series' base seed and the fidelity its tasks ran at.
    pub base_seed: Option<u64>,
    pub fidelity: Option<String>,
    pub points: usize,
    /// (status, count) of its points without a value: undefined, saturated,
    /// failed, missing; only counts above zero.
    pub without_value: Vec<(String, usize)>,
}

/// Error measures over the compared points one figure or table shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputEm {
    pub mean_em: Option<f64>,
    pub max_em: Option<f64>,
    pub passed: usize,
    pub failed: usize,
    pub inconclusive: usize,
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
    /// Manifest, task counts, wall times: (label, value) pairs shown as provenance.
    pub provenance: Vec<(String, String)>,
    /// Per series: solver, tasks, wall time, base seed (written to
    /// `provenance/<id>.csv` beside the index, its points without a value shown).
    #[serde(default)]
    pub series: Vec<SeriesProvenance>,
    /// EM summaries: one line per compared metric.
    pub em_summary: Vec<EmSummaryLine>,
    /// (name, relative href) of the model documents (`docs/models/*.md`) behind it.
    pub docs: Vec<(String, String)>,
    /// When the store holds more than one version: the previous version
    /// against this one.
    #[serde(default)]
    pub comparison: Option<IndexComparison>,
    /// Its claims, evaluated.
    #[serde(default)]
    pub claims: Vec<IndexClaim>,
    /// Claims it had, with results, that its manifest no longer has.
    #[serde(default)]
    pub removed_claims: Vec<IndexClaimChange>,
    /// What its `calibrated:` says the parameters were fitted against.
    #[serde(default)]
    pub calibrated_against: Vec<String>,
}

/// Two versions of an experiment compared: overlay figures and the per-point
/// difference table (`repro compare A B --figure`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexComparison {
    /// `id@version` of each side.
    pub a: String,
    pub b: String,
    /// What differs between them (parameters, solver versions, code version).
    pub differences: Vec<String>,
    pub figures: Vec<IndexFigure>,
    pub table: IndexTable,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexFigure {
    pub id: String,
    pub title: String,
    pub png: String,
    pub svg: String,
    /// What the figure shows, for the image's alt text ([`figure_alt`]).
    #[serde(default)]
    pub alt: String,
    /// Error measures of the comparisons drawn in it (`None`: nothing compared).
    pub em: Option<OutputEm>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexTable {
    pub id: String,
    pub title: String,
    pub markdown: String,
    pub csv: String,
    /// The table itself, inlined into the page.
    pub table: Table,
    /// Error measures of the comparisons it lists (`None`: nothing compared).
    pub em: Option<OutputEm>,
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

/// One row of the tidy export (`repro export`). CSV and JSON carry the
/// columns up to `n`; the data frame (Parquet, Arrow) all of them.
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
    /// "done", "saturated", "undefined", ... of the point's series.
    pub status: String,
    /// "quick", "full" or "any" (analytic tasks).
    pub fidelity: String,
    /// The code version (`git describe`) of the run that computed the value;
    /// empty when unknown (reference data, a task no run recorded).
    pub code_version: String,
}
