//! Experiment manifests: YAML in, a validated [`Manifest`] out.
//!
//! Every error names the file, the line (where it can be found) and the key.
//! serde_yaml reports the line of syntax and type errors itself; for semantic
//! errors found after parsing (unknown solver, empty sweep, a figure naming a
//! series that does not exist) the line is looked up from the key path.
//!
//! Every size is bounded before anything is allocated for it ([`limits`]),
//! and every series' merged parameters are checked against its solver's
//! documented parameters (`SolverDoc::params`) at load time, so a typo such
//! as `batch_lenn` is reported with its file, line and key and nothing runs.

pub mod limits;
mod sweep;

pub use sweep::Points;

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
    series: SeriesMap,
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

/// The `series` mapping, in the manifest's order, each value deserialised in
/// place so that a type error inside a series carries its line.
#[derive(Debug, Clone, Default)]
struct SeriesMap(Vec<(String, RawSeries)>);

impl<'de> Deserialize<'de> for SeriesMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = SeriesMap;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from series names to series")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<SeriesMap, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, RawSeries>()? {
                    if out.len() >= limits::MAX_SERIES {
                        return Err(serde::de::Error::custom(format!(
                            "more than {} series (the limit)",
                            limits::MAX_SERIES
                        )));
                    }
                    if out.iter().any(|(n, _)| n == &k) {
                        return Err(serde::de::Error::custom(format!(
                            "series `{k}` appears twice"
                        )));
                    }
                    out.push((k, v));
                }
                Ok(SeriesMap(out))
            }
        }
        d.deserialize_map(V)
    }
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
    /// Every sweep point, computed from its index on demand.
    pub points: Points,
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

/// Converts a serde_yaml error into a ManifestError with the line and the key:
/// serde_yaml prefixes an error inside the document with its path
/// (`series.sim.replications: invalid type ...`) and names unknown and
/// missing fields in backticks.
fn yaml_error(file: &Path, text: &str, e: &serde_yaml::Error) -> ManifestError {
    let msg = e.to_string();
    // serde_yaml appends " at line L column C" itself; keep the message short.
    let msg = match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    let (path, message) = match msg.split_once(": ") {
        Some((p, rest)) if !p.is_empty() && !p.contains([' ', '`', '"']) => {
            (dotted(p), rest.to_string())
        }
        _ => (String::new(), msg),
    };
    let field = if message.starts_with("unknown field") || message.starts_with("missing field") {
        extract_backticked(&message)
    } else {
        None
    };
    let key = match (path.is_empty(), field) {
        (_, None) => path,
        (true, Some(f)) => f,
        (false, Some(f)) => format!("{path}.{f}"),
    };
    let line = e.location().map(|l| l.line()).or_else(|| {
        if key.is_empty() {
            None
        } else {
            locate(text, &key)
        }
    });
    ManifestError {
        file: file.to_path_buf(),
        line,
        key,
        message,
    }
}

/// serde_yaml's path (`figures.[0].id`) in this module's dotted form (`figures.0.id`).
fn dotted(path: &str) -> String {
    path.replace(".[", ".")
        .replace(['[', ']'], ".")
        .replace("..", ".")
        .trim_matches(['.', '?'])
        .to_string()
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
/// `12` and `12.0` name the same task. Tags and over-long strings are refused.
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
        Yaml::String(s) => {
            if s.chars().count() > limits::MAX_STRING_CHARS {
                return Err(format!(
                    "a string of {} characters; the limit is {}",
                    s.chars().count(),
                    limits::MAX_STRING_CHARS
                ));
            }
            Json::String(s.clone())
        }
        Yaml::Sequence(seq) => Json::Array(seq.iter().map(yaml_to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(m) => {
            let mut out = serde_json::Map::new();
            for (k, v) in m {
                let k = k.as_str().ok_or("mapping keys must be strings")?;
                out.insert(k.to_string(), yaml_to_json(v)?);
            }
            Json::Object(out)
        }
        Yaml::Tagged(t) => {
            return Err(format!(
                "YAML tag `{}`: manifests use plain YAML values without tags",
                t.tag
            ))
        }
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
        check_name(ctx, &format!("{key}.{k}"), k)?;
        let v = yaml_to_json(v).map_err(|e| ctx.err(&format!("{key}.{k}"), e))?;
        out.insert(k.to_string(), v);
    }
    Ok(out)
}

/// Ids that become file names or keys: `[A-Za-z0-9][A-Za-z0-9._-]*`, at most
/// [`limits::MAX_ID_CHARS`] characters, so `../../x` or an empty id never
/// reaches the renderer.
fn check_id(ctx: &Ctx, key: &str, id: &str) -> Result<(), ManifestError> {
    let ok_first = id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric());
    let ok_rest = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok_first || !ok_rest {
        return Err(ctx.err(
            key,
            format!(
                "`{}` is not a valid id: it must start with a letter or digit and contain only letters, digits, `-`, `_` and `.`",
                shorten(id)
            ),
        ));
    }
    if id.chars().count() > limits::MAX_ID_CHARS {
        return Err(ctx.err(
            key,
            format!(
                "id of {} characters; the limit is {}",
                id.chars().count(),
                limits::MAX_ID_CHARS
            ),
        ));
    }
    Ok(())
}

/// Parameter, axis and metric names: any text, but short.
fn check_name(ctx: &Ctx, key: &str, name: &str) -> Result<(), ManifestError> {
    let n = name.chars().count();
    if n == 0 || n > limits::MAX_ID_CHARS {
        return Err(ctx.err(
            key,
            format!(
                "a name of {n} characters; names have 1 to {} characters",
                limits::MAX_ID_CHARS
            ),
        ));
    }
    Ok(())
}

fn check_text(ctx: &Ctx, key: &str, text: &str) -> Result<(), ManifestError> {
    let n = text.chars().count();
    if n > limits::MAX_STRING_CHARS {
        return Err(ctx.err(
            key,
            format!(
                "a string of {n} characters; the limit is {}",
                limits::MAX_STRING_CHARS
            ),
        ));
    }
    Ok(())
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A validated sweep axis: its values are produced only after the whole
/// sweep's size is known to be within the limits.
enum AxisSpec<'a> {
    List(&'a [Yaml]),
    Range {
        from: f64,
        step: f64,
        count: u64,
        integral: bool,
    },
}

impl AxisSpec<'_> {
    fn len(&self) -> u64 {
        match self {
            AxisSpec::List(items) => items.len() as u64,
            AxisSpec::Range { count, .. } => *count,
        }
    }
}

/// Checks one sweep axis specification and counts its values without producing them.
fn axis_spec<'a>(ctx: &Ctx, key: &str, v: &'a Yaml) -> Result<AxisSpec<'a>, ManifestError> {
    match v {
        Yaml::Sequence(items) => {
            if items.is_empty() {
                return Err(ctx.err(key, "empty list: a sweep axis needs at least one value"));
            }
            Ok(AxisSpec::List(items))
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
            range_spec(ctx, key, from, to, step)
        }
        _ => Err(ctx.err(
            key,
            "a sweep axis is a list of values, a range {from, to, step} or {zip: {...}}",
        )),
    }
}

/// A range's number of values must be a finite whole number within the
/// limits, and its step must be positive and representable at the
/// magnitude of its values (else consecutive values would coincide).
fn range_spec<'a>(
    ctx: &Ctx,
    key: &str,
    from: f64,
    to: f64,
    step: f64,
) -> Result<AxisSpec<'a>, ManifestError> {
    let step_key = format!("{key}.step");
    if step <= 0.0 {
        return Err(ctx.err(&step_key, format!("must be > 0, got {step}")));
    }
    if to < from {
        return Err(ctx.err(
            key,
            format!("empty range: `to` ({to}) is below `from` ({from})"),
        ));
    }
    let intervals = (to - from) / step;
    if !intervals.is_finite() {
        return Err(ctx.err(
            key,
            format!(
                "the number of values (to − from)/step + 1 = ({to} − {from})/{step} + 1 is not a finite number"
            ),
        ));
    }
    if intervals + 1.0 > limits::MAX_POINTS as f64 {
        return Err(ctx.err(
            key,
            format!(
                "the range has {:.4e} values; a sweep holds at most {} points",
                intervals + 1.0,
                limits::MAX_POINTS
            ),
        ));
    }
    let whole = intervals.round();
    if (intervals - whole).abs() > 1e-9 * whole.max(1.0) {
        return Err(ctx.err(
            key,
            format!(
                "`to` ({to}) is not reached from `from` ({from}) in steps of {step}: (to − from)/step = {intervals} is not a whole number"
            ),
        ));
    }
    let magnitude = from.abs().max(to.abs());
    let integral = [from, to, step].iter().all(|x| x.fract() == 0.0);
    if integral && magnitude > 9.0e15 {
        return Err(ctx.err(
            key,
            format!("values up to {magnitude:e} are beyond exact integers (|x| <= 9e15)"),
        ));
    }
    // Non-integral values are rounded to 12 significant digits (below).
    if !integral && step < magnitude * 1e-11 {
        return Err(ctx.err(
            &step_key,
            format!(
                "{step} is below the resolution of values around {magnitude:e} (12 significant digits)"
            ),
        ));
    }
    Ok(AxisSpec::Range {
        from,
        step,
        count: whole as u64 + 1,
        integral,
    })
}

/// Produces the values of a checked axis.
fn axis_values(ctx: &Ctx, key: &str, spec: &AxisSpec) -> Result<Vec<Json>, ManifestError> {
    match *spec {
        AxisSpec::List(items) => items
            .iter()
            .map(|x| yaml_to_json(x).map_err(|e| ctx.err(key, e)))
            .collect(),
        AxisSpec::Range {
            from,
            step,
            count,
            integral,
        } => {
            let mut out = Vec::with_capacity(count as usize);
            let mut prev = f64::NEG_INFINITY;
            for i in 0..count {
                let x = from + step * i as f64;
                // Round away accumulated binary noise (0.1 + 0.2 ...) to 12 significant digits.
                let x = if integral {
                    x
                } else {
                    format!("{x:.12e}").parse().unwrap_or(x)
                };
                if x <= prev {
                    return Err(ctx.err(
                        &format!("{key}.step"),
                        format!("values {prev} and {x} coincide: the step is too small for their magnitude"),
                    ));
                }
                prev = x;
                out.push(canonical_number(x).map_err(|e| ctx.err(key, e))?);
            }
            Ok(out)
        }
    }
}

/// Checks the `sweep` mapping, computes its number of points as a product
/// (nothing is expanded), and keeps it as axes from which points are computed.
fn build_sweep(ctx: &Ctx, sweep: &Mapping) -> Result<(Vec<String>, Points), ManifestError> {
    if sweep.len() > limits::MAX_AXES {
        return Err(ctx.err(
            "sweep",
            format!(
                "{} sweep entries; the limit is {}",
                sweep.len(),
                limits::MAX_AXES
            ),
        ));
    }
    // First pass: names, specs and lengths only.
    // Per sweep entry: its key and its members (name, key, spec).
    type Members<'a> = Vec<(String, String, AxisSpec<'a>)>;
    let mut specs: Vec<(String, Members)> = Vec::new();
    for (k, v) in sweep {
        let name = k
            .as_str()
            .ok_or_else(|| ctx.err("sweep", "axis names must be strings"))?
            .to_string();
        let key = format!("sweep.{name}");
        check_name(ctx, &key, &name)?;
        let zip = match v {
            Yaml::Mapping(m) if m.contains_key(Yaml::from("zip")) => {
                if m.len() != 1 {
                    return Err(ctx.err(&key, "a zip group holds only `zip: {axis: values, ...}`"));
                }
                m.get(Yaml::from("zip"))
            }
            _ => None,
        };
        let mut members = Vec::new();
        if let Some(z) = zip {
            let Yaml::Mapping(zm) = z else {
                return Err(ctx.err(&format!("{key}.zip"), "must map axis names to values"));
            };
            if zm.is_empty() {
                return Err(ctx.err(&format!("{key}.zip"), "empty zip group"));
            }
            if zm.len() > limits::MAX_AXES {
                return Err(ctx.err(
                    &format!("{key}.zip"),
                    format!(
                        "{} zipped axes; the limit is {}",
                        zm.len(),
                        limits::MAX_AXES
                    ),
                ));
            }
            for (mk, mv) in zm {
                let mname = mk
                    .as_str()
                    .ok_or_else(|| ctx.err(&key, "axis names must be strings"))?
                    .to_string();
                let mkey = format!("{key}.zip.{mname}");
                check_name(ctx, &mkey, &mname)?;
                let spec = axis_spec(ctx, &mkey, mv)?;
                members.push((mname, mkey, spec));
            }
            let len = members[0].2.len();
            if let Some((bad, bkey, s)) = members.iter().find(|(_, _, s)| s.len() != len) {
                return Err(ctx.err(
                    bkey,
                    format!(
                        "zipped axes must have the same length: `{}` has {len} values, `{bad}` has {}",
                        members[0].0,
                        s.len()
                    ),
                ));
            }
        } else {
            let spec = axis_spec(ctx, &key, v)?;
            members.push((name.clone(), key.clone(), spec));
        }
        specs.push((key, members));
    }
    let mut seen = BTreeSet::new();
    for (_, members) in &specs {
        for (a, akey, _) in members {
            if !seen.insert(a.clone()) {
                return Err(ctx.err(akey, format!("axis `{a}` appears twice in the sweep")));
            }
        }
    }
    // The number of points, as a product, before any value is produced.
    let mut total: u64 = 1;
    for (key, members) in &specs {
        total = total.saturating_mul(members[0].2.len());
        if total > limits::MAX_POINTS {
            let factors: Vec<String> = specs
                .iter()
                .map(|(_, m)| m[0].2.len().to_string())
                .collect();
            return Err(ctx.err(
                key,
                format!(
                    "the sweep has {} = {:.4e} points; the limit is {} points per manifest",
                    factors.join(" × "),
                    specs
                        .iter()
                        .map(|(_, m)| m[0].2.len() as f64)
                        .product::<f64>(),
                    limits::MAX_POINTS
                ),
            ));
        }
    }
    let mut axes = Vec::new();
    let mut entries = Vec::new();
    for (_, members) in &specs {
        let mut names = Vec::new();
        let mut columns = Vec::new();
        for (name, key, spec) in members {
            columns.push(axis_values(ctx, key, spec)?);
            names.push(name.clone());
        }
        axes.extend(names.iter().cloned());
        entries.push(sweep::Entry { names, columns });
    }
    Ok((axes, Points::new(entries)))
}

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
        tasks_per_point += u64::from(reps_max);
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
        series.push(Series {
            label: s.label.clone().unwrap_or_else(|| name.clone()),
            name: name.clone(),
            solver: s.solver.clone(),
            params: sparams,
            replications: s.replications.unwrap_or(1),
            seed: s.seed.unwrap_or(1),
            quick_params: qparams,
            quick_replications: quick.replications,
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
    let references = crate::reference::parse(path, text, &raw.reference_data, &series_names)?;
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
            check_name(&ctx, &format!("{key}.y"), metric)?;
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
        for metric in &t.metrics {
            check_name(&ctx, &format!("tables.{i}.metrics"), metric)?;
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

/// Every key a series' solver receives (manifest params, series params,
/// quick params, sweep axes) must be one of the solver's documented
/// parameters (`SolverDoc::params`, which a solvers test keeps equal to what
/// its parameter struct accepts). The error points at the key where the
/// parameter is written.
#[allow(clippy::too_many_arguments)]
fn check_schema(
    ctx: &Ctx,
    series: &str,
    solver: &str,
    doc: &solvers::SolverDoc,
    params: &BTreeMap<String, Json>,
    sparams: &BTreeMap<String, Json>,
    qparams: &BTreeMap<String, Json>,
    axes: &[String],
    sweep: &Mapping,
) -> Result<(), ManifestError> {
    let known: Vec<&str> = doc.params.iter().map(|p| p.name).collect();
    let sweep_key = |axis: &str| -> String {
        for (k, v) in sweep {
            let Some(k) = k.as_str() else { continue };
            if k == axis {
                return format!("sweep.{k}");
            }
            if let Some(Yaml::Mapping(z)) = v.as_mapping().and_then(|m| m.get(Yaml::from("zip"))) {
                if z.contains_key(Yaml::from(axis)) {
                    return format!("sweep.{k}.zip.{axis}");
                }
            }
        }
        format!("sweep.{axis}")
    };
    let candidates = sparams
        .keys()
        .map(|k| (k.as_str(), format!("series.{series}.params.{k}")))
        .chain(
            qparams
                .keys()
                .map(|k| (k.as_str(), format!("series.{series}.quick.params.{k}"))),
        )
        .chain(params.keys().map(|k| (k.as_str(), format!("params.{k}"))))
        .chain(axes.iter().map(|a| (a.as_str(), sweep_key(a))));
    for (name, key) in candidates {
        if known.contains(&name) {
            continue;
        }
        let hint = match nearest(name, &known) {
            Some(n) => format!("did you mean `{n}`? "),
            None => String::new(),
        };
        return Err(ctx.err(
            &key,
            format!(
                "`{}` is not a parameter of solver `{solver}` (series `{series}`); {hint}its parameters: {}",
                shorten(name),
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// The documented name closest to a misspelt one (edit distance at most 2).
fn nearest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    fn distance(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let sub = prev[j] + usize::from(ca != *cb);
                cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    if name.chars().count() > limits::MAX_ID_CHARS {
        return None;
    }
    known
        .iter()
        .map(|k| (distance(&name.to_lowercase(), &k.to_lowercase()), *k))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, k)| k)
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
        assert_eq!(m.points.get(2).unwrap().json(), r#"{"m":6,"n":6}"#);
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
        assert_eq!(m.points.get(2).unwrap().values["m"], serde_json::json!(0.3));
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
