//! Reading a manifest: the file (size-checked before it is read), YAML into
//! the raw structs, and every semantic check into a validated [`Manifest`].

use super::claims::{self, ClaimScope};
use super::locate::{yaml_error, Ctx};
use super::metrics::{known_metric, reference_metrics, some_series_makes, MetricKnowledge};
use super::precision::precision;
use super::programs::{self as declare, Files};
use super::raw::{OneOrMany, RawManifest, RawQuick};
use super::sweep::build_sweep;
use super::validate::{check_schema, check_types};
use super::values::{check_id, check_name, check_text, mapping_to_params, shorten};
use super::{figure, limits, reference, Figure, Manifest, ManifestError, Series, TableKind};
use serde_yaml::Mapping;
use solvers::Registry;
use std::collections::BTreeSet;
use std::path::Path;

/// Parses and validates one manifest file. Its size is checked before it is read.
pub fn load(path: &Path, registry: &Registry) -> Result<Manifest, ManifestError> {
    let io_err = |e: std::io::Error| ManifestError {
        file: path.to_path_buf(),
        line: None,
        key: String::new(),
        message: format!("cannot read: {e}"),
    };
    let size = std::fs::metadata(path).map_err(io_err)?.len();
    if size > limits::MAX_FILE_BYTES {
        return Err(too_big(path, size));
    }
    // Read at most one byte past the limit, in case the file grew since.
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(io_err)?
        .take(limits::MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(io_err)?;
    parse(path, &text, registry)
}

fn too_big(path: &Path, size: u64) -> ManifestError {
    ManifestError {
        file: path.to_path_buf(),
        line: None,
        key: String::new(),
        message: format!(
            "the file has {size} bytes; a manifest has at most {} bytes",
            limits::MAX_FILE_BYTES
        ),
    }
}

/// Parses and validates manifest `text` (reported as coming from `path`).
pub fn parse(path: &Path, text: &str, registry: &Registry) -> Result<Manifest, ManifestError> {
    parse_as(path, text, registry, Files::MustExist)
}

/// [`parse`] for a manifest read back from the store: the files of the
/// programs it declares need not exist (they are then unavailable to run).
pub fn parse_stored(
    path: &Path,
    text: &str,
    registry: &Registry,
) -> Result<Manifest, ManifestError> {
    parse_as(path, text, registry, Files::IfPresent)
}

fn parse_as(
    path: &Path,
    text: &str,
    registry: &Registry,
    files: Files,
) -> Result<Manifest, ManifestError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text); // a UTF-8 BOM: no part of a key
    if text.len() as u64 > limits::MAX_FILE_BYTES {
        return Err(too_big(path, text.len() as u64));
    }
    let ctx = Ctx { file: path, text };
    limits::scan(text).map_err(|e| ManifestError {
        file: path.to_path_buf(),
        line: Some(e.line),
        key: String::new(),
        message: e.message,
    })?;
    let raw: RawManifest = serde_yaml::from_str(text).map_err(|e| yaml_error(path, text, &e))?;

    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if raw.id.trim().is_empty() {
        return Err(ctx.err("id", "must not be empty"));
    }
    check_id(&ctx, "id", &raw.id)?;
    if !stem.is_empty() && stem != raw.id {
        return Err(ctx.err(
            "id",
            format!(
                "`{}` does not match the file name `{stem}` (file name = id)",
                raw.id
            ),
        ));
    }
    for (key, t) in [
        ("title", &raw.title),
        ("source", &raw.source),
        ("description", &raw.description),
    ] {
        check_text(&ctx, key, t)?;
    }
    if raw.version < 1 {
        return Err(ctx.err("version", "must be an integer >= 1"));
    }
    let params = mapping_to_params(&ctx, "params", &raw.params)?;
    let (axes, points) = build_sweep(&ctx, &raw.sweep)?;
    // Programs declared here join the registry for this manifest only.
    let declared = declare::declare(&ctx, &raw.solvers, registry, files)?;
    let local = declare::registry_with(registry, &declared);
    let registry = &local;

    if raw.series.0.is_empty() {
        return Err(ctx.err("series", "at least one series is needed"));
    }
    let mut series = Vec::new();
    let mut tasks_per_point: u64 = 0;
    for (name, s) in &raw.series.0 {
        let key = format!("series.{name}");
        check_id(&ctx, &key, name)?;
        let solver = registry.get(&s.solver).ok_or_else(|| {
            ctx.err(
                &format!("{key}.solver"),
                format!(
                    "unknown solver `{}` (known: {})",
                    s.solver,
                    registry.names().join(", ")
                ),
            )
        })?;
        if let Some(l) = &s.label {
            check_text(&ctx, &format!("{key}.label"), l)?;
        }
        let quick = s.quick.clone().unwrap_or(RawQuick {
            params: Mapping::new(),
            replications: None,
        });
        let mut reps_max = 1;
        for (rkey, r) in [
            (format!("{key}.replications"), s.replications),
            (format!("{key}.quick.replications"), quick.replications),
        ] {
            let Some(r) = r else { continue };
            if r == 0 {
                return Err(ctx.err(&rkey, "must be >= 1"));
            }
            if r > limits::MAX_REPLICATIONS {
                return Err(ctx.err(
                    &rkey,
                    format!(
                        "{r} replications; the limit is {}",
                        limits::MAX_REPLICATIONS
                    ),
                ));
            }
            if solver.kind() == solvers::Kind::Analytic && r > 1 {
                return Err(ctx.err(
                    &rkey,
                    format!("`{}` is analytic: replications must be 1", s.solver),
                ));
            }
            reps_max = reps_max.max(r);
        }
        let precision = s
            .precision
            .as_ref()
            .map(|p| {
                precision(
                    &ctx,
                    &format!("{key}.precision"),
                    p,
                    solver.kind(),
                    reps_max,
                )
            })
            .transpose()?;
        // The task limit counts the most a series may need.
        let most = precision.as_ref().map_or(reps_max, |p| p.max_replications);
        tasks_per_point += u64::from(most);
        let sparams = mapping_to_params(&ctx, &format!("{key}.params"), &s.params)?;
        for axis in &axes {
            if sparams.contains_key(axis) {
                return Err(ctx.err(
                    &format!("{key}.params.{axis}"),
                    "is also a sweep axis; the sweep value would always win",
                ));
            }
        }
        let qparams = mapping_to_params(&ctx, &format!("{key}.quick.params"), &quick.params)?;
        check_schema(
            &ctx,
            name,
            &s.solver,
            &solver.doc(),
            &params,
            &sparams,
            &qparams,
            &axes,
            &raw.sweep,
        )?;
        check_types(
            &ctx,
            name,
            solver.as_ref(),
            &params,
            &sparams,
            &qparams,
            &axes,
            &raw.sweep,
            &points,
        )?;
        let mut sparams = sparams;
        sparams.extend(declare::check_series(
            &ctx, name, &declared, &s.solver, &params, &sparams, &qparams, &axes, &points,
        )?);
        series.push(Series {
            label: s.label.clone().unwrap_or_else(|| name.clone()),
            name: name.clone(),
            solver: s.solver.clone(),
            params: sparams,
            replications: s.replications.unwrap_or(1),
            seed: s.seed.unwrap_or(1),
            quick_params: qparams,
            quick_replications: quick.replications,
            precision,
        });
    }
    let tasks = (points.len() as u64).saturating_mul(tasks_per_point);
    if tasks > limits::MAX_TASKS {
        return Err(ctx.err(
            "series",
            format!(
                "{} points × {tasks_per_point} tasks per point (replications summed over series) = {tasks} tasks; the limit is {} per manifest",
                points.len(),
                limits::MAX_TASKS
            ),
        ));
    }
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
    let series_names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let references = reference::parse(path, text, &raw.reference_data, &series_names)?;
    let knowledge = MetricKnowledge::new(&series, registry);
    reference_metrics(&ctx, &knowledge, &references)?;
    for s in &series {
        if let Some(p) = &s.precision {
            let key = format!("series.{}.precision.metric", s.name);
            known_metric(&ctx, &key, &knowledge, &references, &s.name, &p.metric)?;
        }
    }
    let mut names: BTreeSet<&str> = series.iter().map(|s| s.name.as_str()).collect();
    names.extend(references.iter().map(|r| r.name.as_str()));
    for (i, c) in raw.compare.iter().enumerate() {
        check_name(&ctx, &format!("compare.{i}.metric"), &c.metric)?;
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
                &ctx,
                &format!("compare.{i}.metric"),
                &knowledge,
                &references,
                side,
                &c.metric,
            )?;
        }
        if let Some(w) = &c.why {
            check_text(&ctx, &format!("compare.{i}.why"), w)?;
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
    let mut figures = Vec::new();
    for (i, f) in raw.figures.iter().enumerate() {
        let key = format!("figures.{i}");
        check_id(&ctx, &format!("{key}.id"), &f.id)?;
        for (k, t) in [
            ("title", &f.title),
            ("xlabel", &f.xlabel),
            ("ylabel", &f.ylabel),
        ] {
            if let Some(t) = t {
                check_text(&ctx, &format!("{key}.{k}"), t)?;
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
        if f.kind == super::FigureKind::Sweep && !axes.contains(&f.x) && !x_is_metric {
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
            check_name(&ctx, &format!("{key}.y"), metric)?;
        }
        figure::validate(f.kind, &y, &f.x_per, &f.x_values, points.len())
            .map_err(|(k, msg)| ctx.err(&format!("{key}.{k}"), msg))?;
        // Metric names after the kind's own keys (a timeseries figure's `y`
        // names time series, not metrics).
        for metric in &y {
            if f.kind != super::FigureKind::Timeseries {
                some_series_makes(
                    &ctx,
                    &format!("{key}.y"),
                    &knowledge,
                    &references,
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
    for (i, t) in raw.tables.iter().enumerate() {
        check_id(&ctx, &format!("tables.{i}.id"), &t.id)?;
        if let Some(title) = &t.title {
            check_text(&ctx, &format!("tables.{i}.title"), title)?;
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
            check_name(&ctx, &format!("tables.{i}.metrics"), metric)?;
            some_series_makes(
                &ctx,
                &format!("tables.{i}.metrics"),
                &knowledge,
                &references,
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
    if raw.claims.len() > limits::MAX_OUTPUTS {
        return Err(ctx.err(
            "claims",
            format!(
                "{} claims; the limit is {}",
                raw.claims.len(),
                limits::MAX_OUTPUTS
            ),
        ));
    }
    let mut entries: BTreeSet<String> = super::catalogue::catalogue()
        .into_iter()
        .map(|e| e.id)
        .collect();
    entries.extend(ids.iter().cloned());
    let scope = ClaimScope {
        axes: &axes,
        params: &params,
        points: &points,
        references: &references,
        metrics: &knowledge,
        entries: &entries,
    };
    let calibrated = claims::parse_calibrated(&ctx, &raw.calibrated, &scope)?;
    let mut all_claims = claims::parse_claims(&ctx, &raw.claims, &scope, calibrated.as_ref())?;
    let outputs: Vec<(String, Vec<String>, Vec<String>)> = figures
        .iter()
        .map(|f| (f.id.clone(), f.y.clone(), f.series.clone()))
        .chain(
            raw.tables
                .iter()
                .map(|t| (t.id.clone(), t.metrics.clone(), t.series.clone())),
        )
        .collect();
    all_claims.extend(claims::tolerance_claims(
        &raw.compare,
        &outputs,
        &scope,
        calibrated.as_ref(),
    ));
    use sha2::Digest;
    Ok(Manifest {
        path: path.to_path_buf(),
        text: text.to_string(),
        hash: hex::encode(sha2::Sha256::digest(text.as_bytes())),
        id: raw.id,
        title: raw.title,
        source: raw.source,
        description: raw.description,
        version: raw.version,
        params,
        axes,
        points,
        series,
        compare: raw.compare,
        figures,
        tables: raw.tables,
        references,
        solvers: declared,
        claims: all_claims,
        calibrated,
    })
}
