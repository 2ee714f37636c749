//! Claims evaluated against measured results: each claim's verdict (holds,
//! fails, inconclusive) over the CIs of the values it reads, its status
//! against its expectation, the points it was judged at and every comparison
//! made, for `check`, the store's ledger and the reports.
//!
//! Points: a claim runs over the sweep points its `points:` selects. A point
//! where a value the claim reads is missing (its series saturated, undefined,
//! failed or not run, or without that metric) is left out and listed with
//! the claim ("evaluated at 4 of 6 points; 2 left out: sim saturated"); a
//! claim with no point left is inconclusive.
//!
//! Fidelity: at `--quick` a claim marked `quick: { expect: inconclusive }` is
//! expected to be inconclusive ([`ClaimStatus::InconclusiveAtQuick`]) and a
//! decided verdict is a surprise ([`ClaimStatus::DecidedAtQuick`]); a mark
//! `expect: holds` or `fails` stands for `expect:` at `--quick`; at full
//! fidelity the mark is ignored. The verdict itself never depends on the mark.
//!
//! Tolerance claims (`compare:` with a tolerance) keep today's verdicts: they
//! hold when every point passes, fail when one fails, and are inconclusive
//! otherwise.

use super::{verdict_of, ExperimentResults, PointStatus};
use crate::manifest::claims::select_points_of;
use crate::manifest::predicate::interval::{evaluate, Env, Interval, Step, Truth};
use crate::manifest::predicate::{metrics, saturation_series};
use crate::manifest::{Claim, Manifest};
use serde::Serialize;
use serde_json::Value as Json;
use solvers::Fidelity;
use store::{ClaimDefinitionRow, ClaimRecord, ErrorMeasureRow, Store};
use verdicts::{ClaimKind, ClaimStatus, PointVerdict, Verdict};

/// A claim as evaluated.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    pub experiment: String,
    pub version: i64,
    pub id: String,
    pub kind: ClaimKind,
    pub quote: String,
    #[serde(rename = "where")]
    pub where_: String,
    pub entries: Vec<String>,
    pub holds: String,
    pub points_filter: Option<String>,
    pub tolerance: Option<f64>,
    pub expect: verdicts::Expectation,
    pub why: Option<String>,
    /// `quick:` mark: the verdict expected at `--quick` (inconclusive), and why.
    pub quick_expect: Option<Verdict>,
    pub quick_why: Option<String>,
    pub note: Option<String>,
    pub sanity: Option<String>,
    pub fit: Option<String>,
    pub verdict: Verdict,
    pub status: ClaimStatus,
    /// Why it is inconclusive, when it is for want of results.
    pub reason: Option<String>,
    /// Points judged (sweep indices).
    pub points: Vec<usize>,
    /// Points left out, with why.
    pub skipped: Vec<(usize, String)>,
    /// Every comparison made (text of the comparison, point as JSON).
    pub steps: Vec<StepRow>,
    /// SHA-256 of the definition ([`Claim::definition`]).
    pub definition_hash: String,
    pub definition: Json,
    /// Earlier definitions of this claim that had results (the ledger),
    /// oldest first; empty when none.
    pub history: Vec<ClaimDefinitionRow>,
    /// When this definition was first evaluated (the ledger), RFC 3339.
    pub first_evaluated: Option<String>,
}

/// One comparison, for the reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepRow {
    pub text: String,
    /// The point (axis values as JSON), `None` for a comparison of aggregates.
    pub point: Option<String>,
    pub lhs: Interval,
    pub op: String,
    pub rhs: Interval,
    pub truth: Truth,
}

impl ClaimResult {
    /// Counts towards an entry's status (neither a sanity check nor a fit).
    pub fn is_checkable(&self) -> bool {
        self.sanity.is_none() && self.fit.is_none()
    }
}

struct ResultsEnv<'a>(&'a ExperimentResults);

impl Env for ResultsEnv<'_> {
    fn metric(&self, point: usize, series: &str, metric: &str) -> Interval {
        match self.0.get(point, series, metric) {
            Some(a) => Interval::around(a.value, a.half_width),
            None => Interval::ENTIRE,
        }
    }
    fn name(&self, point: usize, name: &str) -> f64 {
        self.0
            .x_of(point, name)
            .or_else(|| self.0.manifest.params.get(name).and_then(Json::as_f64))
            .unwrap_or(f64::NAN)
    }
    fn saturated(&self, point: usize, series: &str) -> Truth {
        match self.0.status.get(&(point, series.to_string())) {
            Some(PointStatus::Saturated) => Truth::True,
            Some(PointStatus::Done | PointStatus::Undefined) => Truth::False,
            _ => Truth::Unknown,
        }
    }
}

/// A claim's tolerance (tolerance claims), its definition as the ledger keeps
/// it ([`Claim::definition`]) and that definition's SHA-256 (hex).
pub fn definition_of(m: &Manifest, c: &Claim) -> (Option<f64>, Json, String) {
    let tolerance = c
        .compare
        .and_then(|i| m.compare.get(i))
        .and_then(|x| x.tolerance);
    let definition = c.definition(tolerance);
    let hash = {
        use sha2::Digest;
        hex::encode(sha2::Sha256::digest(definition.to_string().as_bytes()))
    };
    (tolerance, definition, hash)
}

/// Every claim of the experiment, evaluated. `ems` are its error measures
/// (for tolerance claims); `fidelity` is the results' (it decides whether
/// `quick:` marks apply).
pub fn evaluate_claims(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    fidelity: Fidelity,
) -> Vec<ClaimResult> {
    r.manifest
        .claims
        .iter()
        .map(|c| evaluate_claim(r, ems, c, fidelity))
        .collect()
}

fn evaluate_claim(
    r: &ExperimentResults,
    ems: &[ErrorMeasureRow],
    c: &Claim,
    fidelity: Fidelity,
) -> ClaimResult {
    let m = &r.manifest;
    let (tolerance, definition, definition_hash) = definition_of(m, c);
    let point_json = |i: usize| m.points.get(i).map(|p| p.json());
    let (verdict, reason, points, skipped, steps) = match (&c.predicate, c.compare) {
        (Some(e), _) => {
            let selected = select_points_of(c.points_expr.as_ref(), &m.axes, &m.params, &m.points);
            let reads = metrics(e);
            let mut points = Vec::new();
            let mut skipped = Vec::new();
            for p in selected {
                let mut why = None;
                for (s, metric) in &reads {
                    match r.status.get(&(p, s.clone())) {
                        Some(PointStatus::Done) if r.get(p, s, metric).is_some() => {}
                        Some(PointStatus::Done) => {
                            why.get_or_insert(format!("{s} has no {metric}"));
                        }
                        Some(st) => {
                            why.get_or_insert(format!("{s} {st}"));
                        }
                        None => {
                            why.get_or_insert(format!("{s} not run"));
                        }
                    }
                }
                for s in saturation_series(e) {
                    match r.status.get(&(p, s.clone())) {
                        Some(
                            PointStatus::Done | PointStatus::Saturated | PointStatus::Undefined,
                        ) => {}
                        Some(st) => {
                            why.get_or_insert(format!("{s} {st}"));
                        }
                        None => {
                            why.get_or_insert(format!("{s} not run"));
                        }
                    }
                }
                match why {
                    Some(w) => skipped.push((p, w)),
                    None => points.push(p),
                }
            }
            let (truth, raw_steps) = evaluate(e, &ResultsEnv(r), &points, &m.axes);
            let verdict = Verdict::from(truth);
            let reason = points
                .is_empty()
                .then(|| "no point left to judge (every selected point left out)".to_string());
            let steps = raw_steps
                .into_iter()
                .map(|s: Step| StepRow {
                    text: c.holds.get(s.span.0..s.span.1).unwrap_or("").to_string(),
                    point: s.point.and_then(point_json),
                    lhs: s.lhs,
                    op: s.op.to_string(),
                    rhs: s.rhs,
                    truth: s.truth,
                })
                .collect();
            (verdict, reason, points, skipped, steps)
        }
        (None, Some(i)) => {
            let cmp = &m.compare[i];
            let rows: Vec<&ErrorMeasureRow> = ems
                .iter()
                .filter(|e| {
                    e.metric == cmp.metric
                        && e.reference == cmp.reference
                        && e.candidate == cmp.candidate
                })
                .collect();
            let vs: Vec<PointVerdict> = rows.iter().map(|e| verdict_of(e)).collect();
            let verdict = if vs.contains(&PointVerdict::Fail) {
                Verdict::Fails
            } else if vs.is_empty() || vs.iter().any(|v| *v != PointVerdict::Pass) {
                Verdict::Inconclusive
            } else {
                Verdict::Holds
            };
            let steps = rows
                .iter()
                .map(|e| {
                    let h = match (e.reference_half_width, e.reference_value) {
                        (Some(hw), Some(v)) if v != 0.0 => Some(hw / v.abs()),
                        _ => None,
                    };
                    StepRow {
                        text: "EM".into(),
                        point: Some(e.point.clone()),
                        lhs: e.em.map_or(Interval::ENTIRE, |x| Interval::around(x, h)),
                        op: "<=".into(),
                        rhs: Interval::exact(e.tolerance.unwrap_or(f64::NAN)),
                        truth: match verdict_of(e) {
                            PointVerdict::Pass => Truth::True,
                            PointVerdict::Fail => Truth::False,
                            _ => Truth::Unknown,
                        },
                    }
                })
                .collect();
            let points = rows.iter().map(|e| e.point_index as usize).collect();
            (verdict, None, points, Vec::new(), steps)
        }
        (None, None) => (
            Verdict::Inconclusive,
            Some("nothing to evaluate".into()),
            Vec::new(),
            Vec::new(),
            Vec::new(),
        ),
    };
    ClaimResult {
        experiment: m.id.clone(),
        version: m.version,
        id: c.id.clone(),
        kind: c.kind,
        quote: c.quote.clone(),
        where_: c.where_.clone(),
        entries: c.entries.clone(),
        holds: c.holds.clone(),
        points_filter: c.points.clone(),
        tolerance,
        expect: c.expect,
        why: c.why.clone(),
        quick_expect: c.quick.as_ref().map(|q| q.expect),
        quick_why: c.quick.as_ref().map(|q| q.why.clone()),
        note: c.note.clone(),
        sanity: c.sanity.clone(),
        fit: c.fit.clone(),
        verdict,
        status: ClaimStatus::at(verdict, c.expect, c.quick_expect_at(fidelity)),
        reason,
        points,
        skipped,
        steps,
        definition_hash,
        definition,
        history: Vec::new(),
        first_evaluated: None,
    }
}

/// The ledger: records this run's evaluations of one experiment's claims
/// (`run` = None: reading only, as `repro report` does), fills each claim's
/// history with its earlier definitions that had results, and returns the
/// definitions of claims the manifest no longer has (removed after results).
pub async fn ledger(
    store: &Store,
    run: Option<i64>,
    fidelity: &str,
    experiment: &str,
    results: &mut [ClaimResult],
) -> anyhow::Result<Vec<ClaimDefinitionRow>> {
    if let Some(run) = run {
        let records: Vec<ClaimRecord> = results
            .iter()
            .map(|c| ClaimRecord {
                experiment: c.experiment.clone(),
                version: c.version,
                claim_id: c.id.clone(),
                hash: c.definition_hash.clone(),
                definition: c.definition.to_string(),
                verdict: c.verdict,
            })
            .collect();
        store.record_claims(run, fidelity, &records).await?;
    }
    let defs = store.claim_definitions(experiment).await?;
    for c in results.iter_mut() {
        c.first_evaluated = defs
            .iter()
            .find(|d| d.claim_id == c.id && d.hash == c.definition_hash)
            .map(|d| d.first_seen.clone());
        c.history = defs
            .iter()
            .filter(|d| d.claim_id == c.id && d.hash != c.definition_hash)
            .cloned()
            .collect();
    }
    Ok(defs
        .into_iter()
        .filter(|d| !results.iter().any(|c| c.id == d.claim_id))
        .collect())
}

/// (series, point) pairs of simulation series that an inconclusive predicate
/// claim read: where `check --resolve` adds replications. A claim
/// inconclusive at `--quick` as its `quick:` mark says is left alone: its
/// mark states what a quick run shows, and the full run decides it.
pub fn undecided(results: &[ClaimResult], r: &ExperimentResults) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for c in results
        .iter()
        .filter(|c| c.status == ClaimStatus::Inconclusive && c.kind == ClaimKind::Predicate)
    {
        let Some(claim) = r.manifest.claims.iter().find(|x| x.id == c.id) else {
            continue;
        };
        let Some(e) = &claim.predicate else { continue };
        for (s, metric) in metrics(e) {
            for &p in &c.points {
                let has_ci = r
                    .get(p, &s, &metric)
                    .is_some_and(|a| a.half_width.is_some());
                if has_ci && !out.contains(&(s.clone(), p)) {
                    out.push((s.clone(), p));
                }
            }
        }
    }
    out
}
