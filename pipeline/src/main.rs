//! `repro`: regenerate, check and compare the results of performance-modelling papers.

use anyhow::Context;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use pipeline::{exit, InputError, RunOptions};
use solvers::{Fidelity, Kind, Registry, TaskContext};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

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
2 bad input (manifest, flag, parameter), 3 some tasks failed, 130 interrupted.\n\n\
Logs go to stderr; set RUST_LOG=info (or debug) for more."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// Result store: a SQLite file path or sqlite:// URL.
    #[arg(
        long,
        env = "REPRO_STORE",
        default_value = "results/repro.sqlite",
        global = true
    )]
    store: String,
    /// Output folder for figures, tables and index.html.
    #[arg(long, default_value = "results", global = true)]
    results: PathBuf,
    /// Folder holding the manifests.
    #[arg(long, default_value = "experiments", global = true)]
    experiments: PathBuf,
}

#[derive(Args, Debug, Clone)]
struct RunArgs {
    /// Manifest ids (e.g. yan-credit-downstream), files or folders; default: every manifest in --experiments.
    targets: Vec<String>,
    /// CI fidelity profile: shorter simulations, same manifests.
    #[arg(long)]
    quick: bool,
    /// Parallel tasks (default: available cores).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Rerun tasks even if their results are cached.
    #[arg(long)]
    force: bool,
    /// Where tasks run: `local` (this machine). `slurm` is planned.
    #[arg(long, value_enum, default_value = "local")]
    executor: Executor,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Executor {
    Local,
    Slurm,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Plan, execute, measure and render (default: every manifest in experiments/).
    Run {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Like run, then exit 1 if any compared point fails its tolerance or is inconclusive.
    Check {
        #[command(flatten)]
        run: RunArgs,
        #[command(flatten)]
        common: Common,
    },
    /// Re-render figures, tables and index.html from the store, solving nothing.
    Report {
        #[command(flatten)]
        common: Common,
    },
    /// List manifests, their versions and what is cached; or the solvers (--solvers).
    List {
        /// List the registered solvers with their parameters and metrics.
        #[arg(long)]
        solvers: bool,
        /// Manifest ids, files or folders (default: all).
        targets: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Two experiment versions (`ID@1 ID@2`) or variants (two ids over the same axes) side by side.
    Compare {
        /// First experiment: `id` (latest stored version) or `id@version`.
        a: String,
        /// Second experiment, same form.
        b: String,
        /// Only these metrics (repeatable; default: all).
        #[arg(long = "metric")]
        metrics: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Write tidy results (experiment, version, series, solver, point, metric, value, half_width, n) to stdout.
    Export {
        /// Output format.
        #[arg(long, value_enum, default_value = "csv")]
        format: ExportFormat,
        /// Experiment ids (default: all in the store).
        ids: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Run one task and print its outcome as JSON (the command a failed task prints).
    Solve {
        /// Solver name, e.g. credit.ctmc (see the list below).
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
    },
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum ExportFormat {
    Csv,
    Parquet,
}

fn solver_listing(registry: &Registry) -> String {
    let mut s = String::from("Solvers:\n");
    for x in registry.iter() {
        let d = x.doc();
        let kind = match x.kind() {
            Kind::Analytic => "analytic",
            Kind::Simulation => "simulation",
        };
        s.push_str(&format!(
            "\n  {} (v{}, {kind}): {}\n",
            x.name(),
            x.version(),
            d.summary
        ));
        for p in &d.params {
            s.push_str(&format!("      {:<12} {}\n", p.name, p.doc));
        }
        s.push_str(&format!("      metrics: {}\n", d.metrics.join(", ")));
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
        .init();
}

fn main() {
    // Behave like other Unix filters when the reader goes away (`repro export | head`):
    // end quietly instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    init_tracing();
    let registry = Registry::with_all();
    let listing = solver_listing(&registry);
    let cmd = Cli::command().mut_subcommand("solve", |c| c.after_long_help(listing.clone()));
    let matches = cmd.get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let code = match real_main(cli, &registry) {
        Ok(code) => code,
        Err(e) => {
            if let Some(input) = e.downcast_ref::<InputError>() {
                eprintln!("{input}");
                exit::BAD_INPUT
            } else {
                eprintln!("error: {e:#}");
                4
            }
        }
    };
    std::process::exit(code);
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

fn run_options(run: &RunArgs, common: &Common, verb: &str) -> anyhow::Result<RunOptions> {
    if run.executor == Executor::Slurm {
        return Err(
            InputError("the slurm executor is not built yet; use --executor local".into()).into(),
        );
    }
    let jobs = match run.jobs {
        Some(0) => return Err(InputError("--jobs must be >= 1".into()).into()),
        Some(j) => j,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    Ok(RunOptions {
        targets: run.targets.clone(),
        experiments_dir: common.experiments.clone(),
        results_dir: common.results.clone(),
        store: common.store.clone(),
        jobs,
        fidelity: if run.quick {
            Fidelity::Quick
        } else {
            Fidelity::Full
        },
        force: run.force,
        progress: !run.no_progress && std::io::stderr().is_terminal(),
        args: format!(
            "{verb} {}",
            std::env::args().skip(2).collect::<Vec<_>>().join(" ")
        ),
    })
}

fn print_run_summary(r: &pipeline::RunReport, results: &std::path::Path) {
    let e = &r.exec;
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

fn real_main(cli: Cli, registry: &Registry) -> anyhow::Result<i32> {
    match cli.command {
        Command::Run { run, common } => {
            let opts = run_options(&run, &common, "run")?;
            let report = runtime()?.block_on(pipeline::run(&opts, registry))?;
            print_run_summary(&report, &common.results);
            Ok(if report.exec.cancelled {
                exit::INTERRUPTED
            } else if !report.exec.failed.is_empty() {
                exit::TASKS_FAILED
            } else {
                exit::OK
            })
        }
        Command::Check { run, common } => {
            let opts = run_options(&run, &common, "check")?;
            let report = runtime()?.block_on(pipeline::run(&opts, registry))?;
            print_run_summary(&report, &common.results);
            if report.exec.cancelled {
                return Ok(exit::INTERRUPTED);
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
            if bad.is_empty() {
                println!("check passed: {checked} compared points within tolerance");
                return Ok(if report.exec.failed.is_empty() {
                    exit::OK
                } else {
                    exit::TASKS_FAILED
                });
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
            Ok(exit::CHECK_FAILED)
        }
        Command::Report { common } => {
            let n =
                runtime()?.block_on(pipeline::report(&common.store, &common.results, registry))?;
            eprintln!(
                "re-rendered {n} experiments into {}",
                common.results.join("index.html").display()
            );
            Ok(exit::OK)
        }
        Command::List {
            solvers,
            targets,
            common,
        } => {
            if solvers {
                print!("{}", solver_listing(registry));
                return Ok(exit::OK);
            }
            let entries = runtime()?.block_on(pipeline::list(
                &common.experiments,
                &targets,
                &common.store,
                registry,
            ))?;
            println!(
                "{:<28} {:>3} {:>6} {:>14} {:>14}  title",
                "id", "v", "points", "cached full", "cached quick"
            );
            for e in entries {
                println!(
                    "{:<28} {:>3} {:>6} {:>14} {:>14}  {}",
                    e.id,
                    e.version,
                    e.points,
                    format!("{}/{}", e.cached_full, e.tasks_full),
                    format!("{}/{}", e.cached_quick, e.tasks_quick),
                    e.title
                );
            }
            Ok(exit::OK)
        }
        Command::Compare {
            a,
            b,
            metrics,
            common,
        } => {
            let rows = runtime()?.block_on(pipeline::compare(
                &common.store,
                &a,
                &b,
                &metrics,
                registry,
            ))?;
            if rows.is_empty() {
                println!("nothing in common to compare between {a} and {b}");
                return Ok(exit::OK);
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
            Ok(exit::OK)
        }
        Command::Export {
            format,
            ids,
            common,
        } => {
            if let ExportFormat::Parquet = format {
                return Err(InputError(
                    "--format parquet is not built yet (see README: polars is deferred); use --format csv".into(),
                )
                .into());
            }
            let rows = runtime()?.block_on(pipeline::export(&common.store, &ids, registry))?;
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            reports::write_tidy_csv(&rows, &mut lock)?;
            lock.flush().ok();
            Ok(exit::OK)
        }
        Command::Solve {
            solver,
            params,
            seed,
            quick,
        } => {
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
            let fidelity = if quick {
                Fidelity::Quick
            } else {
                Fidelity::Full
            };
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
            println!("{}", serde_json::to_string_pretty(&out)?);
            Ok(exit::OK)
        }
    }
}
