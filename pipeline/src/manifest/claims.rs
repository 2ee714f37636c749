//! `claims:` and `calibrated:`: what the paper says about each entry, as
//! predicates checked at load time, and which parameters were fitted to
//! which numbers. Today's `compare:` entries with a tolerance become claims
//! of the kind "EM <= tolerance at every point" here too, so every check has
//! one shape from here to the reports.
//!
//! ```yaml
//! calibrated: { params: [s1s2_gbps], against: [gran-8a, hw_off] }
//! claims:
//!   - id: root-link-better
//!     quote: "the utilization of the root link is better than ..."
//!     where: "§3.4, Figs 3.4-3.5"
//!     entries: [yan-3.4, yan-3.5]
//!     holds: "pipd.r1_B > pipd.r1_A"
//!     points: "lambda1 <= 0.9 * lambda_star"    # optional
//!     expect: fails                              # optional (default holds)
//!     why: "docs/models/ratecc.md#..."           # required with expect: fails
//!     note: "how the words became a number"      # optional
//!     quick:                                     # optional
//!       expect: inconclusive                     # the only value
//!       why: "at --quick the mean EM is 9.8% ± 1.9% (3 replications); ..."
//! ```
//!
//! `quick:` says that a `--quick` run cannot decide the claim (its CIs
//! straddle the bound there), with the quick numbers. It applies only at quick
//! fidelity: then the expected verdict is inconclusive and a decided one is a
//! surprise (remove the mark). At full fidelity it is ignored.
//!
//! At load every claim is also classified: a **sanity** check (reads no
//! solver output, or holds whatever value its bounded metrics take) and a
//! **fit** (reads numbers the manifest's parameters were calibrated against)
//! are shown apart and never make an entry reproduced (`classify.rs`).

pub use super::classify::select_points_of;
use super::classify::{fit, predicate_sanity, select_points, tolerance_sanity};
use super::metrics::MetricKnowledge;
use super::place::Ctx;
use super::predicate::{self, Expr, Place, Scope};
use super::values::{check_text, shorten};
use super::{Compare, ManifestError, Points, Reference};
use serde::Deserialize;
use serde_json::Value as Json;
use std::collections::{BTreeMap, BTreeSet};
use verdicts::{ClaimKind, Expectation};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawClaim {
    id: String,
    quote: String,
    #[serde(rename = "where")]
    where_: String,
    entries: Vec<String>,
    holds: String,
    #[serde(default)]
    points: Option<String>,
    #[serde(default)]
    expect: Option<Expectation>,
    #[serde(default)]
    why: Option<String>,
    #[serde(default)]
    note: Option<String>,
    #[serde(default)]
    quick: Option<RawQuick>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawQuick {
    #[serde(default)]
    expect: Option<String>,
    #[serde(default)]
    why: Option<String>,
}

/// `quick: { expect: inconclusive|holds|fails, why: ... }`: what a `--quick`
/// run gives where it differs from the claim's full-fidelity `expect:` (most
/// often: cannot decide it); `why` gives the quick numbers. Full-fidelity
/// runs ignore the mark.
#[derive(Debug, Clone, PartialEq)]
pub struct QuickMark {
    /// The verdict expected at `--quick`.
    pub expect: verdicts::Verdict,
    pub why: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCalibrated {
    params: Vec<String>,
    against: Vec<String>,
}

/// `calibrated:`: parameters fitted to numbers, and the entries or reference
/// names those numbers are. Agreement with them is a fit, not a validation.
#[derive(Debug, Clone, PartialEq)]
pub struct Calibrated {
    pub params: Vec<String>,
    pub against: Vec<String>,
}

/// One claim, from `claims:` or from a `compare:` entry with a tolerance.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    pub id: String,
    pub kind: ClaimKind,
    pub quote: String,
    pub where_: String,
    /// Catalogue entries or output (figure/table) ids of this manifest.
    pub entries: Vec<String>,
    /// The predicate as written (tolerance claims: a description).
    pub holds: String,
    /// Parsed and checked (`None` for tolerance claims).
    pub predicate: Option<Expr>,
    pub points: Option<String>,
    pub points_expr: Option<Expr>,
    /// Tolerance claims: the index of their `compare:` entry.
    pub compare: Option<usize>,
    pub expect: Expectation,
    pub why: Option<String>,
    pub note: Option<String>,
    /// `quick:`: expected inconclusive at `--quick` fidelity.
    pub quick: Option<QuickMark>,
    /// Why it cannot fail (`None`: it can).
    pub sanity: Option<String>,
    /// Why its agreement is a fit (`None`: a validation).
    pub fit: Option<String>,
}

impl Claim {
    /// The definition the ledger keeps: everything that decides the verdict or
    /// what it means, as canonical JSON (its SHA-256 identifies it).
    /// A `quick:` mark enters only when present, so definitions written
    /// before marks existed keep their hashes.
    pub fn definition(&self, tolerance: Option<f64>) -> Json {
        let mut d = serde_json::json!({
            "kind": self.kind.as_str(),
            "quote": self.quote,
            "where": self.where_,
            "entries": self.entries,
            "holds": self.holds,
            "points": self.points,
            "tolerance": tolerance,
            "expect": self.expect.as_str(),
            "why": self.why,
        });
        if let Some(q) = &self.quick {
            d["quick"] = serde_json::json!({
                "expect": q.expect.as_str(),
                "why": q.why,
            });
        }
        d
    }

    /// The verdict the `quick:` mark expects in a run at `fidelity` (`None`
    /// at full fidelity or without a mark).
    pub fn quick_expect_at(&self, fidelity: solvers::Fidelity) -> Option<verdicts::Verdict> {
        self.quick
            .as_ref()
            .filter(|_| fidelity == solvers::Fidelity::Quick)
            .map(|q| q.expect)
    }
}

/// What a claim may read, for checking and classifying.
pub(super) struct ClaimScope<'a> {
    pub axes: &'a [String],
    pub params: &'a BTreeMap<String, Json>,
    pub points: &'a Points,
    pub references: &'a [Reference],
    /// Solver series -> what their solvers produce.
    pub metrics: &'a MetricKnowledge,
    /// Catalogue ids and this manifest's figure/table ids.
    pub entries: &'a BTreeSet<String>,
}

pub(super) fn parse_calibrated(
    ctx: &Ctx,
    raw: &Option<RawCalibrated>,
    scope: &ClaimScope,
) -> Result<Option<Calibrated>, ManifestError> {
    let Some(c) = raw else { return Ok(None) };
    if c.params.is_empty() || c.against.is_empty() {
        return Err(ctx.err(
            "calibrated",
            "name the fitted parameters (`params`) and what they were fitted to (`against`)",
        ));
    }
    for p in &c.params {
        let known = scope.params.contains_key(p) || scope.metrics.any_series_takes(p);
        if !known {
            return Err(ctx.err(
                "calibrated.params",
                format!(
                    "`{}` is not a parameter of this manifest or of its series' solvers",
                    shorten(p)
                ),
            ));
        }
    }
    for a in &c.against {
        let is_ref = scope.references.iter().any(|r| {
            &r.name == a
                || a.split_once('.')
                    .is_some_and(|(s, m)| r.name == s && r.values.contains_key(m))
        });
        if !is_ref && !scope.entries.contains(a) {
            return Err(ctx.err(
                "calibrated.against",
                format!(
                    "`{}` is neither a catalogue entry, an output of this manifest, a `reference_data` id nor one of its values (`id.metric`){}",
                    shorten(a),
                    predicate::did_you_mean(a, scope.entries.iter().map(String::as_str).chain(scope.references.iter().map(|r| r.name.as_str())))
                ),
            ));
        }
    }
    Ok(Some(Calibrated {
        params: c.params.clone(),
        against: c.against.clone(),
    }))
}

pub(super) fn parse_claims(
    ctx: &Ctx,
    raw: &[RawClaim],
    scope: &ClaimScope,
    calibrated: Option<&Calibrated>,
) -> Result<Vec<Claim>, ManifestError> {
    let numeric: BTreeMap<String, f64> = scope
        .params
        .iter()
        .filter_map(|(k, v)| v.as_f64().map(|f| (k.clone(), f)))
        .collect();
    let series: Vec<&str> = scope
        .metrics
        .series()
        .chain(scope.references.iter().map(|r| r.name.as_str()))
        .collect();
    let known = |s: &str, m: &str| -> Option<Result<(), Vec<String>>> {
        if let Some(r) = scope.references.iter().find(|r| r.name == s) {
            return Some(if r.values.contains_key(m) {
                Ok(())
            } else {
                Err(r.values.keys().cloned().collect())
            });
        }
        scope.metrics.check(s, m)
    };
    let is_series = |s: &str| scope.metrics.has_series(s);
    let groups = scope.points.groups();
    let pscope = Scope {
        axes: scope.axes,
        groups: &groups,
        params: &numeric,
        metric_known: &known,
        series,
        is_series: &is_series,
    };
    let mut out: Vec<Claim> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let key = |f: &str| format!("claims.{i}.{f}");
        let id_ok = !c.id.is_empty()
            && c.id.len() <= 64
            && c.id
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-');
        if !id_ok {
            return Err(ctx.err(
                &key("id"),
                format!(
                    "`{}` is not a claim id: 1 to 64 of a-z, 0-9 and `-`",
                    shorten(&c.id)
                ),
            ));
        }
        if out.iter().any(|o| o.id == c.id) {
            return Err(ctx.err(&key("id"), format!("claim id `{}` is used twice", c.id)));
        }
        for (f, t) in [
            ("quote", &c.quote),
            ("where", &c.where_),
            ("holds", &c.holds),
        ] {
            check_text(ctx, &key(f), t)?;
            if t.trim().is_empty() {
                return Err(ctx.err(&key(f), "must not be empty"));
            }
        }
        for (f, t) in [("points", &c.points), ("why", &c.why), ("note", &c.note)] {
            if let Some(t) = t {
                check_text(ctx, &key(f), t)?;
            }
        }
        if c.entries.is_empty() {
            return Err(ctx.err(
                &key("entries"),
                "name the entries (figures, tables) the claim is about",
            ));
        }
        for e in &c.entries {
            if !scope.entries.contains(e) {
                return Err(ctx.err(
                    &key("entries"),
                    format!(
                        "`{}` is neither a catalogue entry (docs/catalogue.yaml) nor an output of this manifest{}",
                        shorten(e),
                        predicate::did_you_mean(e, scope.entries.iter().map(String::as_str))
                    ),
                ));
            }
        }
        let expect = c.expect.unwrap_or_default();
        match (expect, &c.why) {
            (Expectation::Fails, None) => {
                return Err(ctx.err(&key("expect"), "a claim expected to fail needs `why:` (the explanation, e.g. a docs/models/ section)"))
            }
            (Expectation::Fails, Some(w)) if w.trim().is_empty() => {
                return Err(ctx.err(&key("why"), "must not be empty"))
            }
            _ => {}
        }
        let quick = parse_quick(ctx, &key("quick"), c.quick.as_ref(), expect)?;
        let pred_err =
            |f: &str, text: &str, e: predicate::PredicateError| ctx.err(&key(f), e.describe(text));
        let parsed = predicate::parse(&c.holds).map_err(|e| pred_err("holds", &c.holds, e))?;
        let checked = predicate::check(&parsed, &pscope, Place::Holds)
            .map_err(|e| pred_err("holds", &c.holds, e))?;
        let points_expr = match &c.points {
            Some(t) => {
                let p = predicate::parse(t).map_err(|e| pred_err("points", t, e))?;
                Some(
                    predicate::check(&p, &pscope, Place::Points)
                        .map_err(|e| pred_err("points", t, e))?,
                )
            }
            None => None,
        };
        let selected = select_points(points_expr.as_ref(), scope);
        if selected.is_empty() {
            return Err(ctx.err(&key("points"), "selects no point of the sweep"));
        }
        let mut claim = Claim {
            id: c.id.clone(),
            kind: ClaimKind::Predicate,
            quote: c.quote.clone(),
            where_: c.where_.clone(),
            entries: c.entries.clone(),
            holds: c.holds.clone(),
            predicate: Some(checked),
            points: c.points.clone(),
            points_expr,
            compare: None,
            expect,
            why: c.why.clone(),
            note: c.note.clone(),
            quick,
            sanity: None,
            fit: None,
        };
        claim.sanity = predicate_sanity(&claim, scope, &selected);
        claim.fit = fit(&claim, calibrated, scope);
        out.push(claim);
    }
    Ok(out)
}

/// A claim's `quick:` mark, checked: `expect:` one of `inconclusive`, `holds`
/// or `fails`, different from the claim's own `expect:` (a mark that says
/// what `expect:` says is noise), and a non-empty `why:`. `key` is the mark's
/// field (`claims.3.quick`).
fn parse_quick(
    ctx: &Ctx,
    key: &str,
    raw: Option<&RawQuick>,
    claim_expect: Expectation,
) -> Result<Option<QuickMark>, ManifestError> {
    let Some(q) = raw else { return Ok(None) };
    let allowed = "`inconclusive`, `holds` or `fails`";
    let expect = match q.expect.as_deref() {
        Some("inconclusive") => verdicts::Verdict::Inconclusive,
        Some("holds") => verdicts::Verdict::Holds,
        Some("fails") => verdicts::Verdict::Fails,
        Some(e) => {
            return Err(ctx.err(
                &format!("{key}.expect"),
                format!(
                    "`{}` is not allowed: a `quick:` mark says {allowed} (the verdict a --quick run gives)",
                    shorten(e)
                ),
            ))
        }
        None => {
            return Err(ctx.err(
                key,
                format!("`quick:` needs `expect:` ({allowed})"),
            ))
        }
    };
    if expect.as_str() == claim_expect.as_str() {
        return Err(ctx.err(
            &format!("{key}.expect"),
            format!(
                "`{}` is the claim's own `expect:`: a `quick:` mark is only for a verdict --quick gives that differs from it",
                expect.as_str()
            ),
        ));
    }
    let why = match q.why.as_deref() {
        Some(w) if !w.trim().is_empty() => w,
        Some(_) => return Err(ctx.err(&format!("{key}.why"), "must not be empty: give the numbers at --quick (value ± CI, replications) and what is known at full fidelity")),
        None => {
            // The mark's own line: a missing `why` has none, and a later
            // `why:` may be another claim's.
            let mut e = ctx.err(key, "`quick:` needs `why:` with the numbers at --quick (value ± CI, replications) and what is known at full fidelity");
            e.key = format!("{key}.why");
            return Err(e);
        }
    };
    check_text(ctx, &format!("{key}.why"), why)?;
    Ok(Some(QuickMark {
        expect,
        why: why.to_string(),
    }))
}

/// The tolerance claims of the `compare:` entries with a tolerance.
pub(super) fn tolerance_claims(
    compare: &[Compare],
    outputs: &[(String, Vec<String>, Vec<String>)],
    scope: &ClaimScope,
    calibrated: Option<&Calibrated>,
) -> Vec<Claim> {
    let mut out: Vec<Claim> = Vec::new();
    for (i, c) in compare.iter().enumerate() {
        let Some(tol) = c.tolerance else { continue };
        let mut id = format!("em-{}-{}-{}", c.candidate, c.reference, c.metric);
        if out.iter().any(|o| o.id == id) {
            id = format!("{id}-{i}");
        }
        // The outputs that show it: figures/tables drawing the metric of both series.
        let mut entries: Vec<String> = outputs
            .iter()
            .filter(|(_, ys, ss)| {
                (ys.is_empty() || ys.contains(&c.metric))
                    && (ss.is_empty() || (ss.contains(&c.reference) && ss.contains(&c.candidate)))
            })
            .map(|(id, _, _)| id.clone())
            .collect();
        if entries.is_empty() {
            entries = outputs.iter().map(|(id, _, _)| id.clone()).collect();
        }
        let mut claim = Claim {
            id,
            kind: ClaimKind::Tolerance,
            quote: String::new(),
            where_: "compare:".to_string(),
            entries,
            holds: format!(
                "EM of {}.{m} against {}.{m} <= {tol} at every point",
                c.candidate,
                c.reference,
                m = c.metric
            ),
            predicate: None,
            points: None,
            points_expr: None,
            compare: Some(i),
            expect: c.expect.unwrap_or_default(),
            why: c.why.clone(),
            note: None,
            quick: None,
            sanity: tolerance_sanity(c, scope),
            fit: None,
        };
        if let Some(cal) = calibrated {
            let hit: Vec<&String> = cal
                .against
                .iter()
                .filter(|a| {
                    **a == c.reference
                        || **a == c.candidate
                        || **a == format!("{}.{}", c.reference, c.metric)
                        || **a == format!("{}.{}", c.candidate, c.metric)
                        || claim.entries.contains(a)
                })
                .collect();
            if !hit.is_empty() {
                claim.fit = Some(format!(
                    "{} fitted against {}",
                    cal.params.join(", "),
                    hit.iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        out.push(claim);
    }
    out
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
