//! Results as the reading commands see them: the stored manifests (latest
//! version, or `id@version`), and an experiment's results at one fidelity
//! (the stored plan when it is of that fidelity, else a plan made afresh).

use crate::manifest::{self, unknown_id_message, Manifest};
use crate::plan::{self, plan_rows, TaskFidelity};
use crate::shared::InputError;
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use store::{ExperimentRow, Store};

/// Results of an experiment at one fidelity, planned afresh rather than read from
/// the stored plan (which is whatever ran last). Rounds of replications that a
/// precision target asked for are replayed from the store as `run` made them
/// (the decisions depend only on stored results), so a re-render shows every
/// replication `run` used; rounds added by `check --resolve` are not replayed. `None` when the store holds no
/// task of that fidelity for it (analytic tasks, fidelity "any", count only for
/// experiments without simulations).
pub async fn collect_at(
    store: &Store,
    m: &Manifest,
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Option<super::ExperimentResults>> {
    let one = std::slice::from_ref(m);
    let p = plan::plan(one, registry, fidelity)?;
    // Each round reads only the results the previous ones did not.
    let mut records = super::Records::new();
    let mut r = super::collect_plan_with(store, &mut records, m, &plan_rows(&p, m)).await?;
    // Replay the rounds of precision targets from the cache, as `run` made
    // them, so a re-render shows every replication `run` used; stop at the
    // first round whose tasks are not all stored (it never ran).
    let simulation = |s: &manifest::Series| super::precision::simulates(registry, s);
    let mut more = plan::MoreReplications::new();
    loop {
        let next = super::precision::next_round(
            &r,
            &super::error_measures(&r),
            &[],
            super::precision::Resolve::Off,
            simulation,
        );
        if next.is_empty() {
            break;
        }
        let mut grown_more = more.clone();
        grown_more.extend(next);
        let grown = plan::plan_with(one, registry, fidelity, &grown_more)?;
        // Plan tasks are unique by key, as are the stored ones collected.
        let r2 = super::collect_plan_with(store, &mut records, m, &plan_rows(&grown, m)).await?;
        if r2.tasks.len() < grown.tasks.len() {
            break;
        }
        r = r2;
        more = grown_more;
    }
    let simulates = p.tasks.iter().any(|t| t.kind == solvers::Kind::Simulation);
    let at = TaskFidelity::of(solvers::Kind::Simulation, fidelity);
    let shown =
        r.tasks.values().any(|t| fidelity_of(t) == Some(at)) || (!simulates && !r.tasks.is_empty());
    Ok(shown.then_some(r))
}

/// A stored task's fidelity (`None` for text this version does not plan).
fn fidelity_of(t: &store::TaskRecord) -> Option<TaskFidelity> {
    t.fidelity.parse().ok()
}

/// Results of an experiment at one fidelity for the reading commands (`export`,
/// `compare`): the stored plan when the tasks it names are of that fidelity (it
/// then also finds the results of an older manifest version whose task keys a
/// fresh plan would no longer produce), otherwise a fresh plan at that fidelity.
/// An error names the fidelity the store does hold when it is not the one asked.
pub async fn collect_fidelity(
    store: &Store,
    m: &Manifest,
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<super::ExperimentResults> {
    let stored = super::collect(store, m).await?;
    let of = |r: &super::ExperimentResults, f: Fidelity| {
        let at = TaskFidelity::of(solvers::Kind::Simulation, f);
        r.tasks.values().any(|t| fidelity_of(t) == Some(at))
    };
    let simulates = |r: &super::ExperimentResults| {
        r.tasks.values().any(|t| {
            matches!(
                fidelity_of(t),
                Some(TaskFidelity::Quick | TaskFidelity::Full)
            )
        })
    };
    if of(&stored, fidelity) || (!stored.tasks.is_empty() && !simulates(&stored)) {
        return Ok(stored);
    }
    if let Some(r) = collect_at(store, m, registry, fidelity).await? {
        return Ok(r);
    }
    let other = match fidelity {
        Fidelity::Full => Fidelity::Quick,
        Fidelity::Quick => Fidelity::Full,
    };
    let hint = if of(&stored, other) {
        format!(
            "; the store holds its {} results: {}",
            other.as_str(),
            match other {
                Fidelity::Quick => "add --quick",
                Fidelity::Full => "leave out --quick",
            }
        )
    } else {
        String::new()
    };
    Err(InputError(format!(
        "no {}-fidelity results of {} v{} in the store{hint}",
        fidelity.as_str(),
        m.id,
        m.version
    ))
    .into())
}

/// Latest version of every experiment in the store, as parsed manifests.
pub async fn stored_manifests(store: &Store, registry: &Registry) -> anyhow::Result<Vec<Manifest>> {
    stored_manifests_except(store, registry, |_| false).await
}

/// [`stored_manifests`] without the experiments whose id `skip` accepts,
/// which are not parsed at all (a run's index: the experiments the run
/// measured itself are drawn already, and parsing their stored text again,
/// validation included, cost a quick check about 0.2 CPU-s; issue 35).
pub async fn stored_manifests_except(
    store: &Store,
    registry: &Registry,
    skip: impl Fn(&str) -> bool,
) -> anyhow::Result<Vec<Manifest>> {
    let mut latest: BTreeMap<String, ExperimentRow> = BTreeMap::new();
    for e in store.experiments().await? {
        if skip(&e.id) {
            continue;
        }
        match latest.get(&e.id) {
            Some(x) if x.version >= e.version => {}
            _ => {
                latest.insert(e.id.clone(), e);
            }
        }
    }
    let mut out = Vec::new();
    for e in latest.values() {
        let path = stored_path(store, &e.id, e.version).await?;
        match manifest::parse_stored(&path, &e.manifest_text, registry) {
            Ok(m) => out.push(m),
            Err(err) => tracing::warn!(
                "stored manifest {} v{} no longer loads: {err}",
                e.id,
                e.version
            ),
        }
    }
    Ok(out)
}

/// Resolves `id` or `id@version` against the store (no version = latest).
pub async fn stored_manifest(
    store: &Store,
    registry: &Registry,
    spec: &str,
) -> anyhow::Result<Manifest> {
    let (id, version) = match spec.split_once('@') {
        Some((id, v)) => {
            let v: i64 = v.parse().map_err(|_| {
                InputError(format!("`{spec}`: the version after @ must be an integer"))
            })?;
            (id, Some(v))
        }
        None => (spec, None),
    };
    let all = store.experiments().await?;
    let mut known_ids: Vec<String> = all.iter().map(|e| e.id.clone()).collect();
    known_ids.dedup();
    let rows: Vec<ExperimentRow> = all.into_iter().filter(|e| e.id == id).collect();
    let known_here: Vec<String> = rows.iter().map(|e| e.version.to_string()).collect();
    let row = match version {
        Some(v) => rows.into_iter().find(|e| e.version == v),
        None => rows.into_iter().max_by_key(|e| e.version),
    }
    .ok_or_else(|| {
        InputError(if version.is_some() && !known_here.is_empty() {
            format!(
                "no version `{spec}` in the store; stored versions of {id}: {}",
                known_here.join(", ")
            )
        } else {
            unknown_id_message(
                &format!("no experiment `{spec}` in the store; `repro list` shows the stored versions of each id"),
                id,
                &known_ids,
            )
        })
    })?;
    let path = stored_path(store, &row.id, row.version).await?;
    manifest::parse_stored(&path, &row.manifest_text, registry)
        .map_err(|e| anyhow::anyhow!("stored manifest {spec} no longer loads: {e}"))
}

/// Where a stored manifest version was read from, when the run recorded it
/// (manifests that declare programs: their files are found from there), or
/// just its file name.
async fn stored_path(store: &Store, id: &str, version: i64) -> anyhow::Result<PathBuf> {
    let name = format!("{id}.yaml");
    Ok(match store.fact(&manifest::dir_fact(id, version)).await? {
        Some(dir) => Path::new(&dir).join(name),
        None => PathBuf::from(name),
    })
}

/// Task key -> the code version of the first run that recorded the task.
pub async fn code_versions(store: &Store) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for run in store.runs().await? {
        for key in store.run_task_keys(run.id).await? {
            out.entry(key).or_insert_with(|| run.code_version.clone());
        }
    }
    Ok(out)
}
