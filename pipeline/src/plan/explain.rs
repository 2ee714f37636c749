//! Plan and explain: `repro run --dry-run` (what would run and what is cached,
//! per experiment, without running or storing anything) and `repro why` (why a
//! task is not cached: which field of its parameters, seed, fidelity or solver
//! version differs from the nearest stored task).

use crate::manifest::Manifest;
use crate::manifest::{discover, load_or_input_error};
use crate::plan::{self, Task};
use crate::store_open::{open_store, sqlite_file};
use crate::InputError;
use serde_json::Value as Json;
use solvers::Fidelity;
use solvers::{Kind, Registry};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use store::{Store, TaskRecord, TaskStatus};

/// What the planning commands (`run --dry-run`, `why`) read: which manifests,
/// which store, at which fidelity, and whether `--force` reruns cached tasks.
#[derive(Debug, Clone)]
pub struct PlanScope {
    pub targets: Vec<String>,
    pub experiments_dir: PathBuf,
    pub store: String,
    pub fidelity: Fidelity,
    pub force: bool,
}

/// One line of `repro run --dry-run`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DryRunEntry {
    pub id: String,
    pub version: i64,
    pub tasks: usize,
    pub cached: usize,
    pub to_run_simulation: usize,
    pub to_run_analytic: usize,
    /// Sum of the stored wall times of the tasks to run that ran before (failed
    /// or forced), in seconds; unknown tasks count zero.
    pub known_seconds: f64,
}

/// Opens the store if it exists; planning commands never create one.
async fn existing_store(location: &str) -> anyhow::Result<Option<Store>> {
    Ok(match sqlite_file(location) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_store(location).await?),
    })
}

/// `repro run --dry-run`: the plan per experiment, what is cached, what would run.
pub async fn dry_run(opts: &PlanScope, registry: &Registry) -> anyhow::Result<Vec<DryRunEntry>> {
    let paths = discover(&opts.targets, &opts.experiments_dir)?;
    let manifests = load_or_input_error(&paths, registry)?;
    let registry = &crate::manifest::with_declared(registry, &manifests);
    let store = existing_store(&opts.store).await?;
    let mut out = Vec::new();
    for m in &manifests {
        let p = plan::plan(std::slice::from_ref(m), registry, opts.fidelity)
            .map_err(|e| InputError(format!("error: {e}")))?;
        let keys: Vec<String> = p.tasks.iter().map(|t| t.key.clone()).collect();
        let (cached, walls) = match &store {
            Some(s) if !opts.force => (s.cached_keys(&keys).await?, s.wall_times(&keys).await?),
            Some(s) => (HashSet::new(), s.wall_times(&keys).await?),
            None => Default::default(),
        };
        let todo: Vec<&Task> = p
            .tasks
            .iter()
            .filter(|t| !cached.contains(&t.key))
            .collect();
        out.push(DryRunEntry {
            id: m.id.clone(),
            version: m.version,
            tasks: p.tasks.len(),
            cached: p.tasks.len() - todo.len(),
            to_run_simulation: todo.iter().filter(|t| t.kind == Kind::Simulation).count(),
            to_run_analytic: todo.iter().filter(|t| t.kind == Kind::Analytic).count(),
            known_seconds: todo.iter().filter_map(|t| walls.get(&t.key)).sum::<f64>() / 1e3,
        });
    }
    if let Some(s) = store {
        s.close().await;
    }
    Ok(out)
}

/// What changed in the files of a declared program: the stored task's code is
/// found among the code records runs keep in the store (the one whose hash,
/// put into the stored task's key, gives that key).
mod code_changes {
    use super::FieldDiff;
    use crate::manifest::{code_fact, CodeRecord, Manifest};
    use crate::plan::{task_key, Task, TaskFidelity};
    use solvers::Solver;
    use std::collections::BTreeMap;
    use store::{Store, TaskRecord};

    #[derive(Default)]
    pub(super) struct Records {
        /// Planned programs: solver name -> (hash, code).
        planned: BTreeMap<String, (String, external::Code)>,
        /// Stored code records: (hash, record).
        stored: Vec<(String, CodeRecord)>,
    }

    impl Records {
        pub(super) async fn read(store: &Store, m: &Manifest) -> anyhow::Result<Records> {
            let mut r = Records::default();
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

        /// How the code of `stored` differs from `planned`'s: a field per
        /// changed file (or the command). With no record of the stored
        /// task's code, one `code` field, but only when nothing else
        /// (`alone`) explains why the keys differ.
        pub(super) fn diff(
            &self,
            planned: &Task,
            stored: &TaskRecord,
            alone: bool,
        ) -> Vec<FieldDiff> {
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
                Some((_, rec)) => code
                    .diff(&rec.code)
                    .into_iter()
                    .map(|(field, stored, planned)| FieldDiff {
                        field,
                        stored,
                        planned,
                    })
                    .collect(),
                None if alone => vec![FieldDiff {
                    field: "code".into(),
                    stored: "other files (not recorded)".into(),
                    planned: format!("sha256 {}", &hash[..hash.len().min(12)]),
                }],
                None => Vec::new(),
            }
        }
    }
}

/// One field in which a planned task differs from a stored one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FieldDiff {
    /// `solver`, `solver version`, `seed`, `fidelity`, `params.NAME`, or for a
    /// declared program `file PATH`, `command` or `code`.
    pub field: String,
    pub stored: String,
    pub planned: String,
}

/// Whether a planned task is stored (`repro why`; JSON and text use these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum WhyState {
    #[serde(rename = "cached")]
    Cached,
    /// Stored but failed: it reruns.
    #[serde(rename = "failed")]
    Failed,
    /// Stored, but `--force` runs it again.
    #[serde(rename = "forced")]
    Forced,
    #[serde(rename = "not stored")]
    NotStored,
}

impl std::fmt::Display for WhyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WhyState::Cached => "cached",
            WhyState::Failed => "failed",
            WhyState::Forced => "forced",
            WhyState::NotStored => "not stored",
        })
    }
}

/// `repro why` for one planned task.
#[derive(Debug, Clone, serde::Serialize)]
pub struct WhyEntry {
    pub series: String,
    pub point: String,
    pub replication: u32,
    pub key: String,
    pub state: WhyState,
    /// The stored failure, for "failed".
    pub error: Option<String>,
    /// Key of the nearest stored task of the same solver, if any.
    pub nearest: Option<String>,
    /// How the nearest stored task differs (empty when there is none).
    pub diffs: Vec<FieldDiff>,
}

fn show(v: Option<&Json>) -> String {
    v.map_or("(absent)".to_string(), |v| v.to_string())
}

/// Fields in which `stored` differs from `planned`.
pub fn diff(planned: &Task, stored: &TaskRecord) -> Vec<FieldDiff> {
    let mut d = Vec::new();
    let mut push = |field: &str, stored: String, planned: String| {
        if stored != planned {
            d.push(FieldDiff {
                field: field.to_string(),
                stored,
                planned,
            });
        }
    };
    push("solver", stored.solver.clone(), planned.solver.to_string());
    push(
        "solver version",
        stored.solver_version.to_string(),
        planned.solver_version.to_string(),
    );
    push("seed", stored.seed.to_string(), planned.seed.to_string());
    push(
        "fidelity",
        stored.fidelity.clone(),
        planned.fidelity.to_string(),
    );
    let sp: BTreeMap<String, Json> = serde_json::from_str(&stored.params).unwrap_or_default();
    let pp: BTreeMap<String, Json> = serde_json::from_str(&planned.params).unwrap_or_default();
    let mut names: Vec<&String> = sp.keys().chain(pp.keys()).collect();
    names.sort();
    names.dedup();
    for n in names {
        push(&format!("params.{n}"), show(sp.get(n)), show(pp.get(n)));
    }
    d
}

/// Does `point` (as given on the command line: an index, or `k=v[,k=v]`) select `p`?
fn point_matches(spec: &str, index: usize, values: &BTreeMap<String, Json>) -> bool {
    if let Ok(i) = spec.parse::<usize>() {
        return i == index;
    }
    spec.split(',').all(|kv| match kv.split_once('=') {
        Some((k, v)) => values.get(k.trim()).is_some_and(|x| {
            let v = v.trim();
            x.as_bool().is_some_and(|b| v.parse::<bool>() == Ok(b))
                || x.as_str() == Some(v)
                || (x.as_f64().is_some() && x.as_f64() == v.parse::<f64>().ok())
        }),
        None => false,
    })
}

/// `repro why EXPERIMENT [SERIES [POINT]]`.
pub async fn why(
    opts: &PlanScope,
    series: Option<&str>,
    point: Option<&str>,
    registry: &Registry,
) -> anyhow::Result<(Manifest, Vec<WhyEntry>)> {
    if opts.targets.len() != 1 {
        return Err(InputError("`repro why` takes one experiment id".into()).into());
    }
    let paths = discover(&opts.targets, &opts.experiments_dir)?;
    let m = load_or_input_error(&paths, registry)?
        .pop()
        .expect("one manifest");
    let registry = &crate::manifest::registry_with(registry, &m.solvers);
    if let Some(s) = series {
        if m.series(s).is_none() {
            let names: Vec<&str> = m.series.iter().map(|x| x.name.as_str()).collect();
            return Err(InputError(format!(
                "{} has no series `{s}` (it has: {})",
                m.id,
                names.join(", ")
            ))
            .into());
        }
    }
    let store = existing_store(&opts.store).await?;
    let p = plan::plan(std::slice::from_ref(&m), registry, opts.fidelity)
        .map_err(|e| InputError(format!("error: {e}")))?;
    let uses: Vec<&plan::Use> = p
        .uses
        .iter()
        .filter(|u| series.is_none_or(|s| *u.series == *s))
        .filter(|u| {
            point.is_none_or(|spec| {
                m.points
                    .get(u.point_index)
                    .is_some_and(|pt| point_matches(spec, u.point_index, &pt.values))
            })
        })
        .collect();
    if uses.is_empty() {
        return Err(InputError(format!(
            "no task of {} matches{}{} (points are numbered from 0 or written as axis=value,...)",
            m.id,
            series.map_or(String::new(), |s| format!(" series `{s}`")),
            point.map_or(String::new(), |p| format!(" point `{p}`"))
        ))
        .into());
    }
    // Stored tasks: those these keys name, and every task any stored plan uses
    // (all experiments, all versions): the candidates for "nearest".
    let mut stored: BTreeMap<String, TaskRecord> = BTreeMap::new();
    let mut code = code_changes::Records::default();
    if let Some(s) = &store {
        code = code_changes::Records::read(s, &m).await?;
        let mut keys: Vec<String> = p.tasks.iter().map(|t| t.key.clone()).collect();
        for e in s.experiments().await? {
            keys.extend(
                s.plan(&e.id, e.version)
                    .await?
                    .into_iter()
                    .map(|r| r.task_key),
            );
        }
        keys.sort();
        keys.dedup();
        for t in s.tasks(&keys).await? {
            stored.insert(t.key.clone(), t);
        }
    }
    let mut out = Vec::new();
    for u in uses {
        let task = &p.tasks[u.task];
        let own = stored.get(&task.key);
        let state = match own.map(|t| t.status) {
            Some(TaskStatus::Failed) => WhyState::Failed,
            Some(_) if !opts.force => WhyState::Cached,
            Some(_) => WhyState::Forced,
            None => WhyState::NotStored,
        };
        let (nearest, diffs) = if own.is_some() {
            (None, Vec::new())
        } else {
            // Nearest: same solver, fewest differing fields; ties to the lowest key.
            stored
                .values()
                .filter(|t| *t.solver == *task.solver)
                .map(|t| {
                    let mut d = diff(task, t);
                    d.extend(code.diff(task, t, d.is_empty()));
                    (d, t)
                })
                .min_by(|a, b| a.0.len().cmp(&b.0.len()).then(a.1.key.cmp(&b.1.key)))
                .map_or((None, Vec::new()), |(d, t)| (Some(t.key.clone()), d))
        };
        out.push(WhyEntry {
            series: u.series.to_string(),
            point: m
                .points
                .get(u.point_index)
                .map(|p| p.json())
                .unwrap_or_default(),
            replication: u.replication,
            key: task.key.clone(),
            state,
            error: own
                .and_then(|t| t.error.clone())
                .filter(|_| state == WhyState::Failed),
            nearest,
            diffs,
        });
    }
    if let Some(s) = store {
        s.close().await;
    }
    Ok((m, out))
}
