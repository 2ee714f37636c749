//! The output sections: `compare:`, `figures:` and `tables:`, their sizes,
//! what they name (series, metrics, axes) and the ids they share.

use crate::manifest::metrics::{known_metric, some_series_makes, MetricKnowledge};
use crate::manifest::place::Ctx;
use crate::manifest::raw::{OneOrMany, RawManifest};
use crate::manifest::values::{check_id, check_name, check_text, shorten};
use crate::manifest::{
    figure, limits, Compare, Figure, FigureKind, ManifestError, Reference, Series, TableKind,
};
use solvers::Registry;
use std::collections::BTreeSet;

/// What the outputs of a manifest may name: its series and reference data
/// (`names`) and the metrics each makes.
pub(super) struct Known<'a> {
    pub(super) names: &'a BTreeSet<&'a str>,
    pub(super) knowledge: &'a MetricKnowledge,
    pub(super) references: &'a [Reference],
}

/// The number of comparisons, and of figures and tables, within the limits.
pub(super) fn counts(ctx: &Ctx, raw: &RawManifest) -> Result<(), ManifestError> {
    if raw.compare.len() > limits::MAX_OUTPUTS {
        return Err(ctx.err(
            "compare",
            format!(
                "{} entries; the limit is {}",
                raw.compare.len(),
                limits::MAX_OUTPUTS
            ),
        ));
    }
    if raw.figures.len() + raw.tables.len() > limits::MAX_OUTPUTS {
        return Err(ctx.err(
            if raw.figures.len() > raw.tables.len() {
                "figures"
            } else {
                "tables"
            },
            format!(
                "{} figures and tables; the limit is {}",
                raw.figures.len() + raw.tables.len(),
                limits::MAX_OUTPUTS
            ),
        ));
    }
    Ok(())
}

/// Each comparison names known series and metrics, a tolerance that can be
/// judged, and why it is expected to fail where it is.
pub(super) fn compare(ctx: &Ctx, compare: &[Compare], known: &Known) -> Result<(), ManifestError> {
    let &Known {
        names,
        knowledge,
        references,
    } = known;
    for (i, c) in compare.iter().enumerate() {
        check_name(ctx, &format!("compare.{i}.metric"), &c.metric)?;
        for (field, v) in [("reference", &c.reference), ("candidate", &c.candidate)] {
            if !names.contains(v.as_str()) {
                return Err(ctx.err(
                    &format!("compare.{i}.{field}"),
                    format!(
                        "no series named `{}` (series: {})",
                        shorten(v),
                        names.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
        }
        for side in [&c.reference, &c.candidate] {
            known_metric(
                ctx,
                &format!("compare.{i}.metric"),
                knowledge,
                references,
                side,
                &c.metric,
            )?;
        }
        if let Some(w) = &c.why {
            check_text(ctx, &format!("compare.{i}.why"), w)?;
        }
        if c.expect == Some(verdicts::Expectation::Fails)
            && c.why.as_deref().is_none_or(|w| w.trim().is_empty())
        {
            return Err(ctx.err(
                &format!("compare.{i}.expect"),
                "a tolerance expected to fail needs `why:` (the explanation)",
            ));
        }
        if let Some(t) = c.tolerance {
            if !(t.is_finite() && t >= 0.0) {
                return Err(ctx.err(
                    &format!("compare.{i}.tolerance"),
                    "must be a finite number >= 0",
                ));
            }
        }
    }
    Ok(())
}

/// The figures, checked (axes, series, metrics, kind, layout) and with their
/// defaults filled in (title, labels).
pub(super) fn figures(
    ctx: &Ctx,
    raw: &RawManifest,
    series: &[Series],
    registry: &Registry,
    axes: &[String],
    n_points: usize,
    known: &Known,
) -> Result<Vec<Figure>, ManifestError> {
    let &Known {
        names,
        knowledge,
        references,
    } = known;
    let mut figures = Vec::new();
    for (i, f) in raw.figures.iter().enumerate() {
        let key = format!("figures.{i}");
        check_id(ctx, &format!("{key}.id"), &f.id)?;
        for (k, t) in [
            ("title", &f.title),
            ("xlabel", &f.xlabel),
            ("ylabel", &f.ylabel),
        ] {
            if let Some(t) = t {
                check_text(ctx, &format!("{key}.{k}"), t)?;
            }
        }
        // x is a sweep axis, or a metric every series of the figure reports
        // (a design study plots blocking against the mean queue length).
        let x_is_metric = !f.series.is_empty()
            && f.series.iter().all(|sn| {
                series
                    .iter()
                    .find(|s| &s.name == sn)
                    .and_then(|s| registry.get(&s.solver))
                    .is_some_and(|solver| solver.doc().metrics.iter().any(|m| *m == f.x))
            });
        if f.kind == FigureKind::Sweep && !axes.contains(&f.x) && !x_is_metric {
            return Err(ctx.err(
                &format!("{key}.x"),
                format!(
                    "`{}` is not a sweep axis (axes: {}) nor a metric of every series of the figure",
                    shorten(&f.x),
                    axes.join(", ")
                ),
            ));
        }
        for s in &f.series {
            if !names.contains(s.as_str()) {
                return Err(ctx.err(
                    &format!("{key}.series"),
                    format!("no series named `{}`", shorten(s)),
                ));
            }
        }
        if f.series.is_empty() {
            return Err(ctx.err(
                &format!("{key}.series"),
                "a figure needs at least one series",
            ));
        }
        let y = match &f.y {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        };
        if y.is_empty() {
            return Err(ctx.err(&format!("{key}.y"), "a figure needs at least one metric"));
        }
        if y.len() > limits::MAX_SERIES {
            return Err(ctx.err(
                &format!("{key}.y"),
                format!("{} metrics; the limit is {}", y.len(), limits::MAX_SERIES),
            ));
        }
        for metric in &y {
            check_name(ctx, &format!("{key}.y"), metric)?;
        }
        figure::validate(f.kind, &y, &f.x_per, &f.x_values, n_points)
            .map_err(|(k, msg)| ctx.err(&format!("{key}.{k}"), msg))?;
        // Metric names after the kind's own keys (a timeseries figure's `y`
        // names time series, not metrics).
        for metric in &y {
            if f.kind != FigureKind::Timeseries {
                some_series_makes(
                    ctx,
                    &format!("{key}.y"),
                    knowledge,
                    references,
                    &f.series,
                    metric,
                )?;
            }
        }
        let layout = f.layout.unwrap_or_default();
        layout
            .validate()
            .map_err(|msg| ctx.err(&format!("{key}.layout.font_size"), msg))?;
        figures.push(Figure {
            layout,
            id: f.id.clone(),
            title: f.title.clone().unwrap_or_else(|| raw.title.clone()),
            x: f.x.clone(),
            ylabel: f.ylabel.clone().unwrap_or_else(|| y.join(", ")),
            y,
            series: f.series.clone(),
            xlabel: f.xlabel.clone().unwrap_or_else(|| f.x.clone()),
            log_y: f.log_y,
            kind: f.kind,
            x_per: f.x_per.clone(),
            x_values: f.x_values.clone().unwrap_or_default(),
        });
    }
    Ok(figures)
}

/// Each table names known series and metrics; an error-measures table needs
/// comparisons.
pub(super) fn tables(ctx: &Ctx, raw: &RawManifest, known: &Known) -> Result<(), ManifestError> {
    let &Known {
        names,
        knowledge,
        references,
    } = known;
    for (i, t) in raw.tables.iter().enumerate() {
        check_id(ctx, &format!("tables.{i}.id"), &t.id)?;
        if let Some(title) = &t.title {
            check_text(ctx, &format!("tables.{i}.title"), title)?;
        }
        for s in &t.series {
            if !names.contains(s.as_str()) {
                return Err(ctx.err(
                    &format!("tables.{i}.series"),
                    format!("no series named `{}`", shorten(s)),
                ));
            }
        }
        if t.metrics.len() > limits::MAX_OUTPUTS {
            return Err(ctx.err(
                &format!("tables.{i}.metrics"),
                format!(
                    "{} metrics; the limit is {}",
                    t.metrics.len(),
                    limits::MAX_OUTPUTS
                ),
            ));
        }
        let table_series: Vec<String> = if t.series.is_empty() {
            names.iter().map(|n| n.to_string()).collect()
        } else {
            t.series.clone()
        };
        for metric in &t.metrics {
            check_name(ctx, &format!("tables.{i}.metrics"), metric)?;
            some_series_makes(
                ctx,
                &format!("tables.{i}.metrics"),
                knowledge,
                references,
                &table_series,
                metric,
            )?;
        }
        if t.kind == TableKind::ErrorMeasures && raw.compare.is_empty() {
            return Err(ctx.err(
                &format!("tables.{i}.kind"),
                "an error-measures table needs a `compare` section",
            ));
        }
    }
    Ok(())
}

/// The ids of the figures and tables, each used once.
pub(super) fn unique_ids(ctx: &Ctx, raw: &RawManifest) -> Result<BTreeSet<String>, ManifestError> {
    let mut ids = BTreeSet::new();
    for (i, id) in raw
        .figures
        .iter()
        .map(|f| &f.id)
        .chain(raw.tables.iter().map(|t| &t.id))
        .enumerate()
    {
        if !ids.insert(id.clone()) {
            let key = if i < raw.figures.len() {
                format!("figures.{i}.id")
            } else {
                format!("tables.{}.id", i - raw.figures.len())
            };
            return Err(ctx.err(&key, format!("figure/table id `{id}` is used twice")));
        }
    }
    Ok(ids)
}
