//! How a claim is classified at load: the points its `points:` selects, and
//! whether it is a **sanity** check (reads no solver output, or holds whatever
//! value its bounded metrics take) or a **fit** (reads numbers the manifest's
//! parameters were calibrated against). Both are shown apart and never make
//! an entry reproduced.

use super::claims::{Calibrated, Claim, ClaimScope};
use super::metrics::MetricKnowledge;
use super::predicate::interval::{evaluate, Env, Interval, Truth};
use super::predicate::{self, Expr};
use super::{Compare, Points, Reference};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// The points a claim's `points:` selects (all without one).
pub fn select_points_of(
    points_expr: Option<&Expr>,
    axes: &[String],
    params: &BTreeMap<String, Json>,
    points: &Points,
) -> Vec<usize> {
    let Some(e) = points_expr else {
        return (0..points.len()).collect();
    };
    (0..points.len())
        .filter(|&i| {
            let env = Constants {
                axes,
                params,
                points,
                ranges: None,
                references: &[],
            };
            evaluate(e, &env, &[i], axes).0 == Truth::True
        })
        .collect()
}

pub(super) fn select_points(points_expr: Option<&Expr>, scope: &ClaimScope) -> Vec<usize> {
    select_points_of(points_expr, scope.axes, scope.params, scope.points)
}

/// Axes and parameters exactly; metrics as their whole range (sanity) or
/// unknown; references exactly.
struct Constants<'a> {
    axes: &'a [String],
    params: &'a BTreeMap<String, Json>,
    points: &'a Points,
    ranges: Option<&'a MetricKnowledge>,
    references: &'a [Reference],
}

impl Env for Constants<'_> {
    fn metric(&self, _: usize, series: &str, metric: &str) -> Interval {
        if let Some(v) = self
            .references
            .iter()
            .find(|r| r.name == series)
            .and_then(|r| r.values.get(metric))
        {
            return Interval::exact(*v);
        }
        match self.ranges.and_then(|k| k.range(series, metric)) {
            Some((lo, hi)) => Interval { lo, hi },
            None => Interval::ENTIRE,
        }
    }
    fn name(&self, point: usize, name: &str) -> f64 {
        if self.axes.iter().any(|a| a == name) {
            if let Some(p) = self.points.get(point) {
                return p
                    .values
                    .get(name)
                    .and_then(Json::as_f64)
                    .unwrap_or(f64::NAN);
            }
        }
        self.params
            .get(name)
            .and_then(Json::as_f64)
            .unwrap_or(f64::NAN)
    }
    fn saturated(&self, _: usize, _: &str) -> Truth {
        Truth::Unknown
    }
}

/// Why a predicate claim cannot fail, if it cannot.
pub(super) fn predicate_sanity(c: &Claim, scope: &ClaimScope, points: &[usize]) -> Option<String> {
    let e = c.predicate.as_ref()?;
    let reads = predicate::metrics(e);
    let solver_reads: Vec<&(String, String)> = reads
        .iter()
        .filter(|(s, m)| {
            !scope.references.iter().any(|r| &r.name == s) && !scope.metrics.from_params(s, m)
        })
        .collect();
    if solver_reads.is_empty() && predicate::saturation_series(e).is_empty() {
        let echoed: Vec<String> = reads
            .iter()
            .filter(|(s, m)| scope.metrics.from_params(s, m))
            .map(|(s, m)| format!("{s}.{m}"))
            .collect();
        return Some(if echoed.is_empty() {
            "reads no solver output (only parameters, constants and reference data)".to_string()
        } else {
            format!(
                "reads no solver output: {} {} computed from the parameters alone",
                echoed.join(", "),
                if echoed.len() == 1 { "is" } else { "are" }
            )
        });
    }
    let env = Constants {
        axes: scope.axes,
        params: scope.params,
        points: scope.points,
        ranges: Some(scope.metrics),
        references: scope.references,
    };
    if evaluate(e, &env, points, scope.axes).0 == Truth::True {
        let bounded: Vec<String> = solver_reads
            .iter()
            .filter_map(|(s, m)| {
                scope
                    .metrics
                    .range(s, m)
                    .map(|(lo, hi)| format!("{s}.{m} in [{lo}, {hi}]"))
            })
            .collect();
        return Some(format!(
            "holds for every value its metrics can take ({})",
            bounded.join(", ")
        ));
    }
    None
}

/// Why a tolerance claim cannot fail, if it cannot: it compares numbers no
/// solver computes, or its band contains every value the metric can take.
pub(super) fn tolerance_sanity(c: &Compare, scope: &ClaimScope) -> Option<String> {
    let reference = |s: &str| scope.references.iter().find(|r| r.name == s);
    let from_data = |s: &str| reference(s).is_some() || scope.metrics.from_params(s, &c.metric);
    if from_data(&c.reference) && from_data(&c.candidate) {
        return Some(format!(
            "reads no solver output: `{}` of {} and {} is {}",
            c.metric,
            c.reference,
            c.candidate,
            if reference(&c.reference).is_some() && reference(&c.candidate).is_some() {
                "printed data on both sides".to_string()
            } else {
                "computed from the parameters alone".to_string()
            }
        ));
    }
    let tol = c.tolerance?;
    // EM = |ref − cand| / |ref|: its largest value over the candidate's range
    // (a printed reference) or the reference's range (a printed candidate).
    let worst = if let Some(r) = reference(&c.reference).and_then(|r| r.values.get(&c.metric)) {
        let (lo, hi) = scope.metrics.range(&c.candidate, &c.metric)?;
        (*r != 0.0).then(|| (r - lo).abs().max((r - hi).abs()) / r.abs())
    } else if let Some(v) = reference(&c.candidate).and_then(|r| r.values.get(&c.metric)) {
        let (lo, hi) = scope.metrics.range(&c.reference, &c.metric)?;
        (lo > 0.0 || hi < 0.0).then(|| (1.0 - v / lo).abs().max((1.0 - v / hi).abs()))
    } else {
        None
    }?;
    (worst <= tol).then(|| {
        let (s, _) = if reference(&c.reference).is_some() { (&c.candidate, ()) } else { (&c.reference, ()) };
        let (lo, hi) = scope.metrics.range(s, &c.metric).unwrap_or((f64::NAN, f64::NAN));
        format!(
            "the tolerance {tol} contains every value `{}` can take ([{lo}, {hi}]): the largest possible EM is {worst:.3}",
            c.metric
        )
    })
}

/// Why a claim's agreement is a fit, if it is: it reads a reference the
/// manifest's parameters were fitted against, or is about such an entry.
pub(super) fn fit(
    c: &Claim,
    calibrated: Option<&Calibrated>,
    scope: &ClaimScope,
) -> Option<String> {
    let cal = calibrated?;
    let mut against: Vec<&str> = c
        .entries
        .iter()
        .filter(|e| cal.against.contains(e))
        .map(String::as_str)
        .collect();
    if let Some(e) = &c.predicate {
        for (s, m) in predicate::metrics(e) {
            let full = format!("{s}.{m}");
            if let Some(a) = cal.against.iter().find(|a| **a == s || **a == full) {
                if !against.contains(&a.as_str()) {
                    against.push(a.as_str());
                }
            }
        }
    }
    let _ = scope;
    (!against.is_empty()).then(|| {
        format!(
            "{} fitted against {}",
            cal.params.join(", "),
            against.join(", ")
        )
    })
}
