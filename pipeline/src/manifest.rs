//! Experiment manifests: YAML in, a validated [`Manifest`] out.
//!
//! Every error names the file, the line (where it can be found) and the key.
//! serde_yaml reports the line of syntax and type errors itself; for semantic
//! errors found after parsing (unknown solver, empty sweep, a figure naming a
//! series that does not exist) the line is looked up from the key path.

use serde::Deserialize;
use serde_json::Value as Json;
use serde_yaml::{Mapping, Value as Yaml};
use solvers::Registry;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use crate::reference::Reference;
pub use crate::timeseries::FigureKind;

#[derive(Debug, Clone, PartialEq)]
pub struct ManifestError {
    pub file: PathBuf,
    pub line: Option<usize>,
    /// Dotted key path, e.g. `series.sim.solver`; empty when it concerns the whole file.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if self.key.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": key `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ManifestError {}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    id: String,
    title: String,
    #[serde(default)]
    source: String,
    version: i64,
    #[serde(default)]
    description: String,
    #[serde(default)]
    params: Mapping,
    #[serde(default)]
    sweep: Mapping,
    series: Mapping,
    #[serde(default)]
    compare: Vec<Compare>,
    #[serde(default)]
    figures: Vec<RawFigure>,
    #[serde(default)]
    tables: Vec<TableSpec>,
    #[serde(default)]
    reference_data: Mapping,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSeries {
    solver: String,
    #[serde(default)]
    params: Mapping,
    #[serde(default)]
    replications: Option<u32>,
    #[serde(default)]
    seed: Option<u64>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    quick: Option<RawQuick>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawQuick {
    #[serde(default)]
    params: Mapping,
    #[serde(default)]
    replications: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Compare {
    pub metric: String,
    pub reference: String,
    pub candidate: String,
    #[serde(default)]
    pub tolerance: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFigure {
    id: String,
    #[serde(default)]
    title: Option<String>,
    x: String,
    y: OneOrMany,
    series: Vec<String>,
    #[serde(default)]
    xlabel: Option<String>,
    #[serde(default)]
    ylabel: Option<String>,
    #[serde(default)]
    log_y: bool,
    #[serde(default)]
    kind: FigureKind,
    #[serde(default)]
    x_per: Option<String>,
    #[serde(default)]
    x_values: Option<Vec<f64>>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    pub id: String,
    pub kind: TableKind,
    #[serde(default)]
    pub title: Option<String>,
    /// `values` tables: which series and metrics to tabulate (default: all series, every metric).
    #[serde(default)]
    pub series: Vec<String>,
    #[serde(default)]
    pub metrics: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableKind {
    ErrorMeasures,
    Values,
}

/// One series: a solver with its parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub solver: String,
    pub label: String,
    pub params: BTreeMap<String, Json>,
    pub replications: u32,
    pub seed: u64,
    pub quick_params: BTreeMap<String, Json>,
    pub quick_replications: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub id: String,
    pub title: String,
    pub x: String,
    pub y: Vec<String>,
    pub series: Vec<String>,
    pub xlabel: String,
    pub ylabel: String,
    pub log_y: bool,
    /// What the x-axis is (crate::timeseries): a sweep axis by default.
    pub kind: FigureKind,
    pub x_per: Option<String>,
    pub x_values: Vec<f64>,
}

/// One point of the sweep: its index in sweep order and the axis values.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub index: usize,
    pub values: BTreeMap<String, Json>,
}

impl Point {
    /// Canonical JSON object of the axis values.
    pub fn json(&self) -> String {
        serde_json::to_string(&self.values).expect("point serialises")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub path: PathBuf,
    pub text: String,
    /// Hex SHA-256 of `text`.
    pub hash: String,
    pub id: String,
    pub title: String,
    pub source: String,
    pub description: String,
    pub version: i64,
    pub params: BTreeMap<String, Json>,
    /// Names of the sweep axes (zipped members included), in order.
    pub axes: Vec<String>,
    pub points: Vec<Point>,
    pub series: Vec<Series>,
    pub compare: Vec<Compare>,
    pub figures: Vec<Figure>,
    pub tables: Vec<TableSpec>,
    /// Paper numbers (crate::reference).
    pub references: Vec<Reference>,
}

impl Manifest {
    pub fn series(&self, name: &str) -> Option<&Series> {
        self.series.iter().find(|s| s.name == name)
    }
}

/// Finds the 1-based line of a dotted key path in YAML text (block or flow style),
/// best effort: each segment is searched at or after the line of its parent.
pub fn locate(text: &str, path: &str) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let mut from = 0usize;
    let mut found = None;
    for seg in path.split('.').filter(|s| !s.is_empty()) {
        if let Ok(i) = seg.parse::<usize>() {
            // The i-th list item after the parent line.
            let mut seen = 0;
            let mut hit = None;
            for (ln, l) in lines.iter().enumerate().skip(from) {
                if l.trim_start().starts_with("- ") || l.trim() == "-" {
                    if seen == i {
                        hit = Some(ln);
                        break;
                    }
                    seen += 1;
                }
            }
            let ln = hit?;
            from = ln;
            found = Some(ln);
            continue;
        }
        let hit = lines
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, l)| has_key(l, seg));
        let (ln, _) = hit?;
        from = ln;
        found = Some(ln);
    }
    found.map(|l| l + 1)
}

fn has_key(line: &str, key: &str) -> bool {
    let code = line.split(" #").next().unwrap_or(line);
    let mut start = 0;
    while let Some(pos) = code[start..].find(key) {
        let at = start + pos;
        let before_ok = at == 0
            || matches!(
                code.as_bytes()[at - 1],
                b' ' | b'{' | b',' | b'-' | b'\t' | b'"' | b'\''
            );
        let rest = code[at + key.len()..].trim_start_matches(['"', '\'']);
        if before_ok && rest.trim_start().starts_with(':') {
            return true;
        }
        start = at + key.len();
    }
    false
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, key: &str, message: impl Into<String>) -> ManifestError {
        ManifestError {
            file: self.file.to_path_buf(),
            line: locate(self.text, key),
            key: key.to_string(),
            message: message.into(),
        }
    }
}

/// Converts a serde_yaml error into a ManifestError with the line, and the key
/// when serde names one (unknown or missing field).
fn yaml_error(file: &Path, text: &str, e: &serde_yaml::Error, context: &str) -> ManifestError {
    let msg = e.to_string();
    let key = extract_backticked(&msg).unwrap_or_default();
    let line = e.location().map(|l| l.line()).or_else(|| {
        if key.is_empty() {
            None
        } else {
            locate(text, &format!("{context}.{key}"))
        }
    });
    let full_key = match (context.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => context.to_string(),
        (false, false) => format!("{context}.{key}"),
    };
    // serde_yaml appends " at line L column C" itself; keep the message short.
    let message = match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    ManifestError {
        file: file.to_path_buf(),
        line,
        key: full_key,
        message,
    }
}

fn extract_backticked(msg: &str) -> Option<String> {
    for prefix in ["unknown field `", "missing field `", "unknown variant `"] {
        if let Some(i) = msg.find(prefix) {
            let rest = &msg[i + prefix.len()..];
            return rest.find('`').map(|j| rest[..j].to_string());
        }
    }
    None
}

/// Converts YAML to canonical JSON: integral numbers become integers so that
/// `12` and `12.0` name the same task.
pub fn yaml_to_json(v: &Yaml) -> Result<Json, String> {
    Ok(match v {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else {
                let f = n.as_f64().ok_or("number out of range")?;
                canonical_number(f)?
            }
        }
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(seq) => Json::Array(seq.iter().map(yaml_to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let k = k.as_str().ok_or("mapping keys must be strings")?;
                out.insert(k.to_string(), yaml_to_json(v)?);
            }
            Json::Object(out)
        }
        Yaml::Tagged(t) => yaml_to_json(&t.value)?,
    })
}

pub fn canonical_number(f: f64) -> Result<Json, String> {
    if !f.is_finite() {
        return Err(format!("{f} is not a finite number"));
    }
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Ok(Json::from(f as i64))
    } else {
        Ok(Json::from(f))
    }
}

fn mapping_to_params(
    ctx: &Ctx,
    key: &str,
    m: &Mapping,
) -> Result<BTreeMap<String, Json>, ManifestError> {
    let mut out = BTreeMap::new();
    for (k, v) in m {
        let k = k
            .as_str()
            .ok_or_else(|| ctx.err(key, "parameter names must be strings"))?;
        let v = yaml_to_json(v).map_err(|e| ctx.err(&format!("{key}.{k}"), e))?;
        out.insert(k.to_string(), v);
    }
    Ok(out)
}

/// Expands one sweep axis specification into its values.
fn axis_values(ctx: &Ctx, key: &str, v: &Yaml) -> Result<Vec<Json>, ManifestError> {
    match v {
        Yaml::Sequence(items) => {
            if items.is_empty() {
                return Err(ctx.err(key, "empty list: a sweep axis needs at least one value"));
            }
            items
                .iter()
                .map(|x| yaml_to_json(x).map_err(|e| ctx.err(key, e)))
                .collect()
        }
        Yaml::Mapping(m) => {
            let get = |name: &str| m.get(Yaml::from(name));
            for k in m.keys() {
                let k = k.as_str().unwrap_or("?");
                if !["from", "to", "step"].contains(&k) {
                    return Err(ctx.err(
                        &format!("{key}.{k}"),
                        "unknown key in a range (expected `from`, `to`, `step`, or a `zip` group)",
                    ));
                }
            }
            let num = |name: &str| -> Result<Option<f64>, ManifestError> {
                match get(name) {
                    None => Ok(None),
                    Some(x) => x
                        .as_f64()
                        .filter(|f| f.is_finite())
                        .map(Some)
                        .ok_or_else(|| {
                            ctx.err(&format!("{key}.{name}"), "must be a finite number")
                        }),
                }
            };
            let from = num("from")?.ok_or_else(|| ctx.err(key, "a range needs `from`"))?;
            let to = num("to")?.ok_or_else(|| ctx.err(key, "a range needs `to`"))?;
            let step = num("step")?.unwrap_or(1.0);
            if step <= 0.0 {
                return Err(ctx.err(&format!("{key}.step"), "must be > 0"));
            }
            if to < from {
                return Err(ctx.err(
                    key,
                    format!("empty range: `to` ({to}) is below `from` ({from})"),
                ));
            }
            let count = ((to - from) / step + 1e-9).floor() as usize + 1;
            if count > 100_000 {
                return Err(ctx.err(key, format!("{count} values is too many for one axis")));
            }
            let integral = [from, to, step].iter().all(|x| x.fract() == 0.0);
            (0..count)
                .map(|i| {
                    let x = from + step * i as f64;
                    // Round away accumulated binary noise (0.1 + 0.2 ...) to 12 significant digits.
                    let x = if integral {
                        x
                    } else {
                        format!("{x:.12e}").parse().unwrap_or(x)
                    };
                    canonical_number(x).map_err(|e| ctx.err(key, e))
                })
                .collect()
        }
        _ => Err(ctx.err(
            key,
            "a sweep axis is a list of values, a range {from, to, step} or {zip: {...}}",
        )),
    }
}

/// Expands the `sweep` mapping into points (cartesian product of entries in order;
/// a `zip` group contributes its members together).
fn expand_sweep(ctx: &Ctx, sweep: &Mapping) -> Result<(Vec<String>, Vec<Point>), ManifestError> {
    // Each entry: list of alternative assignments (axis -> value).
    let mut entries: Vec<Vec<BTreeMap<String, Json>>> = Vec::new();
    let mut axes = Vec::new();
    for (k, v) in sweep {
        let name = k
            .as_str()
            .ok_or_else(|| ctx.err("sweep", "axis names must be strings"))?
            .to_string();
        let key = format!("sweep.{name}");
        let zip = match v {
            Yaml::Mapping(m) if m.contains_key(Yaml::from("zip")) => {
                if m.len() != 1 {
                    return Err(ctx.err(&key, "a zip group holds only `zip: {axis: values, ...}`"));
                }
                Some(m.get(Yaml::from("zip")).cloned().unwrap_or(Yaml::Null))
            }
            _ => None,
        };
        if let Some(z) = zip {
            let Yaml::Mapping(members) = z else {
                return Err(ctx.err(&format!("{key}.zip"), "must map axis names to values"));
            };
            if members.is_empty() {
                return Err(ctx.err(&format!("{key}.zip"), "empty zip group"));
            }
            let mut cols: Vec<(String, Vec<Json>)> = Vec::new();
            for (mk, mv) in &members {
                let mname = mk
                    .as_str()
                    .ok_or_else(|| ctx.err(&key, "axis names must be strings"))?
                    .to_string();
                let vals = axis_values(ctx, &format!("{key}.zip.{mname}"), mv)?;
                cols.push((mname, vals));
            }
            let len = cols[0].1.len();
            if let Some((bad, v)) = cols.iter().find(|(_, v)| v.len() != len) {
                return Err(ctx.err(
                    &format!("{key}.zip.{bad}"),
                    format!(
                        "zipped axes must have the same length: `{}` has {len} values, `{bad}` has {}",
                        cols[0].0,
                        v.len()
                    ),
                ));
            }
            let mut alts = Vec::with_capacity(len);
            for i in 0..len {
                alts.push(
                    cols.iter()
                        .map(|(n, v)| (n.clone(), v[i].clone()))
                        .collect(),
                );
            }
            axes.extend(cols.iter().map(|(n, _)| n.clone()));
            entries.push(alts);
        } else {
            let vals = axis_values(ctx, &key, v)?;
            axes.push(name.clone());
            entries.push(
                vals.into_iter()
                    .map(|x| BTreeMap::from([(name.clone(), x)]))
                    .collect(),
            );
        }
    }
    let mut seen = BTreeSet::new();
    for a in &axes {
        if !seen.insert(a) {
            return Err(ctx.err(&format!("sweep.{a}"), "axis appears twice in the sweep"));
        }
    }
    let mut points: Vec<BTreeMap<String, Json>> = vec![BTreeMap::new()];
    for alts in &entries {
        let mut next = Vec::with_capacity(points.len() * alts.len());
        for p in &points {
            for a in alts {
                let mut q = p.clone();
                q.extend(a.clone());
                next.push(q);
            }
        }
        points = next;
        if points.len() > 1_000_000 {
            return Err(ctx.err("sweep", "the sweep expands to more than a million points"));
        }
    }
    Ok((
        axes,
        points
            .into_iter()
            .enumerate()
            .map(|(index, values)| Point { index, values })
            .collect(),
    ))
}

/// Parses and validates one manifest file.
pub fn load(path: &Path, registry: &Registry) -> Result<Manifest, ManifestError> {
    let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
        file: path.to_path_buf(),
        line: None,
        key: String::new(),
        message: format!("cannot read: {e}"),
    })?;
    parse(path, &text, registry)
}

/// Parses and validates manifest `text` (reported as coming from `path`).
pub fn parse(path: &Path, text: &str, registry: &Registry) -> Result<Manifest, ManifestError> {
    let ctx = Ctx { file: path, text };
    let raw: RawManifest =
        serde_yaml::from_str(text).map_err(|e| yaml_error(path, text, &e, ""))?;

    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if raw.id.trim().is_empty() {
        return Err(ctx.err("id", "must not be empty"));
    }
    if !raw
        .id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(ctx.err("id", "may contain only letters, digits, `-`, `_` and `.`"));
    }
    if !stem.is_empty() && stem != raw.id {
        return Err(ctx.err(
            "id",
            format!(
                "`{}` does not match the file name `{stem}` (file name = id)",
                raw.id
            ),
        ));
    }
    if raw.version < 1 {
        return Err(ctx.err("version", "must be an integer >= 1"));
    }
    let params = mapping_to_params(&ctx, "params", &raw.params)?;
    let (axes, points) = expand_sweep(&ctx, &raw.sweep)?;

    if raw.series.is_empty() {
        return Err(ctx.err("series", "at least one series is needed"));
    }
    let mut series = Vec::new();
    for (k, v) in &raw.series {
        let name = k
            .as_str()
            .ok_or_else(|| ctx.err("series", "series names must be strings"))?
            .to_string();
        let key = format!("series.{name}");
        let s: RawSeries =
            serde_yaml::from_value(v.clone()).map_err(|e| yaml_error(path, text, &e, &key))?;
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
        let replications = s.replications.unwrap_or(1);
        if replications == 0 {
            return Err(ctx.err(&format!("{key}.replications"), "must be >= 1"));
        }
        if solver.kind() == solvers::Kind::Analytic && replications > 1 {
            return Err(ctx.err(
                &format!("{key}.replications"),
                format!("`{}` is analytic: replications must be 1", s.solver),
            ));
        }
        let quick = s.quick.clone().unwrap_or(RawQuick {
            params: Mapping::new(),
            replications: None,
        });
        if quick.replications == Some(0) {
            return Err(ctx.err(&format!("{key}.quick.replications"), "must be >= 1"));
        }
        let sparams = mapping_to_params(&ctx, &format!("{key}.params"), &s.params)?;
        for axis in &axes {
            if sparams.contains_key(axis) {
                return Err(ctx.err(
                    &format!("{key}.params.{axis}"),
                    "is also a sweep axis; the sweep value would always win",
                ));
            }
        }
        series.push(Series {
            label: s.label.clone().unwrap_or_else(|| name.clone()),
            name,
            solver: s.solver.clone(),
            params: sparams,
            replications,
            seed: s.seed.unwrap_or(1),
            quick_params: mapping_to_params(&ctx, &format!("{key}.quick.params"), &quick.params)?,
            quick_replications: quick.replications,
        });
    }
    let series_names: Vec<String> = series.iter().map(|s| s.name.clone()).collect();
    let references = crate::reference::parse(path, text, &raw.reference_data, &series_names)?;
    let mut names: BTreeSet<&str> = series.iter().map(|s| s.name.as_str()).collect();
    names.extend(references.iter().map(|r| r.name.as_str()));
    for (i, c) in raw.compare.iter().enumerate() {
        for (field, v) in [("reference", &c.reference), ("candidate", &c.candidate)] {
            if !names.contains(v.as_str()) {
                return Err(ctx.err(
                    &format!("compare.{i}.{field}"),
                    format!(
                        "no series named `{v}` (series: {})",
                        names.iter().copied().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
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
        if f.kind == FigureKind::Sweep && !axes.contains(&f.x) {
            return Err(ctx.err(
                &format!("{key}.x"),
                format!("`{}` is not a sweep axis (axes: {})", f.x, axes.join(", ")),
            ));
        }
        for s in &f.series {
            if !names.contains(s.as_str()) {
                return Err(ctx.err(&format!("{key}.series"), format!("no series named `{s}`")));
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
        crate::timeseries::validate(f.kind, &y, &f.x_per, &f.x_values, points.len())
            .map_err(|(k, msg)| ctx.err(&format!("{key}.{k}"), msg))?;
        figures.push(Figure {
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
        for s in &t.series {
            if !names.contains(s.as_str()) {
                return Err(ctx.err(
                    &format!("tables.{i}.series"),
                    format!("no series named `{s}`"),
                ));
            }
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
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> Registry {
        Registry::with_all()
    }

    const GOOD: &str = r#"
id: t1
title: test
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0 }
sweep:
  nm: { zip: { n: { from: 4, to: 6 }, m: [4, 5, 6] } }
series:
  model: { solver: credit.ctmc }
  sim:
    solver: credit.sim
    params: { batch_len: 1000 }
compare:
  - { metric: L1, reference: sim, candidate: model, tolerance: 0.05 }
figures:
  - { id: f1, x: n, y: L1, series: [model, sim] }
tables:
  - { id: f1-em, kind: error-measures }
"#;

    #[test]
    fn parses_and_expands_zipped_axes() {
        let m = parse(Path::new("t1.yaml"), GOOD, &reg()).unwrap();
        assert_eq!(m.axes, vec!["n", "m"]);
        assert_eq!(m.points.len(), 3);
        assert_eq!(m.points[2].json(), r#"{"m":6,"n":6}"#);
        assert_eq!(m.params["lambda"], serde_json::json!(5));
    }

    #[test]
    fn grid_and_float_ranges() {
        let text = GOOD.replace(
            "nm: { zip: { n: { from: 4, to: 6 }, m: [4, 5, 6] } }",
            "n: [4, 5]\n  m: { from: 0.1, to: 0.3, step: 0.1 }",
        );
        let text = text.replace("x: n", "x: m");
        let m = parse(Path::new("t1.yaml"), &text, &reg()).unwrap();
        assert_eq!(m.points.len(), 6);
        assert_eq!(m.points[2].values["m"], serde_json::json!(0.3));
    }

    fn err_of(text: &str) -> ManifestError {
        parse(Path::new("t1.yaml"), text, &reg()).unwrap_err()
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let e = err_of(&GOOD.replace("version: 1", "version: 1\ncolour: red"));
        assert_eq!(e.key, "colour");
        assert_eq!(e.line, Some(5));
        assert!(e.to_string().starts_with("t1.yaml:5: key `colour`"), "{e}");
    }

    #[test]
    fn unknown_key_inside_a_series() {
        let e = err_of(&GOOD.replace("params: { batch_len: 1000 }", "parms: { batch_len: 1000 }"));
        assert_eq!(e.key, "series.sim.parms");
        assert_eq!(e.line, Some(12), "{e}");
    }

    #[test]
    fn wrong_type_gives_line() {
        let e = err_of(&GOOD.replace("version: 1", "version: one"));
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.message.contains("invalid type"), "{e}");
    }

    #[test]
    fn unknown_solver() {
        let e = err_of(&GOOD.replace("solver: credit.ctmc", "solver: credit.magic"));
        assert_eq!(e.key, "series.model.solver");
        assert_eq!(e.line, Some(9));
        assert!(e.message.contains("unknown solver `credit.magic`"));
    }

    #[test]
    fn inconsistent_and_empty_sweeps() {
        let e = err_of(&GOOD.replace("m: [4, 5, 6]", "m: [4, 5]"));
        assert!(e.message.contains("same length"), "{e}");
        assert_eq!(e.line, Some(7));
        let e = err_of(&GOOD.replace("m: [4, 5, 6]", "m: []"));
        assert!(e.message.contains("empty list"), "{e}");
        let e = err_of(&GOOD.replace("n: { from: 4, to: 6 }", "n: { from: 6, to: 4 }"));
        assert!(e.message.contains("empty range"), "{e}");
    }

    #[test]
    fn dangling_references() {
        let e = err_of(&GOOD.replace("series: [model, sim]", "series: [model, simu]"));
        assert_eq!(e.key, "figures.0.series");
        let e = err_of(&GOOD.replace("reference: sim", "reference: simu"));
        assert_eq!(e.key, "compare.0.reference");
        let e = err_of(&GOOD.replace("x: n", "x: lambda"));
        assert_eq!(e.key, "figures.0.x");
    }

    #[test]
    fn id_must_match_file_name() {
        let e = parse(Path::new("other.yaml"), GOOD, &reg()).unwrap_err();
        assert_eq!(e.key, "id");
    }

    #[test]
    fn syntax_error_has_line() {
        let e = err_of("id: t1\ntitle: [unclosed\n");
        assert!(e.line.is_some(), "{e}");
    }

    #[test]
    fn locate_finds_flow_and_block_keys() {
        let t = "a:\n  b: { c: 1 }\n  d:\n    e: 2\n";
        assert_eq!(locate(t, "a.b.c"), Some(2));
        assert_eq!(locate(t, "a.d.e"), Some(4));
        assert_eq!(locate(t, "a.x"), None);
    }
}
