//! The repro pipeline: manifests in, figures out.
//!
//! load + validate every manifest -> plan tasks -> skip cached -> execute ->
//! measure (error measures) -> render (figures, tables, index.html).
//!
//! Architecture invariant: the pipeline is the only crate that knows both the
//! solvers and the store; solvers never see the store, the store never sees a
//! solver, and reports only renders what the pipeline hands it.

pub mod exec;
pub mod explain;
pub mod junit;
pub mod manifest;
pub mod plan;
pub mod render;
pub mod results;
pub mod slurm;
pub mod timeseries;
pub mod worker;

use anyhow::{bail, Context};
use manifest::{discover, load_or_input_error, unknown_id_message, Manifest};
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use store::{ErrorMeasureRow, ExperimentRow, PlanRow, Store};

/// Package version and the git commit the binary was built from.
pub const CODE_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("REPRO_GIT_REV"));

/// Exit codes of the `repro` command.
pub mod exit {
    pub const OK: u8 = 0;
    /// `check`: some compared point failed its tolerance or was inconclusive.
    pub const CHECK_FAILED: u8 = 1;
    /// Bad input: manifests, CLI flags, solver parameters (clap also exits 2).
    pub const BAD_INPUT: u8 = 2;
    /// Some tasks failed (their errors and rerun commands are printed).
    pub const TASKS_FAILED: u8 = 3;
    /// An internal error: the store, the file system, a bug.
    pub const INTERNAL: u8 = 4;
    /// Interrupted by Ctrl-C (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: u8 = 130;
}

/// An error the user caused (exit code 2), as opposed to an internal failure.
#[derive(Debug)]
pub struct InputError(pub String);

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for InputError {}

#[derive(Debug, Clone)]
pub struct RunOptions {
    pub targets: Vec<String>,
    pub experiments_dir: PathBuf,
    pub results_dir: PathBuf,
    pub store: String,
    pub jobs: usize,
    pub fidelity: Fidelity,
    pub force: bool,
    pub progress: bool,
    pub args: String,
    /// Where the tasks execute: here, or through the store's queue.
    pub dispatch: Dispatch,
}

/// Where the tasks of a run execute.
#[derive(Debug, Clone, Default)]
pub enum Dispatch {
    /// In this process, `jobs` at a time (`--executor local`).
    #[default]
    Local,
    /// Through the store's task queue, by workers that `launch` starts
    /// (`--executor queue|slurm`); `detach` returns once they are started.
    Queue {
        launch: worker::Launch,
        detach: bool,
    },
}

#[derive(Debug)]
pub struct RunReport {
    pub exec: exec::ExecSummary,
    pub error_measures: Vec<ErrorMeasureRow>,
    pub manifests: Vec<Manifest>,
    /// `--detach`: the Slurm job that runs the tasks; nothing was measured or rendered.
    pub detached: Option<String>,
}

/// The SQLite file behind a store location, if it names one.
fn sqlite_file(location: &str) -> Option<PathBuf> {
    if location.contains("://") && !location.starts_with("sqlite://") {
        return None;
    }
    let path = location.trim_start_matches("sqlite://");
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && !path.starts_with(':')).then(|| PathBuf::from(path))
}

/// Opens an existing store for reading commands: never creates one, and opens
/// it read-only, so a store the user may not write (a read-only share, a
/// results database downloaded with a paper) can be read.
pub async fn open_existing_store(location: &str) -> anyhow::Result<Store> {
    if let Some(f) = sqlite_file(location) {
        if !f.is_file() {
            return Err(InputError(format!(
                "no result store at {}: run `repro run` first (or pass --store)",
                f.display()
            ))
            .into());
        }
    }
    store_error(Store::open_read_only(location).await)
}

pub async fn open_store(location: &str) -> anyhow::Result<Store> {
    store_error(Store::open(location).await)
}

fn store_error(r: store::Result<Store>) -> anyhow::Result<Store> {
    r.map_err(|e| match e {
        store::StoreError::TooNew { .. } | store::StoreError::Open { .. } => {
            InputError(e.to_string()).into()
        }
        other => anyhow::Error::new(other),
    })
}

fn host() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Where the pages of a fidelity go: full results in `results/`, quick (CI)
/// results in `results/quick/`, so a quick run never overwrites the paper figures.
pub fn fidelity_dir(results_dir: &Path, fidelity: Fidelity) -> PathBuf {
    match fidelity {
        Fidelity::Full => results_dir.to_path_buf(),
        Fidelity::Quick => results_dir.join("quick"),
    }
}

/// The plan rows of one experiment, as the store keeps them.
fn plan_rows(plan: &plan::Plan, m: &Manifest) -> Vec<PlanRow> {
    plan_rows_iter(plan, m).collect()
}

/// The plan rows of one manifest, made one at a time (see
/// [`Store::replace_plan_rows`]).
fn plan_rows_iter<'a>(
    plan: &'a plan::Plan,
    m: &'a Manifest,
) -> impl Iterator<Item = PlanRow> + Send + 'a {
    plan.uses
        .iter()
        .filter(|u| *u.experiment == *m.id)
        .map(|u| PlanRow {
            experiment: u.experiment.to_string(),
            version: u.version,
            point: m
                .points
                .get(u.point_index)
                .map(|p| p.json())
                .unwrap_or_default(),
            point_index: u.point_index as i64,
            series: u.series.to_string(),
            replication: u.replication as i64,
            task_key: plan.task_key(u).to_string(),
        })
}

/// Results of an experiment at one fidelity, planned afresh rather than read from
/// the stored plan (which is whatever ran last). `None` when the store holds no
/// task of that fidelity for it (analytic tasks, fidelity "any", count only for
/// experiments without simulations).
async fn collect_at(
    store: &Store,
    m: &Manifest,
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Option<results::ExperimentResults>> {
    let p = plan::plan(std::slice::from_ref(m), registry, fidelity)
        .map_err(|e| InputError(format!("error: {e}")))?;
    let r = results::collect_plan(store, m, &plan_rows(&p, m)).await?;
    let simulates = p.tasks.iter().any(|t| t.kind == solvers::Kind::Simulation);
    let shown = r.tasks.values().any(|t| t.fidelity == fidelity.as_str())
        || (!simulates && !r.tasks.is_empty());
    Ok(shown.then_some(r))
}

/// Results of an experiment at one fidelity for the reading commands (`export`,
/// `compare`): the stored plan when the tasks it names are of that fidelity (it
/// then also finds the results of an older manifest version whose task keys a
/// fresh plan would no longer produce), otherwise a fresh plan at that fidelity.
/// An error names the fidelity the store does hold when it is not the one asked.
async fn collect_fidelity(
    store: &Store,
    m: &Manifest,
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<results::ExperimentResults> {
    let stored = results::collect(store, m).await?;
    let of = |r: &results::ExperimentResults, f: &str| r.tasks.values().any(|t| t.fidelity == f);
    let simulates = |r: &results::ExperimentResults| {
        r.tasks
            .values()
            .any(|t| t.fidelity == "quick" || t.fidelity == "full")
    };
    if of(&stored, fidelity.as_str()) || (!stored.tasks.is_empty() && !simulates(&stored)) {
        return Ok(stored);
    }
    if let Some(r) = collect_at(store, m, registry, fidelity).await? {
        return Ok(r);
    }
    let other = match fidelity {
        Fidelity::Full => Fidelity::Quick,
        Fidelity::Quick => Fidelity::Full,
    };
    let hint = if of(&stored, other.as_str()) {
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

/// `repro run` (and the first half of `repro check`).
pub async fn run(opts: &RunOptions, registry: &Registry) -> anyhow::Result<RunReport> {
    let paths = discover(&opts.targets, &opts.experiments_dir)?;
    if paths.is_empty() {
        return Err(InputError(format!(
            "no manifests found in {}",
            opts.experiments_dir.display()
        ))
        .into());
    }
    let manifests = load_or_input_error(&paths, registry)?;
    // Planned before the store is opened: a run over the task limit changes nothing.
    let plan = plan::plan(&manifests, registry, opts.fidelity)
        .map_err(|e| InputError(format!("error: {e}; nothing was run")))?;
    let store = open_store(&opts.store).await?;
    let run_id = store.begin_run(CODE_VERSION, &host(), &opts.args).await?;
    for m in &manifests {
        store
            .upsert_experiment(&ExperimentRow {
                id: m.id.clone(),
                version: m.version,
                title: m.title.clone(),
                manifest_hash: m.hash.clone(),
                manifest_text: m.text.clone(),
            })
            .await?;
    }
    for m in &manifests {
        store
            .replace_plan_rows(&m.id, m.version, plan_rows_iter(&plan, m))
            .await?;
    }
    tracing::info!(
        tasks = plan.tasks.len(),
        manifests = manifests.len(),
        "planned"
    );
    let exec_opts = exec::ExecOptions {
        jobs: opts.jobs,
        force: opts.force,
        fidelity: opts.fidelity,
        progress: opts.progress,
    };
    let summary = match &opts.dispatch {
        Dispatch::Local => exec::execute(&plan, registry, &store, run_id, &exec_opts).await?,
        Dispatch::Queue { launch, detach } => {
            let q = worker::QueuedRun {
                force: opts.force,
                progress: opts.progress,
                launch: launch.clone(),
                detach: *detach,
            };
            let (summary, job) =
                worker::execute_queued(&plan, registry, &store, run_id, &q).await?;
            if *detach {
                store.finish_run(run_id, "detached").await?;
                store.close().await;
                return Ok(RunReport {
                    exec: summary,
                    error_measures: Vec::new(),
                    manifests,
                    detached: Some(job.unwrap_or_default()),
                });
            }
            summary
        }
    };
    let status = if summary.cancelled {
        "interrupted"
    } else if summary.failed.is_empty() {
        "done"
    } else {
        "failed-tasks"
    };
    // Measure and render what is there, also after an interruption. A failure
    // here (disk full, unwritable results folder) loses no task result: say so,
    // and how to render again without solving anything.
    let out_dir = fidelity_dir(&opts.results_dir, opts.fidelity);
    let mut all_em = Vec::new();
    let measured: anyhow::Result<()> = async {
        let mut rendered = BTreeMap::new();
        for m in &manifests {
            let r = results::collect_plan(&store, m, &plan_rows(&plan, m)).await?;
            let ems = results::error_measures(&r);
            store.replace_error_measures(&m.id, m.version, &ems).await?;
            let entry = render::render_experiment(&r, &ems, registry, &out_dir, opts.fidelity)?;
            rendered.insert(m.id.clone(), entry);
            all_em.extend(ems);
        }
        write_full_index(&store, registry, &opts.results_dir, opts.fidelity, rendered).await
    }
    .await;
    measured.with_context(|| {
        format!(
            "rendering failed after the tasks ran; their results are stored in {}: once the cause below is fixed, render them again with `repro report --store {} --results {}`",
            opts.store,
            opts.store,
            opts.results_dir.display()
        )
    })?;
    store.finish_run(run_id, status).await?;
    store.close().await;
    Ok(RunReport {
        exec: summary,
        error_measures: all_em,
        manifests,
        detached: None,
    })
}

/// Latest version of every experiment in the store, as parsed manifests.
async fn stored_manifests(store: &Store, registry: &Registry) -> anyhow::Result<Vec<Manifest>> {
    let mut latest: BTreeMap<String, ExperimentRow> = BTreeMap::new();
    for e in store.experiments().await? {
        match latest.get(&e.id) {
            Some(x) if x.version >= e.version => {}
            _ => {
                latest.insert(e.id.clone(), e);
            }
        }
    }
    let mut out = Vec::new();
    for e in latest.values() {
        let path = PathBuf::from(format!("{}.yaml", e.id));
        match manifest::parse(&path, &e.manifest_text, registry) {
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

/// The index of a fidelity lists every experiment in the store with results at
/// that fidelity; those not just rendered are summarised from the store without
/// redrawing their figures.
async fn write_full_index(
    store: &Store,
    registry: &Registry,
    results_dir: &Path,
    fidelity: Fidelity,
    mut rendered: BTreeMap<String, reports::IndexExperiment>,
) -> anyhow::Result<()> {
    let out_dir = fidelity_dir(results_dir, fidelity);
    for m in stored_manifests(store, registry).await? {
        if rendered.contains_key(&m.id) {
            continue;
        }
        let Some(r) = collect_at(store, &m, registry, fidelity).await? else {
            continue;
        };
        let ems = results::error_measures(&r);
        let all_present = m.figures.iter().all(|f| {
            out_dir
                .join("figures")
                .join(format!("{}.png", f.id))
                .is_file()
        });
        let entry = if all_present {
            render::index_entry_without_files(&r, &ems, registry, &out_dir, fidelity)
        } else {
            render::render_experiment(&r, &ems, registry, &out_dir, fidelity)?
        };
        rendered.insert(m.id.clone(), entry);
    }
    render::write_index(
        rendered.into_values().collect(),
        results_dir,
        fidelity,
        false,
    )
}

/// `repro report`: re-render everything in the store without solving anything.
pub async fn report(
    store_loc: &str,
    results_dir: &Path,
    registry: &Registry,
) -> anyhow::Result<usize> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored_manifests(&store, registry).await?;
    if manifests.is_empty() {
        bail!(InputError(format!(
            "the store {store_loc} holds no experiments yet; run `repro run` first"
        )));
    }
    // Each fidelity into its own folder (see `fidelity_dir`).
    let mut indexes = Vec::new();
    for fidelity in [Fidelity::Full, Fidelity::Quick] {
        let out_dir = fidelity_dir(results_dir, fidelity);
        let mut rendered = BTreeMap::new();
        for m in &manifests {
            let Some(r) = collect_at(&store, m, registry, fidelity).await? else {
                continue;
            };
            let ems = results::error_measures(&r);
            rendered.insert(
                m.id.clone(),
                render::render_experiment(&r, &ems, registry, &out_dir, fidelity)?,
            );
        }
        if !rendered.is_empty() {
            indexes.push((fidelity, rendered));
        }
    }
    let pages = indexes.iter().map(|(_, r)| r.len()).sum();
    let both = indexes.len() == 2;
    for (fidelity, rendered) in indexes {
        render::write_index(
            rendered.into_values().collect(),
            results_dir,
            fidelity,
            both,
        )?;
    }
    store.close().await;
    Ok(pages)
}

/// `repro export --format csv`: tidy rows of the latest version of each (selected) experiment.
pub async fn export(
    store_loc: &str,
    ids: &[String],
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Vec<reports::TidyRow>> {
    let store = open_existing_store(store_loc).await?;
    let manifests = stored_manifests(&store, registry).await?;
    for id in ids {
        if !manifests.iter().any(|m| &m.id == id) {
            let known: Vec<String> = manifests.iter().map(|m| m.id.clone()).collect();
            bail!(InputError(unknown_id_message(
                &format!("no experiment `{id}` in the store {store_loc}"),
                id,
                &known
            )));
        }
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for m in manifests
        .iter()
        .filter(|m| ids.is_empty() || ids.contains(&m.id))
    {
        let r = match collect_fidelity(&store, m, registry, fidelity).await {
            Ok(r) => r,
            // Exporting everything skips what was never run at this fidelity.
            Err(e) if ids.is_empty() && e.is::<InputError>() => {
                skipped.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        for ((pi, series, metric), a) in &r.values {
            let s = m.series(series).expect("series of the manifest");
            rows.push(reports::TidyRow {
                experiment: m.id.clone(),
                version: m.version,
                series: series.clone(),
                solver: s.solver.clone(),
                point: m.points.get(*pi).map(|p| p.json()).unwrap_or_default(),
                metric: metric.clone(),
                value: a.value,
                half_width: a.half_width,
                n: a.n,
            });
        }
    }
    if rows.is_empty() && !skipped.is_empty() {
        return Err(InputError(format!(
            "nothing to export at {} fidelity: {}",
            fidelity.as_str(),
            skipped.join("; ")
        ))
        .into());
    }
    for why in &skipped {
        tracing::info!("skipped: {why}");
    }
    // Sweep order, then series and metric, so exports diff cleanly.
    rows.sort_by(|a, b| {
        (
            a.experiment.as_str(),
            point_order(&manifests, a),
            a.series.as_str(),
            a.metric.as_str(),
        )
            .cmp(&(
                b.experiment.as_str(),
                point_order(&manifests, b),
                b.series.as_str(),
                b.metric.as_str(),
            ))
    });
    store.close().await;
    Ok(rows)
}

fn point_order(ms: &[Manifest], r: &reports::TidyRow) -> usize {
    ms.iter()
        .find(|m| m.id == r.experiment)
        .and_then(|m| m.points.iter().position(|p| p.json() == r.point))
        .unwrap_or(usize::MAX)
}

/// One line of `repro list`.
#[derive(Debug, Clone)]
pub struct ListEntry {
    pub id: String,
    pub version: i64,
    pub title: String,
    pub points: usize,
    pub tasks_full: usize,
    pub cached_full: usize,
    pub tasks_quick: usize,
    pub cached_quick: usize,
    /// Versions of this id in the store (what `repro compare ID@V` accepts).
    pub stored_versions: Vec<i64>,
}

pub async fn list(
    experiments_dir: &Path,
    targets: &[String],
    store_loc: &str,
    registry: &Registry,
) -> anyhow::Result<Vec<ListEntry>> {
    let paths = discover(targets, experiments_dir)?;
    let manifests = load_or_input_error(&paths, registry)?;
    // Listing never creates a store: with none yet, nothing is cached.
    let store = match sqlite_file(store_loc) {
        Some(f) if !f.is_file() => None,
        _ => Some(open_existing_store(store_loc).await?),
    };
    let stored = match &store {
        Some(s) => s.experiments().await?,
        None => Vec::new(),
    };
    let mut out = Vec::new();
    for m in &manifests {
        let mut stored_versions: Vec<i64> = stored
            .iter()
            .filter(|e| e.id == m.id)
            .map(|e| e.version)
            .collect();
        stored_versions.sort_unstable();
        stored_versions.dedup();
        // One plan at a time, keeping only its keys: a manifest at the task
        // limit is listed within bounded memory.
        let keys = |fidelity| -> anyhow::Result<Vec<String>> {
            let p = plan::plan(std::slice::from_ref(m), registry, fidelity)
                .map_err(|e| InputError(format!("error: {e}")))?;
            Ok(p.tasks.into_iter().map(|t| t.key).collect())
        };
        let kf = keys(Fidelity::Full)?;
        let cached_full = cached_count(store.as_ref(), &kf).await?;
        let tasks_full = kf.len();
        drop(kf);
        // Without simulations the quick plan is the full one (analytic tasks are
        // shared between profiles): no need to plan it again.
        let has_sim = m.series.iter().any(|s| {
            registry
                .get(&s.solver)
                .is_some_and(|x| x.kind() == solvers::Kind::Simulation)
        });
        let kq = if has_sim {
            keys(Fidelity::Quick)?
        } else {
            Vec::new()
        };
        let (tasks_quick, cached_quick) = if has_sim {
            (kq.len(), cached_count(store.as_ref(), &kq).await?)
        } else {
            (tasks_full, cached_full)
        };
        out.push(ListEntry {
            id: m.id.clone(),
            version: m.version,
            title: m.title.clone(),
            points: m.points.len(),
            tasks_full,
            cached_full,
            tasks_quick,
            cached_quick,
            stored_versions,
        });
    }
    if let Some(s) = store {
        s.close().await;
    }
    Ok(out)
}

/// One line of `repro compare`: the same (point, series, metric) in two experiment versions or variants.
#[derive(Debug, Clone)]
pub struct CompareRow {
    pub point: String,
    pub series: String,
    pub metric: String,
    pub a: Option<results::Agg>,
    pub b: Option<results::Agg>,
}

/// Resolves `id` or `id@version` against the store (no version = latest).
async fn stored_manifest(
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
    manifest::parse(
        Path::new(&format!("{}.yaml", row.id)),
        &row.manifest_text,
        registry,
    )
    .map_err(|e| anyhow::anyhow!("stored manifest {spec} no longer loads: {e}"))
}

/// `repro compare A B`: two experiment versions (`id@1` vs `id@2`) or two variants
/// (different ids over the same axes) side by side, joined on point, series and metric.
pub async fn compare(
    store_loc: &str,
    a: &str,
    b: &str,
    metrics: &[String],
    registry: &Registry,
    fidelity: Fidelity,
) -> anyhow::Result<Vec<CompareRow>> {
    let store = open_existing_store(store_loc).await?;
    let (ma, mb) = (
        stored_manifest(&store, registry, a).await?,
        stored_manifest(&store, registry, b).await?,
    );
    let (ra, rb) = (
        collect_fidelity(&store, &ma, registry, fidelity).await?,
        collect_fidelity(&store, &mb, registry, fidelity).await?,
    );
    store.close().await;
    let key = |r: &results::ExperimentResults| -> BTreeMap<(String, String, String), results::Agg> {
        r.values
            .iter()
            .map(|((pi, s, m), v)| {
                (
                    (
                        r.manifest
                            .points
                            .get(*pi)
                            .map(|p| p.json())
                            .unwrap_or_default(),
                        s.clone(),
                        m.clone(),
                    ),
                    *v,
                )
            })
            .collect()
    };
    let (ka, kb) = (key(&ra), key(&rb));
    let mut keys: Vec<&(String, String, String)> = ka.keys().chain(kb.keys()).collect();
    keys.sort();
    keys.dedup();
    let order = |p: &str| {
        ma.points
            .iter()
            .position(|x| x.json() == p)
            .or_else(|| {
                mb.points
                    .iter()
                    .position(|x| x.json() == p)
                    .map(|i| i + ma.points.len())
            })
            .unwrap_or(usize::MAX)
    };
    let mut rows: Vec<CompareRow> = keys
        .into_iter()
        .filter(|(_, _, m)| metrics.is_empty() || metrics.contains(m))
        .map(|k| CompareRow {
            point: k.0.clone(),
            series: k.1.clone(),
            metric: k.2.clone(),
            a: ka.get(k).copied(),
            b: kb.get(k).copied(),
        })
        .collect();
    rows.sort_by(|x, y| {
        (x.series.as_str(), x.metric.as_str(), order(&x.point)).cmp(&(
            y.series.as_str(),
            y.metric.as_str(),
            order(&y.point),
        ))
    });
    Ok(rows)
}

async fn cached_count(store: Option<&Store>, keys: &[String]) -> anyhow::Result<usize> {
    Ok(match store {
        Some(s) => s.cached_keys(keys).await?.len(),
        None => 0,
    })
}
