//! `repro run`: plan, execute, measure, render (and `--dry-run`).

use super::{fidelity_of, runtime};
use crate::{Executor as ExecutorName, RunArgs};
use pipeline::execute::queue::{Launch, Queued};
use pipeline::execute::{ExecOptions, Executor, Local};
use pipeline::{exit, InputError, RunOptions};
use solvers::Registry;
use std::process::ExitCode;
use std::sync::Arc;

pub(crate) fn run_options(run: &RunArgs, verb: &str) -> anyhow::Result<RunOptions> {
    let jobs = match run.jobs {
        Some(j) => j,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if run.slurm.detach && run.executor == ExecutorName::Local {
        return Err(InputError("--detach needs --executor queue or slurm".into()).into());
    }
    let fidelity = fidelity_of(run.quick);
    // A bar on a terminal, plain lines otherwise (see execute/local.rs).
    let progress = !run.no_progress;
    let executor: Arc<dyn Executor> = match run.executor {
        ExecutorName::Local => Arc::new(Local(ExecOptions {
            jobs,
            force: run.force,
            fidelity,
            progress,
        })),
        // Detached: only enqueue; workers are started by hand (`repro worker`).
        ExecutorName::Queue => Arc::new(Queued {
            launch: Launch::InProcess(if run.slurm.detach { 0 } else { jobs }),
            force: run.force,
            progress,
            detach: run.slurm.detach,
        }),
        ExecutorName::Slurm => Arc::new(Queued {
            launch: Launch::Slurm(run.slurm.resolve(&run.results.results)?),
            force: run.force,
            progress,
            detach: run.slurm.detach,
        }),
    };
    Ok(RunOptions {
        targets: run.targets.clone(),
        experiments_dir: run.experiments.experiments.clone(),
        results_dir: run.results.results.clone(),
        store: run.store.store.clone(),
        jobs,
        fidelity,
        force: run.force,
        args: format!(
            "{verb} {}",
            std::env::args().skip(2).collect::<Vec<_>>().join(" ")
        ),
        resolve: false,
        executor,
    })
}

pub(crate) fn print_run_summary(r: &pipeline::RunReport, results: &std::path::Path) {
    let e = &r.exec;
    if let Some(job) = &r.detached {
        let by = if job.is_empty() {
            "for workers (start them with `repro worker`)".to_string()
        } else {
            format!("for Slurm job {job}")
        };
        eprintln!(
            "{} tasks: {} cached, {} queued {by}; follow them with `repro status`, \
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
    if !e.failed.is_empty() {
        eprintln!("failed tasks (rerun one with the command shown):");
        for (t, err) in &e.failed {
            eprintln!("  {}: {err}\n    {}", t.key, t.solve_command());
        }
    }
}

/// `repro run`: plan, execute, measure, render.
pub(crate) fn run(args: RunArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let opts = run_options(&args, "run")?;
    if args.dry_run {
        return dry_run(&opts, registry);
    }
    let report = runtime()?.block_on(pipeline::run(&opts, registry))?;
    print_run_summary(
        &report,
        &pipeline::fidelity_dir(&opts.results_dir, opts.fidelity),
    );
    Ok(ExitCode::from(if report.exec.cancelled {
        exit::INTERRUPTED
    } else if !report.exec.failed.is_empty() {
        exit::TASKS_FAILED
    } else {
        exit::OK
    }))
}

/// `repro run --dry-run`: the plan, per experiment; nothing runs, nothing is stored.
pub(crate) fn dry_run(opts: &RunOptions, registry: &Registry) -> anyhow::Result<ExitCode> {
    let entries = runtime()?.block_on(pipeline::plan::explain::dry_run(
        &opts.plan_scope(),
        registry,
    ))?;
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
    eprintln!(
        "dry run at {} fidelity: {} of {tasks} tasks would run (tasks shared between experiments count once per experiment); nothing was run or stored",
        opts.fidelity.as_str(),
        sim + model
    );
    Ok(ExitCode::from(exit::OK))
}
