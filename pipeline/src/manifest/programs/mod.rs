//! `solvers:`: programs a manifest declares as solvers ("bring your own
//! solver"), checked at load like the compiled-in solvers.
//!
//! ```yaml
//! solvers:
//!   mm1py:
//!     command: [python3, solvers/mm1.py]   # run from the manifest's folder
//!     kind: simulation                      # or analytic
//!     version: 1
//!     files: [solvers/mm1.py]               # hashed into every task key
//!     params:
//!       lambda: { type: float, min: 0 }
//!       n:      { type: int, min: 1, default: 10 }
//!     metrics: [L, W]
//!     timeout_s: 120
//! ```
//!
//! A declaration is seen by its own manifest only (a manifest says all it
//! runs). Its series are checked like any other (unknown parameters with
//! "did you mean", in `validate.rs`) and further here: each value given
//! against the parameter's type, range and choices, every required parameter
//! given, every metric a figure, comparison, table or precision target reads
//! of it declared. Defaults are written into the series' parameters, so they
//! are part of every task key and of what the program receives. The program
//! itself is [`external::ExternalSolver`].
//!
//! Here: the section as written and the declared programs built from it;
//! `checks.rs`: the series and metrics of declared programs; `facts.rs`:
//! what runs record of them in the store, and the programs of a folder.

mod checks;
mod facts;

pub(super) use checks::check_series;
pub use facts::{code_fact, declared_in, dir_fact, facts_of, CodeRecord};

use super::place::Ctx;
use super::values::{check_id, check_name, check_text, shorten, yaml_to_json};
use super::yaml::Value as Yaml;
use super::{limits, Manifest, ManifestError};
use external::{ExternalSolver, ParamSpec, ParamType, Program};
use serde::Deserialize;
use solvers::{Kind, Registry, Solver};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most words in a command.
const MAX_COMMAND_WORDS: usize = 256;

/// A mapping kept in the manifest's order, each value deserialised in place
/// (so a type error inside carries its line), at most `MAX_SERIES` entries.
#[derive(Debug, Clone)]
pub(super) struct Ordered<T>(pub(super) Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping from names to declarations")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<Ordered<T>, A::Error> {
                let mut out: Vec<(String, T)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, T>()? {
                    if out.len() >= limits::MAX_SERIES {
                        return Err(serde::de::Error::custom(format!(
                            "more than {} entries (the limit)",
                            limits::MAX_SERIES
                        )));
                    }
                    if out.iter().any(|(n, _)| n == &k) {
                        return Err(serde::de::Error::custom(format!("`{k}` appears twice")));
                    }
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

/// `command: [python3, sim.py]`, or one word: `command: ./sim`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub(super) enum Words {
    One(String),
    Many(Vec<String>),
}

/// One entry of `solvers:` as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSolver {
    command: Words,
    kind: Kind,
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    files: Option<Vec<String>>,
    #[serde(default)]
    params: Ordered<RawParam>,
    metrics: Vec<String>,
    #[serde(default)]
    timeout_s: Option<f64>,
    #[serde(default)]
    memory_mb: Option<u64>,
    #[serde(default)]
    summary: Option<String>,
}

/// `{ type: float, min: 0, max: 1, choices: [...], default: 0.5, doc: "..." }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawParam {
    #[serde(rename = "type")]
    ty: ParamType,
    #[serde(default)]
    min: Option<f64>,
    #[serde(default)]
    max: Option<f64>,
    #[serde(default)]
    choices: Vec<Yaml>,
    #[serde(default)]
    default: Option<Yaml>,
    #[serde(default)]
    doc: Option<String>,
}

/// Whether a declaration's files must exist: at load from disk they must; a
/// stored manifest read back later (reports, export) loads without them, its
/// programs unavailable to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Files {
    MustExist,
    IfPresent,
}

/// The folder a manifest's programs run in: its own, made absolute.
fn folder_of(path: &Path) -> PathBuf {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let dir = parent.unwrap_or(Path::new("."));
    std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf())
}

/// The declared programs of a manifest, checked, their files hashed.
pub(super) fn declare(
    ctx: &Ctx,
    raw: &Ordered<RawSolver>,
    registry: &Registry,
    files: Files,
) -> Result<Vec<Arc<ExternalSolver>>, ManifestError> {
    let dir = folder_of(ctx.file);
    let mut out = Vec::new();
    for (name, r) in &raw.0 {
        let key = format!("solvers.{name}");
        check_id(ctx, &key, name)?;
        if registry.get(name).is_some_and(|s| s.code_hash().is_none()) {
            return Err(ctx.err(
                &key,
                format!("`{name}` is the name of a solver built into repro; give the program another name"),
            ));
        }
        let command = match &r.command {
            Words::One(w) => vec![w.clone()],
            Words::Many(v) => v.clone(),
        };
        if command.is_empty() || command[0].trim().is_empty() {
            return Err(ctx.err(&format!("{key}.command"), "must name a program"));
        }
        if command.len() > MAX_COMMAND_WORDS {
            return Err(ctx.err(
                &format!("{key}.command"),
                format!("{} words; the limit is {MAX_COMMAND_WORDS}", command.len()),
            ));
        }
        for w in &command {
            check_text(ctx, &format!("{key}.command"), w)?;
        }
        let version = r.version.unwrap_or(1);
        if version == 0 {
            return Err(ctx.err(&format!("{key}.version"), "must be an integer >= 1"));
        }
        if r.metrics.is_empty() {
            return Err(ctx.err(
                &format!("{key}.metrics"),
                "a solver reports at least one metric",
            ));
        }
        for (i, m) in r.metrics.iter().enumerate() {
            check_name(ctx, &format!("{key}.metrics"), m)?;
            if r.metrics[..i].contains(m) {
                return Err(ctx.err(&format!("{key}.metrics"), format!("`{m}` is listed twice")));
            }
        }
        let mut params = Vec::new();
        for (p, rp) in &r.params.0 {
            let pkey = format!("{key}.params.{p}");
            check_name(ctx, &pkey, p)?;
            let json = |v: &Yaml, field: &str| {
                yaml_to_json(v).map_err(|e| ctx.err(&format!("{pkey}.{field}"), e))
            };
            let spec = ParamSpec {
                name: p.clone(),
                ty: rp.ty,
                min: rp.min,
                max: rp.max,
                choices: rp
                    .choices
                    .iter()
                    .map(|c| json(c, "choices"))
                    .collect::<Result<_, _>>()?,
                default: rp
                    .default
                    .as_ref()
                    .map(|d| json(d, "default"))
                    .transpose()?,
                doc: rp.doc.clone().unwrap_or_default(),
            };
            check_text(ctx, &format!("{pkey}.doc"), &spec.doc)?;
            spec.validate()
                .map_err(|(field, msg)| ctx.err(&format!("{pkey}.{field}"), msg))?;
            params.push(spec);
        }
        let timeout_s = r.timeout_s.unwrap_or(external::spec::DEFAULT_TIMEOUT_S);
        if !(timeout_s.is_finite() && timeout_s > 0.0 && timeout_s <= external::spec::MAX_TIMEOUT_S)
        {
            return Err(ctx.err(
                &format!("{key}.timeout_s"),
                format!(
                    "must be a number of seconds > 0 and at most {} (a week), got {timeout_s}",
                    external::spec::MAX_TIMEOUT_S
                ),
            ));
        }
        let memory_mb = r.memory_mb.unwrap_or(external::spec::DEFAULT_MEMORY_MB);
        if memory_mb < external::spec::MIN_MEMORY_MB {
            return Err(ctx.err(
                &format!("{key}.memory_mb"),
                format!("must be at least {} (MiB)", external::spec::MIN_MEMORY_MB),
            ));
        }
        let summary = r.summary.clone().unwrap_or_default();
        check_text(ctx, &format!("{key}.summary"), &summary)?;
        let declared_files = r.files.clone();
        if let Some(f) = &declared_files {
            for (i, p) in f.iter().enumerate() {
                check_text(ctx, &format!("{key}.files.{i}"), p)?;
                if files == Files::MustExist && !dir.join(p).exists() {
                    return Err(ctx.err(
                        &format!("{key}.files.{i}"),
                        format!(
                            "`{}` does not exist (paths are relative to the manifest's folder {})",
                            shorten(p),
                            dir.display()
                        ),
                    ));
                }
            }
        }
        let program = Program {
            name: name.clone(),
            kind: r.kind,
            version,
            files: declared_files
                .clone()
                .unwrap_or_else(|| external::spec::default_files(&command, &dir)),
            command,
            dir: dir.clone(),
            params,
            metrics: r.metrics.clone(),
            timeout_s,
            memory_mb,
            summary,
        };
        let solver = ExternalSolver::new(program);
        if let (Err(e), Files::MustExist) = (solver.code(), files) {
            let at = if declared_files.is_some() {
                "files"
            } else {
                "command"
            };
            return Err(ctx.err(
                &format!("{key}.{at}"),
                format!("cannot hash the program's files: {e}"),
            ));
        }
        out.push(Arc::new(solver));
    }
    Ok(out)
}

/// `registry` with `declared` added (each replacing a declaration of the
/// same name from another manifest: this manifest sees its own).
pub fn registry_with(registry: &Registry, declared: &[Arc<ExternalSolver>]) -> Registry {
    let mut r = registry.clone();
    for s in declared {
        r.add_shared(s.clone());
    }
    r
}

/// The registry every stage needs for a set of loaded manifests: the
/// compiled-in solvers and every program they declare. Two manifests of one
/// run declaring one name differently is refused at load ([`conflicts`]).
pub fn with_declared(registry: &Registry, manifests: &[Manifest]) -> Registry {
    let mut r = registry.clone();
    for m in manifests {
        for s in &m.solvers {
            r.add_shared(s.clone());
        }
    }
    r
}

/// A solver name declared differently by two manifests of one set: tasks
/// name their solver, so within one run a name means one program.
pub fn conflicts(manifests: &[Manifest]) -> Vec<ManifestError> {
    let at =
        |m: &Manifest, s: &ExternalSolver| super::locate(&m.text, &format!("solvers.{}", s.name()));
    let mut seen: BTreeMap<&str, (&Manifest, &Arc<ExternalSolver>)> = BTreeMap::new();
    let mut out = Vec::new();
    for m in manifests {
        for s in &m.solvers {
            match seen.get(s.name()) {
                Some((other, first)) if ***first != **s => out.push(ManifestError {
                    file: m.path.clone(),
                    line: at(m, s).map(|p| p.line),
                    column: at(m, s).map(|p| p.column),
                    key: format!("solvers.{}", s.name()),
                    message: format!(
                        "{} declares a different `{}`; within one run a solver name means one \
                         program: give one of them another name",
                        other.path.display(),
                        s.name()
                    ),
                }),
                Some(_) => {}
                None => {
                    seen.insert(s.name(), (m, s));
                }
            }
        }
    }
    out
}
