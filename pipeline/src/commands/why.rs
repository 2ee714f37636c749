//! `repro why EXPERIMENT [SERIES [POINT]]`: why tasks are not cached. For
//! each planned task that the store does not hold, the fields (parameters,
//! seed, fidelity, solver version, or a declared program's files) in which
//! the nearest stored task of its solver differs.

use super::{existing_store, fidelity_of, runtime};
use crate::{OutputFormat, WhyArgs};
use pipeline::manifest::{discover, load_or_input_error, Manifest};
use pipeline::plan::code_changes::CodeRecords;
use pipeline::plan::{self, Task};
use pipeline::shared::{exit, InputError};
use serde_json::Value as Json;
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::process::ExitCode;
use store::{TaskRecord, TaskStatus};

/// `repro why EXPERIMENT [SERIES [POINT]]`.
pub(crate) fn why(args: WhyArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let fidelity = fidelity_of(args.quick);
    let (m, entries) = runtime()?.block_on(explain(&args, fidelity, registry))?;
    if args.format == OutputFormat::Json {
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(ExitCode::from(exit::OK));
    }
    let cached = entries
        .iter()
        .filter(|e| e.state == WhyState::Cached)
        .count();
    println!(
        "{} v{} at {} fidelity: {cached} of {} tasks cached",
        m.id,
        m.version,
        fidelity.as_str(),
        entries.len()
    );
    for e in entries.iter().filter(|e| e.state != WhyState::Cached) {
        let point = e.point.trim_start_matches('{').trim_end_matches('}');
        println!(
            "\n{} at {point} (replication {}), task {}: {}",
            e.series, e.replication, e.key, e.state
        );
        if let Some(err) = &e.error {
            println!("  it failed when it last ran: {err}");
        }
        match &e.nearest {
            None if e.state == WhyState::NotStored => {
                println!("  no stored task of this solver to compare with: it has never run here")
            }
            None => {}
            Some(k) => {
                println!("  nearest stored task {k} differs in:");
                for d in &e.diffs {
                    println!("    {:<18} stored {}, now {}", d.field, d.stored, d.planned);
                }
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}

/// One field in which a planned task differs from a stored one.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
struct FieldDiff {
    /// `solver`, `solver version`, `seed`, `fidelity`, `params.NAME`, or for a
    /// declared program `file PATH`, `command` or `code`.
    field: String,
    stored: String,
    planned: String,
}

/// Whether a planned task is stored (`repro why`; JSON and text use these names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
enum WhyState {
    #[serde(rename = "cached")]
    Cached,
    /// Stored but failed: it reruns.
    #[serde(rename = "failed")]
    Failed,
    #[serde(rename = "not stored")]
    NotStored,
}

impl std::fmt::Display for WhyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            WhyState::Cached => "cached",
            WhyState::Failed => "failed",
            WhyState::NotStored => "not stored",
        })
    }
}

/// `repro why` for one planned task.
#[derive(Debug, Clone, serde::Serialize)]
struct WhyEntry {
    series: String,
    point: String,
    replication: u32,
    key: String,
    state: WhyState,
    /// The stored failure, for "failed".
    error: Option<String>,
    /// Key of the nearest stored task of the same solver, if any.
    nearest: Option<String>,
    /// How the nearest stored task differs (empty when there is none).
    diffs: Vec<FieldDiff>,
}

fn show(v: Option<&Json>) -> String {
    v.map_or("(absent)".to_string(), |v| v.to_string())
}

/// Fields in which `stored` differs from `planned`.
fn diff(planned: &Task, stored: &TaskRecord) -> Vec<FieldDiff> {
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

/// The planned tasks of one experiment (of one series and point, if given),
/// each with whether it is stored and, if not, how the nearest stored task
/// of its solver differs.
async fn explain(
    args: &WhyArgs,
    fidelity: Fidelity,
    registry: &Registry,
) -> anyhow::Result<(Manifest, Vec<WhyEntry>)> {
    let (series, point) = (args.series.as_deref(), args.point.as_deref());
    let targets = [args.experiment.clone()];
    let paths = discover(&targets, &args.experiments.experiments)?;
    let m = load_or_input_error(&paths, registry)?
        .pop()
        .expect("one manifest");
    let registry = &pipeline::manifest::registry_with(registry, &m.solvers);
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
    let store = existing_store(&args.store.store).await?;
    let p = plan::plan(std::slice::from_ref(&m), registry, fidelity)?;
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
    let mut code = CodeRecords::default();
    if let Some(s) = &store {
        code = CodeRecords::read(s, &m).await?;
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
            Some(_) => WhyState::Cached,
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
                    let alone = d.is_empty();
                    d.extend(code.diff(task, t, alone).into_iter().map(
                        |(field, stored, planned)| FieldDiff {
                            field,
                            stored,
                            planned,
                        },
                    ));
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
