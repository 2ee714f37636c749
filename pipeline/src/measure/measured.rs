//! What measure hands render: one experiment at one fidelity, measured
//! ([`Measured`]). Everything the reports show of it is here (values, error
//! measures and verdicts, their summaries per compared quantity and per
//! figure or table, replications and unmet precision targets, the comparison
//! with its previous stored version); render draws and writes it, and never
//! reads the store or measures anything itself.
//!
//! Commands make one with [`planned`] (the plan a run used) or [`stored`]
//! (what the store holds of a stored experiment at a fidelity), then hand it
//! to `render::render_experiment`. Both evaluate the experiment's claims and
//! read the claim ledger (`planned` also records the run's evaluations). To show something new in the reports,
//! add it here and read it there.

use super::claims::{evaluate_claims, ledger, ClaimResult};
use super::compare::{previous_version, Comparison, History};
use super::{
    collect_at, collect_plan_with, error_measures, precision, verdict_of, ExperimentResults,
    Records,
};
use crate::manifest::{Manifest, TableKind};
use reports::{EmPoint, EmSummaryLine, OutputEm};
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use store::{ClaimDefinitionRow, ErrorMeasureRow, PlanRow, Store};

/// One experiment at one fidelity, measured: everything its figures, tables,
/// index entry and `check` verdict show.
pub struct Measured {
    /// Values per (point, series, metric), statuses, the task records behind them.
    pub results: ExperimentResults,
    /// Every `compare` entry at every point, with its verdict.
    pub error_measures: Vec<ErrorMeasureRow>,
    /// Every claim of the manifest, evaluated, with its earlier definitions
    /// that had results (the ledger).
    pub claims: Vec<ClaimResult>,
    /// Claims with results that the manifest no longer has.
    pub removed_claims: Vec<ClaimDefinitionRow>,
    /// One line per compared (metric, reference, candidate), in order of first appearance.
    pub em_summary: Vec<EmSummaryLine>,
    /// The EMs of the comparisons each figure draws, by figure id (figures
    /// that draw no compared pair are absent).
    pub figure_ems: BTreeMap<String, OutputEm>,
    /// The EMs an error-measures table lists, by table id.
    pub table_ems: BTreeMap<String, OutputEm>,
    /// Replications per (experiment, series, point index) of every
    /// simulation series with a precision target or more replications than
    /// it plans.
    pub replications: Vec<((String, String, usize), u32)>,
    /// Precision targets not met at `max_replications`: (experiment, series,
    /// point index, replications, half-width, target).
    pub unmet: Vec<(String, String, usize, u32, Option<f64>, f64)>,
    /// The previous stored version against this one, when the store holds one
    /// with results at this fidelity.
    pub previous: Option<Comparison>,
}

impl Measured {
    pub fn manifest(&self) -> &Manifest {
        &self.results.manifest
    }
}

/// Measures the results of the plan rows a run used (its fidelity's plan,
/// with every round of replications it ran); the claims' evaluations are
/// recorded in the ledger under run `run`. Task results are read through
/// `records` (those the run's rounds of replications read already are not
/// read again).
#[allow(clippy::too_many_arguments)]
pub async fn planned(
    store: &Store,
    records: &mut Records,
    m: &Manifest,
    rows: &[PlanRow],
    registry: &Registry,
    fidelity: Fidelity,
    history: &History,
    run: i64,
) -> anyhow::Result<Measured> {
    let r = collect_plan_with(store, records, m, rows).await?;
    with_store(store, r, registry, fidelity, history, Some(run)).await
}

/// Measures what the store holds of a stored experiment at `fidelity` (a
/// fresh plan, its precision rounds replayed); `None` when it holds no
/// results of it at that fidelity.
pub async fn stored(
    store: &Store,
    m: &Manifest,
    registry: &Registry,
    fidelity: Fidelity,
    history: &History,
) -> anyhow::Result<Option<Measured>> {
    let Some(r) = collect_at(store, m, registry, fidelity).await? else {
        return Ok(None);
    };
    Ok(Some(
        with_store(store, r, registry, fidelity, history, None).await?,
    ))
}

/// [`measured`], with what the store adds: the claim ledger (recording this
/// run's evaluations when `run` is given) and the previous version.
async fn with_store(
    store: &Store,
    r: ExperimentResults,
    registry: &Registry,
    fidelity: Fidelity,
    history: &History,
    run: Option<i64>,
) -> anyhow::Result<Measured> {
    let (id, version) = (r.manifest.id.clone(), r.manifest.version);
    let previous = previous_version(store, registry, history, &id, version, fidelity).await?;
    let mut x = measured(r, registry, fidelity)?;
    x.removed_claims = ledger(store, run, fidelity.as_str(), &id, &mut x.claims).await?;
    x.previous = previous;
    Ok(x)
}

/// Measures results already collected (claims evaluated, without their
/// ledger or a comparison to an earlier version).
pub fn measured(
    r: ExperimentResults,
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Measured> {
    let ems = error_measures(&r);
    let m = &r.manifest;
    let mut figure_ems = BTreeMap::new();
    for f in &m.figures {
        if figure_ems.contains_key(&f.id) {
            continue;
        }
        let drawn = |e: &ErrorMeasureRow| {
            f.y.contains(&e.metric)
                && f.series.contains(&e.reference)
                && f.series.contains(&e.candidate)
        };
        if let Some(em) = output_em(&ems, drawn)? {
            figure_ems.insert(f.id.clone(), em);
        }
    }
    let mut table_ems = BTreeMap::new();
    for t in &m.tables {
        if t.kind == TableKind::ErrorMeasures && !table_ems.contains_key(&t.id) {
            if let Some(em) = output_em(&ems, |_| true)? {
                table_ems.insert(t.id.clone(), em);
            }
        }
    }
    let (replications, unmet) = precision::report(&r, registry, fidelity);
    Ok(Measured {
        em_summary: em_summary(&ems)?,
        claims: evaluate_claims(&r, &ems, fidelity),
        removed_claims: Vec::new(),
        error_measures: ems,
        figure_ems,
        table_ems,
        replications,
        unmet,
        previous: None,
        results: r,
    })
}

/// Error measures as the aggregations of `reports` take them.
fn em_points(rows: &[ErrorMeasureRow]) -> Vec<EmPoint<'_>> {
    rows.iter()
        .map(|r| EmPoint {
            metric: &r.metric,
            reference: &r.reference,
            candidate: &r.candidate,
            em: r.em,
            tolerance: r.tolerance,
            verdict: verdict_of(r),
        })
        .collect()
}

/// One line per compared (metric, reference, candidate), in order of first
/// appearance (a polars group-by in `reports`).
pub fn em_summary(rows: &[ErrorMeasureRow]) -> anyhow::Result<Vec<EmSummaryLine>> {
    Ok(reports::em_summary_lines(&em_points(rows))?)
}

/// Error measures over the rows that `keep` selects (`None` when it selects
/// none), aggregated by polars in `reports`.
fn output_em(
    ems: &[ErrorMeasureRow],
    keep: impl Fn(&ErrorMeasureRow) -> bool,
) -> anyhow::Result<Option<OutputEm>> {
    let rows: Vec<ErrorMeasureRow> = ems.iter().filter(|e| keep(e)).cloned().collect();
    Ok(reports::output_em(&em_points(&rows))?)
}
