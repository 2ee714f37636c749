//! What each series of a manifest can produce: its solver's documented metric
//! names (`SolverDoc::metric_names`, `<k>` placeholders allowed), ranges of
//! bounded metrics and metrics computed from the parameters alone
//! (`Solver::metric_facts`). A figure, table, comparison, precision target or
//! claim that names a metric its series do not produce is refused at load.

use super::place::Ctx;
use super::values::shorten;
use super::{reference, ManifestError, Series};
use solvers::{metric_matches, MetricFact, Registry};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default)]
struct SeriesMetrics {
    names: Vec<String>,
    facts: Vec<MetricFact>,
    params: Vec<&'static str>,
}

/// The metrics of every solver series of one manifest.
#[derive(Debug, Clone, Default)]
pub struct MetricKnowledge {
    series: BTreeMap<String, SeriesMetrics>,
}

impl MetricKnowledge {
    pub fn new(series: &[Series], registry: &Registry) -> Self {
        let series = series
            .iter()
            .filter_map(|s| {
                let solver = registry.get(&s.solver)?;
                let doc = solver.doc();
                Some((
                    s.name.clone(),
                    SeriesMetrics {
                        names: doc.metric_names(),
                        facts: solver.metric_facts(),
                        params: doc.params.iter().map(|p| p.name).collect(),
                    },
                ))
            })
            .collect();
        MetricKnowledge { series }
    }

    pub fn series(&self) -> impl Iterator<Item = &str> {
        self.series.keys().map(String::as_str)
    }

    pub fn has_series(&self, s: &str) -> bool {
        self.series.contains_key(s)
    }

    /// Whether the series produces the metric: `None` for no such series,
    /// `Err` with its metric names when it does not.
    pub fn check(&self, series: &str, metric: &str) -> Option<Result<(), Vec<String>>> {
        let s = self.series.get(series)?;
        Some(if s.names.iter().any(|p| metric_matches(p, metric)) {
            Ok(())
        } else {
            Err(s.names.clone())
        })
    }

    pub fn produces(&self, series: &str, metric: &str) -> bool {
        matches!(self.check(series, metric), Some(Ok(())))
    }

    /// The range every value of the metric lies in, where its solver bounds it.
    pub fn range(&self, series: &str, metric: &str) -> Option<(f64, f64)> {
        self.series.get(series)?.facts.iter().find_map(|f| match f {
            MetricFact::Range(p, lo, hi) if metric_matches(p, metric) => Some((*lo, *hi)),
            _ => None,
        })
    }

    /// Whether the metric is computed from the parameters alone.
    pub fn from_params(&self, series: &str, metric: &str) -> bool {
        self.series.get(series).is_some_and(|s| {
            s.facts
                .iter()
                .any(|f| matches!(f, MetricFact::FromParams(p) if metric_matches(p, metric)))
        })
    }

    /// Whether some series' solver takes a parameter of this name.
    pub fn any_series_takes(&self, param: &str) -> bool {
        self.series.values().any(|s| s.params.contains(&param))
    }
}

/// Every metric a reference gives numbers for is produced by some solver
/// series of the manifest: numbers under a name no series makes could only
/// ever be compared as "missing".
pub(super) fn reference_metrics(
    ctx: &Ctx,
    knowledge: &MetricKnowledge,
    references: &[reference::Reference],
) -> Result<(), ManifestError> {
    if knowledge.series.is_empty() {
        return Ok(());
    }
    for r in references {
        for m in r.values.keys() {
            if knowledge.series().any(|s| knowledge.produces(s, m)) {
                continue;
            }
            let mut names: Vec<&str> = knowledge
                .series
                .values()
                .flat_map(|s| s.names.iter().map(String::as_str))
                .collect();
            names.sort_unstable();
            names.dedup();
            return Err(ctx.err(
                &format!("reference_data.{}.values.{m}", r.name),
                format!(
                    "no series of this manifest produces the metric `{}`{}; their metrics: {}",
                    shorten(m),
                    super::predicate::did_you_mean(m, names.iter().copied()),
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// `metric` is produced by `series` (a solver series or a reference).
pub(super) fn known_metric(
    ctx: &Ctx,
    key: &str,
    knowledge: &MetricKnowledge,
    references: &[reference::Reference],
    series: &str,
    metric: &str,
) -> Result<(), ManifestError> {
    let names: Vec<String> = if let Some(r) = references.iter().find(|r| r.name == series) {
        if r.values.contains_key(metric) {
            return Ok(());
        }
        r.values.keys().cloned().collect()
    } else {
        match knowledge.check(series, metric) {
            Some(Ok(())) | None => return Ok(()),
            Some(Err(names)) => names,
        }
    };
    Err(ctx.err(
        key,
        format!(
            "`{series}` produces no metric `{}`{}; its metrics: {}",
            shorten(metric),
            super::predicate::did_you_mean(metric, names.iter().map(String::as_str)),
            names.join(", ")
        ),
    ))
}

/// Some series of `series` produces `metric`.
pub(super) fn some_series_makes(
    ctx: &Ctx,
    key: &str,
    knowledge: &MetricKnowledge,
    references: &[reference::Reference],
    series: &[String],
    metric: &str,
) -> Result<(), ManifestError> {
    let mut first_err = None;
    for s in series {
        match known_metric(ctx, key, knowledge, references, s, metric) {
            Ok(()) => return Ok(()),
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(mut e) if series.len() > 1 => {
            e.message = format!(
                "no series of it produces the metric `{}`; {}",
                shorten(metric),
                e.message
            );
            Err(e)
        }
        Some(e) => Err(e),
        None => Ok(()),
    }
}
