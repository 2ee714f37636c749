//! `repro run`: load every manifest, plan, execute what is not cached, measure,
//! render; and `--dry-run` (the plan per experiment, what is cached, what would
//! run). `repro check` runs the same [`drive`] and then judges its verdicts.

use super::pages::{drawn_into, record_drawn, Pages};
use super::{existing_store, fidelity_of, runtime};
use crate::{RunArgs, LOCAL_EXECUTOR};
use anyhow::Context;
use pipeline::execute::launch::{self, LaunchArgs};
use pipeline::execute::queue::Queued;
use pipeline::execute::{self, ExecOptions, Executor, Local};
use pipeline::manifest::{self, discover, load_or_input_error, Manifest};
use pipeline::measure;
use pipeline::measure::compare::History;
use pipeline::measure::stored_manifests_except;
use pipeline::plan::{self, plan_rows, plan_rows_iter, Task};
use pipeline::render::{fidelity_dir, Draw};
use pipeline::shared::{exit, host, open_store, InputError, CODE_VERSION};
use solvers::{Fidelity, Kind, Registry};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use store::{ErrorMeasureRow, ExperimentRow, RunStatus};

/// What `run` and `check` were asked to do.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    pub targets: Vec<String>,
    pub experiments_dir: PathBuf,
    pub results_dir: PathBuf,
    pub store: String,
    pub fidelity: Fidelity,
    pub force: bool,
    /// The command line, for the run's provenance.
    pub args: String,
    /// `check --resolve`: add replications to decide inconclusive points.
    pub resolve: measure::precision::Resolve,
    /// Where the tasks execute: here, or through the store's queue.
    pub executor: Arc<dyn Executor>,
    /// Figure options over every manifest's `layout:` (`--figure-width` ...).
    pub layout: reports::FigureOverrides,
}

/// A run refused because its plan is over the task limit, before anything
/// ran or was stored.
#[derive(Debug, thiserror::Error)]
#[error("{0}; nothing was run")]
pub(crate) struct NothingRun(#[source] pub plan::PlanError);

/// What a run did: its tasks, and what measure made of their results.
#[derive(Debug)]
pub(crate) struct RunReport {
    pub exec: execute::ExecSummary,
    pub error_measures: Vec<ErrorMeasureRow>,
    /// Every claim of every manifest, evaluated.
    pub claims: Vec<measure::claims::ClaimResult>,
    /// Claims with results that the manifests no longer have.
    pub removed_claims: Vec<store::ClaimDefinitionRow>,
    pub manifests: Vec<Manifest>,
    /// `--detach`: who runs the queued tasks (`Launched::workers`); nothing was measured or rendered.
    pub detached: Option<String>,
    /// Replications per (experiment, series, point index) of every simulation
    /// series with a precision target or more replications than it plans
    /// (`check --resolve`).
    pub replications: measure::precision::Replications,
    /// Precision targets not met at `max_replications`: (experiment, series,
    /// point index, replications, half-width, target).
    pub unmet: Vec<(String, String, usize, u32, Option<f64>, f64)>,
}

pub(crate) fn run_options(run: &RunArgs, verb: &str) -> anyhow::Result<RunOptions> {
    let jobs = match run.jobs {
        Some(j) => j,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if run.detach && run.executor == LOCAL_EXECUTOR {
        return Err(InputError("--detach needs --executor queue or slurm".into()).into());
    }
    let fidelity = fidelity_of(run.quick);
    // A bar on a terminal, plain lines otherwise (see execute/local.rs); none with -q.
    let progress = !run.no_progress && !crate::quiet();
    let launch = LaunchArgs {
        jobs,
        detach: run.detach,
        slurm: &run.slurm,
        results: &run.results.results,
    };
    let executor: Arc<dyn Executor> = match launch::build(&run.executor, &launch) {
        Some(launcher) => Arc::new(Queued {
            launcher: launcher?,
            force: run.force,
            progress,
            detach: run.detach,
        }),
        // `local` (clap admits no other value without a launcher).
        None => Arc::new(Local(ExecOptions {
            jobs,
            force: run.force,
            fidelity,
            progress,
        })),
    };
    Ok(RunOptions {
        targets: run.targets.clone(),
        experiments_dir: run.experiments.experiments.clone(),
        results_dir: run.results.results.clone(),
        store: run.store.store.clone(),
        fidelity,
        force: run.force,
        args: format!(
            "{verb} {}",
            std::env::args().skip(2).collect::<Vec<_>>().join(" ")
        ),
        resolve: measure::precision::Resolve::Off,
        executor,
        layout: run.figures.overrides(),
    })
}

/// `repro run`: plan, execute, measure, render.
pub(crate) fn run(args: RunArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let opts = run_options(&args, "run")?;
    if args.dry_run {
        return dry_run(&opts, registry);
    }
    let report = runtime()?.block_on(drive(&opts, registry))?;
    print_run_summary(&report, &fidelity_dir(&opts.results_dir, opts.fidelity));
    Ok(ExitCode::from(if report.exec.cancelled {
        exit::INTERRUPTED
    } else if !report.exec.failed.is_empty() {
        exit::TASKS_FAILED
    } else {
        exit::OK
    }))
}

/// The stages in order: load and validate every manifest, plan, record the
/// run and the plan in the store, execute what is not cached (and further
/// rounds of replications), then measure and render each experiment and write
/// the index. `repro run` and the first half of `repro check`.
pub(crate) async fn drive(opts: &RunOptions, registry: &Registry) -> anyhow::Result<RunReport> {
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
    let mut plan = plan::plan(&manifests, registry, opts.fidelity).map_err(NothingRun)?;
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
        stored,
    } = opts
        .executor
        .execute(&plan, registry, &store, run_id)
        .await?;
    // The task results measured so far: those this run stored as it wrote
    // them, the others read from the store once for every round and the pages.
    let mut records = measure::Records::new();
    records.keep(stored);
    if detached.is_none() {
        rounds(
            opts,
            registry,
            &store,
            &mut records,
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
            claims: Vec::new(),
            removed_claims: Vec::new(),
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
    // Measure, then render, what is there, also after an interruption. A
    // failure here (disk full, unwritable results folder) loses no task
    // result: say so, and how to render again without solving anything.
    let out_dir = fidelity_dir(&opts.results_dir, opts.fidelity);
    let mut all_em = Vec::new();
    let mut all_claims = Vec::new();
    let mut removed_claims = Vec::new();
    let (mut replications, mut unmet) = (BTreeMap::new(), Vec::new());
    let published: anyhow::Result<()> = async {
        let history = History::read(&store).await?;
        let drawn = drawn_into(&store, &out_dir).await?;
        let mut pages = Pages {
            layout: opts.layout,
            ..Pages::default()
        };
        for m in &manifests {
            let x = measure::planned(
                &store,
                &mut records,
                m,
                &plan_rows(&plan, m),
                registry,
                opts.fidelity,
                &history,
                run_id,
            )
            .await?;
            store
                .replace_error_measures(&m.id, m.version, &x.error_measures)
                .await?;
            // Drawn again only where what it shows (data, labels, layout)
            // or the code changed since it was drawn into this folder, or a
            // file of it is gone: a re-check whose tasks were all cached
            // writes no figure (issue 35: about 3 s of such a re-check).
            pages.add(
                &x,
                registry,
                &out_dir,
                opts.fidelity,
                Draw::IfChanged(&drawn),
            )?;
            replications.extend(x.replications);
            unmet.extend(x.unmet);
            all_em.extend(x.error_measures);
            all_claims.extend(x.claims);
            removed_claims.extend(x.removed_claims);
        }
        // The index lists every experiment in the store with results at this
        // fidelity; those this run did not measure are drawn again in the
        // same way.
        // Those this run measured are drawn already (`add_stored` skips
        // them), so their stored manifests are not read again.
        let stored =
            stored_manifests_except(&store, registry, |id| pages.entries.contains_key(id)).await?;
        let registry = &manifest::with_declared(registry, &stored);
        pages
            .add_stored(
                &store,
                &stored,
                registry,
                &out_dir,
                opts.fidelity,
                &history,
                Draw::IfChanged(&drawn),
            )
            .await?;
        let drawn = pages.write_index(&opts.results_dir, opts.fidelity, false)?;
        record_drawn(&store, &out_dir, &drawn).await
    }
    .await;
    published.with_context(|| {
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
        claims: all_claims,
        removed_claims,
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
#[allow(clippy::too_many_arguments)]
async fn rounds(
    opts: &RunOptions,
    registry: &Registry,
    store: &store::Store,
    records: &mut measure::Records,
    run_id: i64,
    manifests: &[Manifest],
    plan: &mut plan::Plan,
    summary: &mut execute::ExecSummary,
) -> anyhow::Result<()> {
    let simulation = |s: &pipeline::manifest::Series| measure::precision::simulates(registry, s);
    let mut more = plan::MoreReplications::new();
    // Each manifest that asked for nothing more with every point's results
    // stored and none failed: its results cannot change while its plan rows
    // stay the same (outcomes are read once, `Records`), so neither can its
    // answer; it is measured again only once its rows change, which only a
    // manifest that asks for more replications does.
    let mut settled = vec![false; manifests.len()];
    while !summary.cancelled {
        let mut next = plan::MoreReplications::new();
        for (m, settled) in manifests.iter().zip(settled.iter_mut()) {
            if *settled {
                continue;
            }
            let rows = plan_rows(plan, m);
            let r = measure::collect_plan_with(store, records, m, &rows).await?;
            let ems = measure::error_measures(&r);
            let claims = measure::claims::evaluate_claims(&r, &ems, opts.fidelity);
            let undecided = measure::claims::undecided(&claims, &r);
            let wants =
                measure::precision::next_round(&r, &ems, &undecided, opts.resolve, simulation);
            let complete = r.status.values().all(|s| {
                !matches!(
                    s,
                    measure::PointStatus::Missing | measure::PointStatus::Failed
                )
            });
            *settled = wants.is_empty() && complete;
            next.extend(wants);
        }
        if next.is_empty() {
            break;
        }
        let asked: HashSet<String> = next.keys().map(|(id, _, _)| id.clone()).collect();
        more.extend(next);
        // Only the manifests that asked are planned again, and only those
        // whose rows changed are stored again.
        let (new, changed) = plan::grow(plan, manifests, registry, opts.fidelity, &more, |m| {
            asked.contains(&m.id)
        })?;
        let new = plan::Plan {
            tasks: new,
            uses: Vec::new(),
        };
        tracing::info!(tasks = new.tasks.len(), "another round of replications");
        for ((m, changed), settled) in manifests.iter().zip(changed).zip(settled.iter_mut()) {
            if changed {
                store
                    .replace_plan_rows(&m.id, m.version, plan_rows_iter(plan, m))
                    .await?;
                *settled = false;
            }
        }
        let round = opts.executor.execute(&new, registry, store, run_id).await?;
        summary.absorb(round.summary);
        records.keep(round.stored);
    }
    Ok(())
}

/// The run's summary on stderr; with -q only its failed tasks.
pub(crate) fn print_run_summary(r: &RunReport, results: &std::path::Path) {
    let e = &r.exec;
    if crate::quiet() {
        print_failed(&e.failed);
        return;
    }
    if let Some(workers) = &r.detached {
        eprintln!(
            "{} tasks: {} cached, {} queued for {workers}; follow them with `repro status`, \
             then run the same `repro run` (without --detach) to measure and render from the cache",
            e.total,
            e.cached,
            e.total - e.cached
        );
        return;
    }
    eprintln!(
        "{} tasks: {} cached, {} run ({} saturated, {} undefined), {} failed in {:.2} s; results in {}",
        e.total,
        e.cached,
        e.executed,
        e.saturated,
        e.undefined,
        e.failed.len(),
        e.wall.as_secs_f64(),
        results.join("index.html").display()
    );
    for (exp, series, point, n, hw, target) in &r.unmet {
        eprintln!(
            "precision not met: {exp} series {series} point {point}: half-width {} > target {target:.3e} at max_replications ({n})",
            hw.map_or("unknown (one replication)".into(), |h| format!("{h:.3e}"))
        );
    }
    print_failed(&e.failed);
}

fn print_failed(failed: &[(Task, String)]) {
    if !failed.is_empty() {
        eprintln!("failed tasks (rerun one with the command shown):");
        for (t, err) in failed {
            eprintln!("  {}: {err}\n    {}", t.key, t.solve_command());
        }
    }
}

/// One line of `repro run --dry-run`.
struct DryRunEntry {
    id: String,
    version: i64,
    tasks: usize,
    cached: usize,
    to_run_simulation: usize,
    to_run_analytic: usize,
}

/// The plan per experiment, what is cached, what would run.
async fn plan_only(opts: &RunOptions, registry: &Registry) -> anyhow::Result<Vec<DryRunEntry>> {
    let paths = discover(&opts.targets, &opts.experiments_dir)?;
    let manifests = load_or_input_error(&paths, registry)?;
    let registry = &manifest::with_declared(registry, &manifests);
    let store = existing_store(&opts.store).await?;
    let mut out = Vec::new();
    for m in &manifests {
        let p = plan::plan(std::slice::from_ref(m), registry, opts.fidelity)?;
        let keys: Vec<String> = p.tasks.iter().map(|t| t.key.clone()).collect();
        let cached = match &store {
            Some(s) if !opts.force => s.cached_keys(&keys).await?,
            _ => HashSet::new(),
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
        });
    }
    if let Some(s) = store {
        s.close().await;
    }
    Ok(out)
}

/// `repro run --dry-run`: the plan, per experiment; nothing runs, nothing is stored.
pub(crate) fn dry_run(opts: &RunOptions, registry: &Registry) -> anyhow::Result<ExitCode> {
    let entries = runtime()?.block_on(plan_only(opts, registry))?;
    println!(
        "{:<28} {:>3} {:>7} {:>7} {:>12} {:>12}",
        "id", "v", "tasks", "cached", "to run: sim", "to run: model"
    );
    let (mut tasks, mut cached, mut sim, mut model) = (0, 0, 0, 0);
    for e in &entries {
        println!(
            "{:<28} {:>3} {:>7} {:>7} {:>12} {:>12}",
            e.id, e.version, e.tasks, e.cached, e.to_run_simulation, e.to_run_analytic
        );
        tasks += e.tasks;
        cached += e.cached;
        sim += e.to_run_simulation;
        model += e.to_run_analytic;
    }
    println!(
        "{:<28} {:>3} {:>7} {:>7} {:>12} {:>12}",
        "total", "", tasks, cached, sim, model
    );
    if !crate::quiet() {
        eprintln!(
            "dry run at {} fidelity: {} of {tasks} tasks would run (tasks shared between experiments count once per experiment); nothing was run or stored",
            opts.fidelity.as_str(),
            sim + model
        );
    }
    Ok(ExitCode::from(exit::OK))
}
