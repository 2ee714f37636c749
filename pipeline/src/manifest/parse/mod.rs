//! Reading a manifest: the file (size-checked before it is read), YAML into
//! the raw structs, and every semantic check into a validated [`Manifest`],
//! section by section (the series in `series.rs`; comparisons, figures and
//! tables in `outputs.rs`).

use super::claims::{self, ClaimScope};
use super::metrics::{known_metric, reference_metrics, MetricKnowledge};
use super::place::{read, Ctx};
use super::programs::{self as declare, Files};
use super::raw::RawManifest;
use super::sweep::build_sweep;
use super::values::{check_id, check_text, mapping_to_params};
use super::{limits, reference, Manifest, ManifestError};
use outputs::Known;
use solvers::Registry;
use std::collections::BTreeSet;
use std::path::Path;

mod outputs;
mod series;

/// Parses and validates one manifest file. Its size is checked before it is read.
pub fn load(path: &Path, registry: &Registry) -> Result<Manifest, ManifestError> {
    let io_err = |e: std::io::Error| ManifestError {
        file: path.to_path_buf(),
        line: None,
        column: None,
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
        column: None,
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
    // Sizes and nesting are bounded before the parser allocates anything.
    limits::scan(text).map_err(|e| ManifestError {
        file: path.to_path_buf(),
        line: Some(e.line),
        column: e.column,
        key: String::new(),
        message: e.message,
    })?;
    let (raw, places): (RawManifest, _) = read(
        path,
        text,
        "a manifest: a mapping with id, title, version, series and the optional keys",
    )?;
    let ctx = Ctx {
        file: path,
        places: &places,
    };

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

    let series = series::series(&ctx, &raw, registry, &declared, &params, &axes, &points)?;
    outputs::counts(&ctx, &raw)?;
    let series_names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let references = reference::parse(&ctx, &raw.reference_data, &series_names)?;
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
    let known = Known {
        names: &names,
        knowledge: &knowledge,
        references: &references,
    };
    outputs::compare(&ctx, &raw.compare, &known)?;
    let figures = outputs::figures(&ctx, &raw, &series, registry, &axes, points.len(), &known)?;
    outputs::tables(&ctx, &raw, &known)?;
    let ids = outputs::unique_ids(&ctx, &raw)?;
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
    let output_metrics: Vec<(String, Vec<String>, Vec<String>)> = figures
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
        &output_metrics,
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
