//! What a run records of declared programs in the store (the folder of
//! their manifest, their code by hash), and the programs a folder's
//! manifests declare.

use super::folder_of;
use crate::manifest::{discover, load, Manifest, ManifestError};
use external::ExternalSolver;
use serde::Deserialize;
use solvers::{Registry, Solver};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The store fact naming the folder a manifest version was read from, so a
/// stored manifest read back finds its programs' files.
pub fn dir_fact(id: &str, version: i64) -> String {
    format!("manifest.dir.{id}.{version}")
}

/// The store fact holding a program's code record by its hash (what `repro
/// why` compares).
pub fn code_fact(hash: &str) -> String {
    format!("code.{hash}")
}

/// A program's code record as stored: `{"solver", "code": {command, files}}`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, Deserialize)]
pub struct CodeRecord {
    pub solver: String,
    pub code: external::Code,
}

/// The facts a run records for a manifest that declares programs: its folder
/// and the code record of each program whose files could be read.
pub fn facts_of(m: &Manifest) -> Vec<(String, String)> {
    if m.solvers.is_empty() {
        return Vec::new();
    }
    let mut out = vec![(
        dir_fact(&m.id, m.version),
        folder_of(&m.path).to_string_lossy().to_string(),
    )];
    for s in &m.solvers {
        if let (Ok(code), Some(hash)) = (s.code(), s.code_hash()) {
            let rec = CodeRecord {
                solver: s.name().to_string(),
                code: code.clone(),
            };
            out.push((
                code_fact(&hash),
                serde_json::to_string(&rec).expect("a code record serialises"),
            ));
        }
    }
    out
}

/// The programs declared by the manifests in `dir` (`repro solve NAME`,
/// `repro list --solvers`), each with the manifest that declares it.
/// Manifests without a `solvers:` section are not loaded; those that do not
/// load are skipped and their errors returned.
pub fn declared_in(
    dir: &Path,
    registry: &Registry,
) -> (Vec<(PathBuf, Arc<ExternalSolver>)>, Vec<ManifestError>) {
    let (mut out, mut errs) = (Vec::new(), Vec::new());
    let Ok(paths) = discover(&[], dir) else {
        return (out, errs);
    };
    for p in paths {
        let declares = std::fs::read_to_string(&p)
            .is_ok_and(|t| t.lines().any(|l| l.trim_end().starts_with("solvers:")));
        if !declares {
            continue;
        }
        match load(&p, registry) {
            Ok(m) => out.extend(m.solvers.iter().map(|s| (p.clone(), s.clone()))),
            Err(e) => errs.push(e),
        }
    }
    (out, errs)
}
