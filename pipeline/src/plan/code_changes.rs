//! What changed in the files of a declared program (`repro why`): a stored
//! task's code is found among the code records each run keeps in the store
//! (the one whose hash, put into the stored task's key, gives that key) and
//! compared with the files as they are now.

use super::{task_key, Task, TaskFidelity};
use crate::manifest::{code_fact, CodeRecord, Manifest};
use solvers::Solver;
use std::collections::BTreeMap;
use store::{Store, TaskRecord};

/// The code of a manifest's declared programs now, and every code record in
/// the store.
#[derive(Debug, Default)]
pub struct CodeRecords {
    /// Planned programs: solver name -> (hash, code).
    planned: BTreeMap<String, (String, external::Code)>,
    /// Stored code records: (hash, record).
    stored: Vec<(String, CodeRecord)>,
}

impl CodeRecords {
    pub async fn read(store: &Store, m: &Manifest) -> anyhow::Result<CodeRecords> {
        let mut r = CodeRecords::default();
        for s in &m.solvers {
            if let (Ok(c), Some(h)) = (s.code(), s.code_hash()) {
                r.planned.insert(s.name().to_string(), (h, c.clone()));
            }
        }
        if r.planned.is_empty() {
            return Ok(r);
        }
        let prefix = code_fact("");
        for (k, v) in store.facts(&prefix).await? {
            if let Ok(rec) = serde_json::from_str::<CodeRecord>(&v) {
                r.stored.push((k[prefix.len()..].to_string(), rec));
            }
        }
        Ok(r)
    }

    /// How the code `stored` ran with differs from `planned`'s, one
    /// `(field, stored, planned)` per changed file (`file PATH`) or for the
    /// command. With no record of the stored task's code, one `code` field,
    /// but only when nothing else (`alone`) explains why the keys differ.
    pub fn diff(
        &self,
        planned: &Task,
        stored: &TaskRecord,
        alone: bool,
    ) -> Vec<(String, String, String)> {
        let Some((hash, code)) = self.planned.get(&*planned.solver) else {
            return Vec::new();
        };
        let Ok(fid) = stored.fidelity.parse::<TaskFidelity>() else {
            return Vec::new();
        };
        let found = self.stored.iter().find(|(h, rec)| {
            rec.solver == stored.solver
                && task_key(
                    &stored.solver,
                    stored.solver_version as u32,
                    Some(h),
                    &stored.params,
                    stored.seed as u64,
                    fid,
                ) == stored.key
        });
        match found {
            Some((h, _)) if h == hash => Vec::new(),
            Some((_, rec)) => code.diff(&rec.code),
            None if alone => vec![(
                "code".into(),
                "other files (not recorded)".into(),
                format!("sha256 {}", &hash[..hash.len().min(12)]),
            )],
            None => Vec::new(),
        }
    }
}
