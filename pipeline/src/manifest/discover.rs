//! Finding manifests (command-line ids, files and folders) and loading a set
//! of them: all validated before anything runs, every error reported at once,
//! ids unique across the set.

use super::{load, locate, Manifest, ManifestError};
use crate::shared::InputError;
use anyhow::Context;
use solvers::Registry;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Resolves command-line targets (ids, files, folders) to manifest paths.
/// No targets = every `*.yaml` in `experiments_dir`.
pub fn discover(targets: &[String], experiments_dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn yaml_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .with_context(|| format!("cannot read the manifest folder {}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
            .collect();
        v.sort();
        Ok(v)
    }
    let no_folder = || {
        InputError(format!(
            "no manifest folder `{}` here; run repro from the project root or pass --experiments DIR",
            experiments_dir.display()
        ))
    };
    if targets.is_empty() {
        if !experiments_dir.is_dir() {
            return Err(no_folder().into());
        }
        return yaml_in(experiments_dir);
    }
    let mut out = Vec::new();
    for t in targets {
        let p = PathBuf::from(t);
        // A target that looks like a path is only ever a path: never
        // `experiments/<path>.yaml`.
        let looks_like_path = t.contains('/')
            || t.contains(std::path::MAIN_SEPARATOR)
            || t.ends_with(".yaml")
            || t.ends_with(".yml");
        if p.is_dir() {
            out.extend(yaml_in(&p)?);
        } else if p.is_file() {
            out.push(p);
        } else if looks_like_path {
            return Err(InputError(format!("no manifest file or folder `{t}`")).into());
        } else {
            let by_id = experiments_dir.join(format!("{t}.yaml"));
            if by_id.is_file() {
                out.push(by_id);
            } else if !experiments_dir.is_dir() {
                return Err(InputError(format!("no manifest `{t}`: {}", no_folder())).into());
            } else {
                let ids: Vec<String> = yaml_in(experiments_dir)?
                    .iter()
                    .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
                    .collect();
                return Err(InputError(unknown_id_message(
                    &format!("no experiment `{t}` in {}", experiments_dir.display()),
                    t,
                    &ids,
                ))
                .into());
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `what`, then "did you mean `x`?" for the closest known id
/// ([`external::spec::nearest`]), then every known id.
pub fn unknown_id_message(what: &str, id: &str, known: &[String]) -> String {
    let mut msg = what.to_string();
    if let Some(best) = external::spec::nearest(id, known.iter().map(String::as_str)) {
        msg.push_str(&format!("; did you mean `{best}`?"));
    }
    if known.is_empty() {
        msg.push_str(" (there are none)");
    } else {
        msg.push_str(&format!("\nknown ids: {}", known.join(", ")));
    }
    msg
}

/// Loads and validates every manifest before anything runs; reports all errors at once.
pub fn load_all(
    paths: &[PathBuf],
    registry: &Registry,
) -> Result<Vec<Manifest>, Vec<ManifestError>> {
    let mut ok = Vec::new();
    let mut errs = Vec::new();
    for p in paths {
        match load(p, registry) {
            Ok(m) => ok.push(m),
            Err(e) => errs.push(e),
        }
    }
    // A solver name means one program within a run.
    errs.extend(super::programs::conflicts(&ok));
    // Ids are unique across manifests, and so are figure and table ids.
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for m in &ok {
        let ids = std::iter::once(("id".to_string(), m.id.clone()))
            .chain(
                m.figures
                    .iter()
                    .enumerate()
                    .map(|(i, f)| (format!("figures.{i}.id"), f.id.clone())),
            )
            .chain(
                m.tables
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (format!("tables.{i}.id"), t.id.clone())),
            );
        for (key, id) in ids {
            let tag = format!("{}:{id}", if key == "id" { "manifest" } else { "output" });
            if let Some(other) = seen.get(&tag) {
                let at = locate(&m.text, &key);
                errs.push(ManifestError {
                    file: m.path.clone(),
                    line: at.map(|p| p.line),
                    column: at.map(|p| p.column),
                    key,
                    message: format!("id `{id}` is already used by {}", other.display()),
                });
            } else {
                seen.insert(tag, m.path.clone());
            }
        }
    }
    if errs.is_empty() {
        Ok(ok)
    } else {
        Err(errs)
    }
}

pub fn load_or_input_error(
    paths: &[PathBuf],
    registry: &Registry,
) -> anyhow::Result<Vec<Manifest>> {
    load_all(paths, registry).map_err(|errs| {
        let n = errs.len();
        let text = errs
            .iter()
            .map(|e| format!("error: {e}"))
            .collect::<Vec<_>>()
            .join("\n");
        InputError(format!("{text}\n{n} manifest error(s); nothing was run")).into()
    })
}
