//! `repro`: regenerate, check and compare the results of performance-modelling papers.
//!
//! One function per command (`fn run(args) -> Result<ExitCode>`, as cargo does);
//! `main` only parses the command line, dispatches and maps errors to exit codes
//! (the named constants in [`pipeline::exit`]).

use anyhow::Context;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use pipeline::{exit, InputError, RunOptions};
use solvers::{Fidelity, Kind, Registry, TaskContext};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "repro",
    version = pipeline::CODE_VERSION,
    about = "Regenerate, check and compare the figures of network performance-modelling papers",
    long_about = "repro reads YAML experiment manifests (experiments/*.yaml), runs the analytical \
solvers and simulators they name, stores every result in a database (results/repro.sqlite by \
default), computes the error measure EM = |sim - model| / |sim| between series, and renders \
figures (PNG + SVG), tables (Markdown + CSV) and results/index.html.\n\n\
Results are cached by task: a rerun executes only what changed.\n\n\
Exit codes: 0 ok, 1 check failed (a point failed its tolerance or was inconclusive), \
2 bad input (manifest, flag, parameter), 3 some tasks failed, 4 internal error, 130 interrupted.\n\n\
Logs go to stderr; set RUST_LOG=info (or debug) for more."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--store`: every command that reads or writes results.
#[derive(Args, Debug, Clone)]
struct StoreArg {
    /// Result store: a SQLite file path, a sqlite:// URL or a postgres://USER@HOST/DB URL.
    #[arg(long, env = "REPRO_STORE", default_value = "results/repro.sqlite")]
    store: String,
}

/// `--results`: commands that render figures, tables and index.html.
#[derive(Args, Debug, Clone)]
struct ResultsArg {
    /// Output folder for figures, tables and index.html.
    #[arg(long, default_value = "results")]
    results: PathBuf,
}

/// `--experiments`: commands that read manifests.
#[derive(Args, Debug, Clone)]
struct ExperimentsArg {
    /// Folder holding the manifests.
    #[arg(long, default_value = "experiments")]
    experiments: PathBuf,
}

/// Parses `--jobs`. Negative numbers reach this parser (`allow_negative_numbers`)
/// so that `--jobs -1` gets this message rather than clap's `-- -1` tip.
fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n >= 1 => Ok(n as usize),
        Ok(_) => Err("must be at least 1 (the number of tasks run in parallel); \
             omit --jobs to use every core"
            .into()),
        Err(_) => Err("must be a whole number >= 1".into()),
    }
}

#[derive(Args, Debug, Clone)]
struct RunArgs {
    /// Manifest ids (e.g. yan-credit-downstream), files or folders; default: every manifest in --experiments.
    targets: Vec<String>,
    /// CI fidelity profile: shorter simulations, same manifests.
    #[arg(long)]
    quick: bool,
    /// Parallel tasks (default: available cores).
    #[arg(long, short = 'j', allow_negative_numbers = true, value_parser = parse_jobs)]
    jobs: Option<usize>,
    /// Rerun tasks even if their results are cached.
    #[arg(long)]
    force: bool,
    /// Where tasks run: `local` (this process), `queue` (the store's task queue, with --jobs
    /// workers in this process and any started by `repro worker`), `slurm` (an sbatch job array
    /// of workers; needs a postgres:// store).
    #[arg(long, value_enum, default_value = "local")]
    executor: Executor,
    /// No progress bar (on a terminal) or progress lines (otherwise).
    #[arg(long)]
    no_progress: bool,
    /// Plan only: per experiment, how many tasks there are, how many are cached
    /// and what would run. Runs and stores nothing.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    results: ResultsArg,
    #[command(flatten)]
    experiments: ExperimentsArg,
    #[command(flatten)]
    slurm: pipeline::slurm::SlurmArgs,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Executor {
    Local,
    Queue,
    Slurm,
}

/// Output format of the reading commands and `check`.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum OutputFormat {
    /// Aligned columns for people.
    Text,
    /// One JSON document on stdout for programs.
    Json,
}

#[derive(Args, Debug, Clone)]
struct CheckArgs {
    #[command(flatten)]
    run: RunArgs,
    /// Also write JUnit XML to FILE: one test case per compared quantity and per
    /// figure, failures listing the offending points.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Format of the verdict on stdout.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
}

#[derive(Args, Debug, Clone)]
struct WhyArgs {
    /// Experiment id (or manifest path).
    experiment: String,
    /// Only this series.
    series: Option<String>,
    /// Only this point: its index in sweep order (from 0) or `axis=value[,axis=value]`.
    point: Option<String>,
    /// Explain the quick (CI) fidelity plan instead of the full one.
    #[arg(long)]
    quick: bool,
    /// Format of the explanation.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    experiments: ExperimentsArg,
}

#[derive(Args, Debug, Clone)]
struct ReportArgs {
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    results: ResultsArg,
}

#[derive(Args, Debug, Clone)]
struct ListArgs {
    /// List the registered solvers with their parameters and metrics.
    #[arg(long)]
    solvers: bool,
    /// Manifest ids, files or folders (default: all).
    targets: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    experiments: ExperimentsArg,
}

#[derive(Args, Debug, Clone)]
struct CompareArgs {
    /// First experiment: `id` (latest stored version) or `id@version`.
    a: String,
    /// Second experiment, same form.
    b: String,
    /// Only these metrics (repeatable; default: all).
    #[arg(long = "metric")]
    metrics: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
    /// Compare the quick (CI) fidelity results instead of the full ones.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Args, Debug, Clone)]
struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "csv")]
    format: ExportFormat,
    /// Experiment ids (default: all in the store).
    ids: Vec<String>,
    /// Export the quick (CI) fidelity results instead of the full ones.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Args, Debug, Clone)]
struct SolveArgs {
    /// Solver name, e.g. credit.ctmc (the solvers are listed below; `--help` adds their parameters).
    solver: String,
    /// Parameters as a JSON object, e.g. '{"lambda":5,"mu1":6,"mu2":8,"n":12,"m":4}'.
    #[arg(long)]
    params: String,
    /// Seed for simulations.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Quick (CI) fidelity for simulations.
    #[arg(long)]
    quick: bool,
}

#[derive(Args, Debug, Clone)]
struct WorkerArgs {
    /// Workers in this process (each runs one task at a time).
    #[arg(long, short = 'j', default_value_t = 1, allow_negative_numbers = true, value_parser = parse_jobs)]
    jobs: usize,
    /// Lease in seconds: a task whose worker stops renewing it for this long is run again elsewhere.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    lease: u64,
    /// Stop after storing this many results.
    #[arg(long)]
    max_tasks: Option<usize>,
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Args, Debug, Clone)]
struct StatusArgs {
    #[command(flatten)]
    store: StoreArg,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Plan, execute, measure and render (default: every manifest in experiments/).
    Run(RunArgs),
    /// Like run, then exit 1 if any compared point fails its tolerance or is inconclusive.
    Check(CheckArgs),
    /// Re-render figures, tables and index.html from the store, solving nothing.
    Report(ReportArgs),
    /// List manifests, their current and stored versions and what is cached; or the solvers (--solvers).
    List(ListArgs),
    /// Two experiment versions (`ID@1 ID@2`) or variants (two ids over the same axes) side by side.
    Compare(CompareArgs),
    /// Write tidy results (experiment, version, series, solver, one column per sweep axis, metric, value, half_width, ci_n) to stdout.
    Export(ExportArgs),
    /// Run one task and print its outcome as JSON (the command a failed task prints).
    Solve(SolveArgs),
    /// Why a task is not cached: the field of its parameters, seed, fidelity or
    /// solver version that differs from the nearest stored task.
    Why(WhyArgs),
    /// Claim and run queued tasks from the store until its queue is empty (see --executor queue|slurm).
    Worker(WorkerArgs),
    /// The store's task queue: pending, running (with their workers), done and failed tasks.
    Status(StatusArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum ExportFormat {
    /// Tidy CSV, one column per sweep axis.
    Csv,
    /// A JSON array of rows, the point as an object of axis values.
    Json,
    /// Not built yet.
    Parquet,
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Analytic => "analytic",
        Kind::Simulation => "simulation",
    }
}

/// Every solver with its parameters and metrics (`repro list --solvers`, `repro solve --help`).
fn solver_listing(registry: &Registry) -> String {
    let mut s = String::from("Solvers:\n");
    for x in registry.iter() {
        let d = x.doc();
        s.push_str(&format!(
            "\n  {} (v{}, {}): {}\n",
            x.name(),
            x.version(),
            kind_name(x.kind()),
            d.summary
        ));
        for p in &d.params {
            s.push_str(&format!("      {:<12} {}\n", p.name, p.doc));
        }
        s.push_str(&format!("      metrics: {}\n", d.metrics.join(", ")));
    }
    s
}

/// One line per solver (`repro solve -h`); `--help` shows [`solver_listing`].
fn solver_names(registry: &Registry) -> String {
    let mut s = String::from(
        "Solvers (`repro solve --help` or `repro list --solvers` for their parameters):\n",
    );
    for x in registry.iter() {
        s.push_str(&format!("  {:<24} {}\n", x.name(), kind_name(x.kind())));
    }
    s
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        // Colour codes only for a person at a terminal, never into CI logs or files.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

fn main() -> ExitCode {
    // Behave like other Unix filters when the reader goes away (`repro export | head`):
    // end quietly instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    init_tracing();
    let registry = Registry::with_all();
    let cmd = Cli::command().mut_subcommand("solve", |c| {
        c.after_help(solver_names(&registry))
            .after_long_help(solver_listing(&registry))
    });
    let matches = cmd.get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Run(args) => run(args, &registry),
        Command::Check(args) => check(args, &registry),
        Command::Report(args) => report(args, &registry),
        Command::List(args) => list(args, &registry),
        Command::Compare(args) => compare(args, &registry),
        Command::Export(args) => export(args, &registry),
        Command::Solve(args) => solve(args, &registry),
        Command::Why(args) => why(args, &registry),
        Command::Worker(args) => worker(args, &registry),
        Command::Status(args) => status(args, &registry),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let (text, code) = match e.downcast_ref::<InputError>() {
                Some(input) => (input.to_string(), exit::BAD_INPUT),
                None => (format!("{e:#}"), exit::INTERNAL),
            };
            // Every error line starts with `error:`; manifest errors come prefixed per line.
            if text.starts_with("error:") {
                eprintln!("{text}");
            } else {
                eprintln!("error: {text}");
            }
            ExitCode::from(code)
        }
    }
}

/// The async runtime for the store. Tokio's default worker count (the number of
/// cores, or `TOKIO_WORKER_THREADS`): solver tasks are bounded by `--jobs`, not by it.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn run_options(run: &RunArgs, verb: &str) -> anyhow::Result<RunOptions> {
    let jobs = match run.jobs {
        Some(j) => j,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    if run.slurm.detach && run.executor == Executor::Local {
        return Err(InputError("--detach needs --executor queue or slurm".into()).into());
    }
    let dispatch = match run.executor {
        Executor::Local => pipeline::Dispatch::Local,
        // Detached: only enqueue; workers are started by hand (`repro worker`).
        Executor::Queue => pipeline::Dispatch::Queue {
            launch: pipeline::worker::Launch::InProcess(if run.slurm.detach { 0 } else { jobs }),
            detach: run.slurm.detach,
        },
        Executor::Slurm => pipeline::Dispatch::Queue {
            launch: pipeline::worker::Launch::Slurm(run.slurm.resolve(&run.results.results)?),
            detach: run.slurm.detach,
        },
    };
    Ok(RunOptions {
        targets: run.targets.clone(),
        experiments_dir: run.experiments.experiments.clone(),
        results_dir: run.results.results.clone(),
        store: run.store.store.clone(),
        jobs,
        fidelity: fidelity_of(run.quick),
        force: run.force,
        // A bar on a terminal, plain lines otherwise (see exec.rs).
        progress: !run.no_progress,
        args: format!(
            "{verb} {}",
            std::env::args().skip(2).collect::<Vec<_>>().join(" ")
        ),
        dispatch,
    })
}

fn print_run_summary(r: &pipeline::RunReport, results: &std::path::Path) {
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
    if !e.failed.is_empty() {
        eprintln!("failed tasks (rerun one with the command shown):");
        for (t, err) in &e.failed {
            eprintln!("  {}: {err}\n    {}", t.key, t.solve_command());
        }
    }
}

/// `repro run`: plan, execute, measure, render.
fn run(args: RunArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
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
fn dry_run(opts: &RunOptions, registry: &Registry) -> anyhow::Result<ExitCode> {
    let entries = runtime()?.block_on(pipeline::explain::dry_run(opts, registry))?;
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

/// `repro check`: `run`, then a verdict over every compared point.
fn check(args: CheckArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let opts = run_options(&args.run, "check")?;
    if args.run.dry_run {
        return dry_run(&opts, registry);
    }
    let report = runtime()?.block_on(pipeline::run(&opts, registry))?;
    print_run_summary(
        &report,
        &pipeline::fidelity_dir(&opts.results_dir, opts.fidelity),
    );
    if let Some(path) = &args.junit {
        std::fs::write(path, pipeline::junit::junit_xml(&report))
            .with_context(|| format!("writing JUnit XML to {}", path.display()))?;
    }
    if report.exec.cancelled {
        return Ok(ExitCode::from(exit::INTERRUPTED));
    }
    let bad: Vec<&store::ErrorMeasureRow> = report
        .error_measures
        .iter()
        .filter(|r| r.verdict == "fail" || r.verdict == "inconclusive")
        .collect();
    let checked = report
        .error_measures
        .iter()
        .filter(|r| r.verdict != "unchecked")
        .count();
    let code = if !bad.is_empty() {
        exit::CHECK_FAILED
    } else if report.exec.failed.is_empty() {
        exit::OK
    } else {
        exit::TASKS_FAILED
    };
    if args.format == OutputFormat::Json {
        let failed_tasks: Vec<serde_json::Value> = report
            .exec
            .failed
            .iter()
            .map(|(t, e)| serde_json::json!({"key": t.key, "solver": t.solver.to_string(), "error": e, "rerun": t.solve_command()}))
            .collect();
        let out = serde_json::json!({
            "passed": bad.is_empty(),
            "exit_code": code,
            "fidelity": opts.fidelity.as_str(),
            "compared_points": checked,
            "failing_points": bad,
            "tasks": {
                "total": report.exec.total,
                "cached": report.exec.cached,
                "run": report.exec.executed,
                "failed": failed_tasks,
            },
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::from(code));
    }
    if bad.is_empty() {
        println!("check passed: {checked} compared points within tolerance");
        return Ok(ExitCode::from(code));
    }
    println!(
        "check FAILED: {} of {checked} compared points fail or are inconclusive",
        bad.len()
    );
    println!(
        "{:<28} {:<22} {:<8} {:>24} {:>14} {:>9} {:>9}  verdict",
        "experiment", "point", "metric", "reference ± 95% CI", "candidate", "EM", "tol"
    );
    for r in bad {
        let refv = match (r.reference_value, r.reference_half_width) {
            (Some(v), Some(h)) => format!("{v:.6} ± {h:.2e}"),
            (Some(v), None) => format!("{v:.6}"),
            _ => "missing".into(),
        };
        println!(
            "{:<28} {:<22} {:<8} {:>24} {:>14} {:>9} {:>9}  {}",
            format!("{} v{}", r.experiment, r.version),
            r.point,
            r.metric,
            refv,
            r.candidate_value
                .map_or("missing".into(), |v| format!("{v:.6}")),
            r.em.map_or("—".into(), |e| format!("{:.3}%", e * 100.0)),
            r.tolerance
                .map_or("—".into(), |t| format!("{:.2}%", t * 100.0)),
            r.verdict
        );
    }
    Ok(ExitCode::from(exit::CHECK_FAILED))
}

/// `repro report`: re-render from the store.
fn report(args: ReportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let results = &args.results.results;
    let n = runtime()?.block_on(pipeline::report(&args.store.store, results, registry))?;
    eprintln!(
        "re-rendered {n} experiments into {}",
        results.join("index.html").display()
    );
    Ok(ExitCode::from(exit::OK))
}

/// `repro list`: manifests (current version, stored versions, cache state) or solvers.
fn list(args: ListArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    if args.solvers {
        print!("{}", solver_listing(registry));
        return Ok(ExitCode::from(exit::OK));
    }
    let entries = runtime()?.block_on(pipeline::list(
        &args.experiments.experiments,
        &args.targets,
        &args.store.store,
        registry,
    ))?;
    if args.format == OutputFormat::Json {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "id": e.id, "version": e.version, "stored_versions": e.stored_versions,
                    "title": e.title, "points": e.points,
                    "tasks_full": e.tasks_full, "cached_full": e.cached_full,
                    "tasks_quick": e.tasks_quick, "cached_quick": e.cached_quick,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::from(exit::OK));
    }
    println!(
        "{:<28} {:>3} {:>8} {:>6} {:>14} {:>14}  title",
        "id", "v", "stored", "points", "cached full", "cached quick"
    );
    for e in entries {
        let stored = if e.stored_versions.is_empty() {
            "—".to_string()
        } else {
            e.stored_versions
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        println!(
            "{:<28} {:>3} {:>8} {:>6} {:>14} {:>14}  {}",
            e.id,
            e.version,
            stored,
            e.points,
            format!("{}/{}", e.cached_full, e.tasks_full),
            format!("{}/{}", e.cached_quick, e.tasks_quick),
            e.title
        );
    }
    Ok(ExitCode::from(exit::OK))
}

/// `repro compare A B`.
fn compare(args: CompareArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let CompareArgs {
        a,
        b,
        metrics,
        format,
        quick,
        store,
    } = args;
    let rows = runtime()?.block_on(pipeline::compare(
        &store.store,
        &a,
        &b,
        &metrics,
        registry,
        fidelity_of(quick),
    ))?;
    if format == OutputFormat::Json {
        let agg = |v: Option<pipeline::results::Agg>| {
            v.map(|x| serde_json::json!({"value": x.value, "half_width": x.half_width, "n": x.n}))
        };
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|r| {
                let point: serde_json::Value =
                    serde_json::from_str(&r.point).unwrap_or(serde_json::Value::Null);
                serde_json::json!({
                    "point": point, "series": r.series, "metric": r.metric,
                    "a": agg(r.a), "b": agg(r.b),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({"a": a, "b": b, "rows": v}))?
        );
        return Ok(ExitCode::from(exit::OK));
    }
    if rows.is_empty() {
        println!("nothing in common to compare between {a} and {b}");
        return Ok(ExitCode::from(exit::OK));
    }
    let cell = |v: Option<pipeline::results::Agg>| match v {
        Some(x) => match x.half_width {
            Some(h) if h.is_finite() => {
                format!(
                    "{} ± {}",
                    reports::format_tick(x.value),
                    reports::format_tick(h)
                )
            }
            _ => reports::format_tick(x.value),
        },
        None => "—".into(),
    };
    println!(
        "{:<26} {:<14} {:<10} {:>24} {:>24} {:>10}",
        "point", "series", "metric", a, b, "(B−A)/|A|"
    );
    for r in rows {
        let rel = match (r.a, r.b) {
            (Some(x), Some(y)) if x.value != 0.0 => {
                reports::format_percent((y.value - x.value) / x.value.abs())
            }
            _ => "—".into(),
        };
        println!(
            "{:<26} {:<14} {:<10} {:>24} {:>24} {:>10}",
            r.point,
            r.series,
            r.metric,
            cell(r.a),
            cell(r.b),
            rel
        );
    }
    Ok(ExitCode::from(exit::OK))
}

/// The fidelity a command selects with `--quick`.
fn fidelity_of(quick: bool) -> Fidelity {
    if quick {
        Fidelity::Quick
    } else {
        Fidelity::Full
    }
}

/// `repro export`: tidy rows to stdout.
fn export(args: ExportArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    if let ExportFormat::Parquet = args.format {
        return Err(InputError(
            "--format parquet is not built yet (see README: polars is deferred); use --format csv"
                .into(),
        )
        .into());
    }
    let rows = runtime()?.block_on(pipeline::export(
        &args.store.store,
        &args.ids,
        registry,
        fidelity_of(args.quick),
    ))?;
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    match args.format {
        ExportFormat::Json => {
            serde_json::to_writer_pretty(&mut lock, &reports::tidy_json(&rows))?;
            writeln!(lock)?;
        }
        _ => reports::write_tidy_csv(&rows, &mut lock)?,
    }
    lock.flush().ok();
    Ok(ExitCode::from(exit::OK))
}

/// `repro solve SOLVER --params JSON`: one task, its outcome as JSON.
fn solve(args: SolveArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let SolveArgs {
        solver,
        params,
        seed,
        quick,
    } = args;
    let s = registry.get(&solver).ok_or_else(|| {
        InputError(format!(
            "unknown solver `{solver}` (known: {}); see `repro list --solvers`",
            registry.names().join(", ")
        ))
    })?;
    let value: serde_json::Value = serde_json::from_str(&params)
        .map_err(|e| InputError(format!("--params is not valid JSON: {e}")))?;
    if !value.is_object() {
        return Err(InputError("--params must be a JSON object".into()).into());
    }
    let fidelity = fidelity_of(quick);
    let ctx = TaskContext::new(seed, fidelity);
    let outcome = s
        .solve(&value, &ctx)
        .and_then(|o| o.checked(&solver))
        .map_err(|e| InputError(format!("{solver}: {e}")))?;
    let metrics: serde_json::Map<String, serde_json::Value> = outcome
        .metrics
        .iter()
        .map(|(k, m)| {
            let v = match m.half_width {
                None => serde_json::json!(m.value),
                Some(h) => serde_json::json!({"value": m.value, "half_width": h, "n": m.n}),
            };
            (k.clone(), v)
        })
        .collect();
    let mut out = serde_json::json!({
        "solver": solver,
        "version": s.version(),
        "kind": s.kind(),
        "status": outcome.status,
        "metrics": metrics,
    });
    if s.kind() == Kind::Simulation {
        out["seed"] = serde_json::json!(seed);
        out["fidelity"] = serde_json::json!(fidelity.as_str());
    }
    if !outcome.series.is_empty() {
        out["series"] = serde_json::json!(outcome.series);
    }
    if let Some(note) = &outcome.note {
        out["note"] = serde_json::json!(note);
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(ExitCode::from(exit::OK))
}

/// `repro why EXPERIMENT [SERIES [POINT]]`.
fn why(args: WhyArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    let fidelity = fidelity_of(args.quick);
    let opts = RunOptions {
        targets: vec![args.experiment.clone()],
        experiments_dir: args.experiments.experiments.clone(),
        results_dir: PathBuf::from("results"),
        store: args.store.store.clone(),
        jobs: 1,
        fidelity,
        force: false,
        progress: false,
        args: String::new(),
        dispatch: pipeline::Dispatch::Local,
    };
    let (m, entries) = runtime()?.block_on(pipeline::explain::why(
        &opts,
        args.series.as_deref(),
        args.point.as_deref(),
        registry,
    ))?;
    if args.format == OutputFormat::Json {
        println!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(ExitCode::from(exit::OK));
    }
    let cached = entries.iter().filter(|e| e.state == "cached").count();
    println!(
        "{} v{} at {} fidelity: {cached} of {} tasks cached",
        m.id,
        m.version,
        fidelity.as_str(),
        entries.len()
    );
    for e in entries.iter().filter(|e| e.state != "cached") {
        let point = e.point.trim_start_matches('{').trim_end_matches('}');
        println!(
            "\n{} at {point} (replication {}), task {}: {}",
            e.series, e.replication, e.key, e.state
        );
        if let Some(err) = &e.error {
            println!("  it failed when it last ran: {err}");
        }
        match &e.nearest {
            None if e.state == "not stored" => {
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

/// `repro worker`: claims queued tasks until the queue is empty.
fn worker(args: WorkerArgs, registry: &Registry) -> anyhow::Result<ExitCode> {
    runtime()?.block_on(async {
        let store = pipeline::open_store(&args.store.store).await?;
        let opts = pipeline::worker::WorkerOptions {
            lease: std::time::Duration::from_secs(args.lease),
            max_tasks: args.max_tasks,
            ..Default::default()
        };
        let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let workers =
            pipeline::worker::spawn_workers(&store, registry, args.jobs, &opts, cancel.clone());
        // Ctrl-C, or SIGTERM from scancel or a time limit: hand the running
        // tasks back to the queue instead of leaving them to their leases.
        let stop = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                #[cfg(unix)]
                {
                    let mut term =
                        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                            .expect("SIGTERM handler");
                    tokio::select! {
                        _ = tokio::signal::ctrl_c() => {}
                        _ = term.recv() => {}
                    }
                }
                #[cfg(not(unix))]
                tokio::signal::ctrl_c().await.ok();
                cancel.store(true, std::sync::atomic::Ordering::Relaxed);
            })
        };
        let mut total = pipeline::worker::WorkerSummary::default();
        for w in workers {
            let s = w.await.context("worker task")??;
            total.completed += s.completed;
            total.failed += s.failed;
            total.lost += s.lost;
        }
        stop.abort();
        store.close().await;
        let interrupted = cancel.load(std::sync::atomic::Ordering::Relaxed);
        eprintln!(
            "worker {}: {} results stored ({} failed tasks), {} tasks lost to other workers{}",
            pipeline::worker::worker_id(0),
            total.completed,
            total.failed,
            total.lost,
            if interrupted {
                "; interrupted"
            } else {
                "; the queue is empty"
            }
        );
        Ok(ExitCode::from(if interrupted {
            exit::INTERRUPTED
        } else {
            exit::OK
        }))
    })
}

/// `repro status`: the store's task queue.
fn status(args: StatusArgs, _registry: &Registry) -> anyhow::Result<ExitCode> {
    let s = runtime()?.block_on(async {
        let store = pipeline::open_existing_store(&args.store.store).await?;
        let s = pipeline::worker::status(&store).await;
        store.close().await;
        s
    })?;
    let c = s.counts;
    println!(
        "queue: {} pending, {} running, {} done, {} failed",
        c.pending, c.running, c.done, c.failed
    );
    if !s.running.is_empty() {
        println!("running:");
        for r in &s.running {
            let solver = pipeline::worker::task_of(&r.task_key, &r.spec)
                .map_or("?".to_string(), |t| t.solver.to_string());
            let lease = match r.lease_until {
                Some(t) if t >= s.now_ms => {
                    format!("lease {:.0} s left", (t - s.now_ms) as f64 / 1e3)
                }
                Some(t) => format!(
                    "lease expired {:.0} s ago: the next worker reclaims it",
                    (s.now_ms - t) as f64 / 1e3
                ),
                None => "no lease".into(),
            };
            println!(
                "  {} {:<20} on {} (attempt {}, {lease})",
                r.task_key,
                solver,
                r.worker.as_deref().unwrap_or("?"),
                r.attempts
            );
        }
    }
    if !s.failed.is_empty() {
        println!("failed (rerun one with the command shown):");
        for (r, t) in &s.failed {
            println!("  {}: {}", r.task_key, r.error.as_deref().unwrap_or(""));
            if let Some(t) = t {
                println!("    {}", t.solve_command());
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}
