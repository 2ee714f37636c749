//! The repro pipeline: manifests in, figures out.
//!
//! load + validate every manifest -> plan tasks -> skip cached -> execute ->
//! measure (error measures) -> render (figures, tables, index.html).
//!
//! Architecture invariant: the pipeline is the only crate that knows both the
//! solvers and the store; solvers never see the store, the store never sees a
//! solver, and reports only renders what the pipeline hands it.

pub mod execute;
pub mod manifest;
pub mod measure;
pub mod plan;
pub mod render;
pub mod store_open;

pub use plan::list::{list, ListEntry};
pub use render::compare::{compare, Comparison};
pub use render::export::export;
pub use render::fidelity_dir;
pub use render::index::report;
pub use store_open::{open_existing_store, open_store};

use anyhow::Context;
use manifest::{discover, load_or_input_error, Manifest};
use plan::{plan_rows, plan_rows_iter};
use render::write_full_index;
use solvers::{Fidelity, Registry};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use store::{ErrorMeasureRow, ExperimentRow, RunStatus};

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
    pub args: String,
    /// `check --resolve`: add replications to decide inconclusive points.
    pub resolve: bool,
    /// Where the tasks execute: here, or through the store's queue.
    pub executor: Arc<dyn execute::Executor>,
}

impl RunOptions {
    /// What the planning commands (`--dry-run`) read of these options.
    pub fn plan_scope(&self) -> plan::explain::PlanScope {
        plan::explain::PlanScope {
            targets: self.targets.clone(),
            experiments_dir: self.experiments_dir.clone(),
            store: self.store.clone(),
            fidelity: self.fidelity,
            force: self.force,
        }
    }
}

#[derive(Debug)]
pub struct RunReport {
    pub exec: execute::ExecSummary,
    pub error_measures: Vec<ErrorMeasureRow>,
    pub manifests: Vec<Manifest>,
    /// `--detach`: the Slurm job that runs the tasks; nothing was measured or rendered.
    pub detached: Option<String>,
    /// Replications per (experiment, series, point index) of every simulation
    /// series with a precision target or more replications than it plans
    /// (`check --resolve`).
    pub replications: measure::precision::Replications,
    /// Precision targets not met at `max_replications`: (experiment, series,
    /// point index, replications, half-width, target).
    pub unmet: Vec<(String, String, usize, u32, Option<f64>, f64)>,
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
    // The programs the manifests declare join the compiled-in solvers.
    let registry = &manifest::with_declared(registry, &manifests);
    // Planned before the store is opened: a run over the task limit changes nothing.
    let mut plan = plan::plan(&manifests, registry, opts.fidelity)
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
        for (key, value) in manifest::facts_of(m) {
            store.set_fact(&key, &value).await?;
        }
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
    let execute::Executed {
        mut summary,
        detached,
    } = opts
        .executor
        .execute(&plan, registry, &store, run_id)
        .await?;
    if detached.is_none() {
        rounds(
            opts,
            registry,
            &store,
            run_id,
            &manifests,
            &mut plan,
            &mut summary,
        )
        .await?;
    }
    if let Some(job) = detached {
        store.finish_run(run_id, RunStatus::Detached).await?;
        store.close().await;
        return Ok(RunReport {
            exec: summary,
            error_measures: Vec::new(),
            manifests,
            detached: Some(job),
            replications: BTreeMap::new(),
            unmet: Vec::new(),
        });
    }
    let status = if summary.cancelled {
        RunStatus::Interrupted
    } else if summary.failed.is_empty() {
        RunStatus::Done
    } else {
        RunStatus::FailedTasks
    };
    // Measure and render what is there, also after an interruption. A failure
    // here (disk full, unwritable results folder) loses no task result: say so,
    // and how to render again without solving anything.
    let out_dir = fidelity_dir(&opts.results_dir, opts.fidelity);
    let mut all_em = Vec::new();
    let (mut replications, mut unmet) = (BTreeMap::new(), Vec::new());
    let measured: anyhow::Result<()> = async {
        let mut rendered = BTreeMap::new();
        for m in &manifests {
            let r = measure::collect_plan(&store, m, &plan_rows(&plan, m)).await?;
            let ems = measure::error_measures(&r);
            let (reps, not_met) = precision_report(&r, registry, opts.fidelity);
            replications.extend(reps);
            unmet.extend(not_met);
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
        replications,
        unmet,
    })
}

/// Rounds of replications after the first: while a precision target (or,
/// with `--resolve`, an inconclusive verdict) asks for more replications at
/// some points, plan them and run only the new tasks. Counts only grow and
/// are capped, so this ends; decisions read whole rounds, so they do not
/// depend on `--jobs`.
async fn rounds(
    opts: &RunOptions,
    registry: &Registry,
    store: &store::Store,
    run_id: i64,
    manifests: &[Manifest],
    plan: &mut plan::Plan,
    summary: &mut execute::ExecSummary,
) -> anyhow::Result<()> {
    let simulation = |s: &manifest::Series| measure::precision::simulates(registry, s);
    let mut more = plan::MoreReplications::new();
    while !summary.cancelled {
        let mut next = plan::MoreReplications::new();
        for m in manifests {
            let r = measure::collect_plan(store, m, &plan_rows(plan, m)).await?;
            let ems = measure::error_measures(&r);
            next.extend(measure::precision::next_round(
                &r,
                &ems,
                opts.resolve,
                simulation,
            ));
        }
        if next.is_empty() {
            break;
        }
        more.extend(next);
        let grown = plan::plan_with(manifests, registry, opts.fidelity, &more)
            .map_err(|e| InputError(format!("error: {e}")))?;
        let known: std::collections::HashSet<&str> =
            plan.tasks.iter().map(|t| t.key.as_str()).collect();
        let new = plan::Plan {
            tasks: grown
                .tasks
                .iter()
                .filter(|t| !known.contains(t.key.as_str()))
                .cloned()
                .collect(),
            uses: Vec::new(),
        };
        tracing::info!(tasks = new.tasks.len(), "another round of replications");
        for m in manifests {
            store
                .replace_plan_rows(&m.id, m.version, plan_rows_iter(&grown, m))
                .await?;
        }
        *plan = grown;
        let round = opts.executor.execute(&new, registry, store, run_id).await?;
        summary.absorb(round.summary);
    }
    Ok(())
}

/// Replications per point of the simulation series that have a precision
/// target or more replications than planned, and the targets not met.
#[allow(clippy::type_complexity)]
fn precision_report(
    r: &measure::ExperimentResults,
    registry: &Registry,
    fidelity: Fidelity,
) -> (
    Vec<((String, String, usize), u32)>,
    Vec<(String, String, usize, u32, Option<f64>, f64)>,
) {
    let m = &r.manifest;
    let mut reps = Vec::new();
    for s in &m.series {
        if !measure::precision::simulates(registry, s) {
            continue;
        }
        let counts: Vec<u32> = m
            .points
            .iter()
            .map(|p| measure::precision::replications(r, p.index, &s.name))
            .collect();
        let planned = match fidelity {
            Fidelity::Quick => s.quick_replications.unwrap_or(s.replications),
            Fidelity::Full => s.replications,
        };
        if s.precision.is_some() || counts.iter().any(|n| *n != planned) {
            for (p, n) in m.points.iter().zip(counts) {
                reps.push(((m.id.clone(), s.name.clone(), p.index), n));
            }
        }
    }
    let unmet = measure::precision::unmet(r)
        .into_iter()
        .map(|(s, p, n, hw, t)| (m.id.clone(), s, p, n, hw, t))
        .collect();
    (reps, unmet)
}
