//! `repro`: regenerate, check and compare the results of performance-modelling papers.
//!
//! This file holds the command line (clap definitions) and the dispatch; each
//! command is one module of [`commands`] (`fn run(args) -> Result<ExitCode>`)
//! that calls the pipeline's stages in order. `main` only parses the command
//! line, dispatches and maps errors to exit codes (the named constants in
//! [`pipeline::shared::exit`]).

mod commands;

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};
use commands::solve::{solver_listing, solver_names};
use pipeline::shared::{exit, BadInput};
use solvers::Registry;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "repro",
    version = pipeline::shared::CODE_VERSION,
    about = "Regenerate, check and compare the figures of network performance-modelling papers",
    long_about = "repro reads YAML experiment manifests (experiments/*.yaml), runs the analytical \
solvers and simulators they name, stores every result in a database (results/repro.sqlite by \
default), computes the error measure EM = |sim - model| / |sim| between series, and renders \
figures (PNG + SVG), tables (Markdown + CSV) and results/index.html.\n\n\
Results are cached by task: a rerun executes only what changed.\n\n\
Exit codes: 0 ok, 1 check failed (a point failed its tolerance or was inconclusive), \
2 bad input (manifest, flag, parameter), 3 some tasks failed, 4 internal error, 130 interrupted.\n\n\
Logs go to stderr: -v for more (-vv, -vvv), -q for errors only, or RUST_LOG=info (or debug). \
Colours only on a terminal, and never when NO_COLOR is set."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Only errors on stderr: no progress, no summary lines, no warnings.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// More log lines on stderr: -v info, -vv debug, -vvv trace (overrides RUST_LOG).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
}

/// Set once from `-q` before any command runs.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `-q` was given: commands print no progress or summary lines
/// (errors and failed tasks still go to stderr).
pub(crate) fn quiet() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
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
    /// Where tasks run: `local` (this process) or the store's task queue with workers started
    /// by one of the launchers.
    #[arg(long, default_value = "local", value_parser = executor_values())]
    executor: String,
    /// Queue or Slurm: enqueue (slurm: and submit the workers), then return; follow with `repro status`.
    #[arg(long)]
    detach: bool,
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
    slurm: pipeline::execute::launch::slurm::SlurmArgs,
    #[command(flatten)]
    figures: FigureArgs,
}

/// `--executor`'s values: `local` and each launcher's (execute::launch::LAUNCHERS).
fn executor_values() -> clap::builder::PossibleValuesParser {
    use clap::builder::PossibleValue;
    let local = PossibleValue::new(LOCAL_EXECUTOR).help("this process, tasks in parallel (--jobs)");
    let launchers = pipeline::execute::launch::LAUNCHERS
        .iter()
        .map(|l| PossibleValue::new(l.name).help(l.help));
    std::iter::once(local)
        .chain(launchers)
        .collect::<Vec<_>>()
        .into()
}

/// The `--executor` value that runs tasks in this process without the queue.
const LOCAL_EXECUTOR: &str = "local";

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
    /// Also write JUnit XML to FILE: one test case per compared quantity, figure
    /// and claim, failures listing the offending points; and one per paper entry
    /// in the class `entries.<status>` (skipped unless reproduced).
    #[arg(long, value_name = "FILE", help_heading = "Check options")]
    junit: Option<PathBuf>,
    /// Format of the verdict on stdout.
    #[arg(
        long,
        value_enum,
        default_value = "text",
        help_heading = "Check options"
    )]
    format: OutputFormat,
    /// Add replications to the simulation of every inconclusive point (up to
    /// its series' precision.max_replications, else 64) until it passes or fails.
    #[arg(long, help_heading = "Check options")]
    resolve: bool,
    /// With --resolve: at most this many replications per point, for every
    /// simulation series (over its precision.max_replications or 64; never
    /// fewer than the series runs). Doubles per round, so N=3000 from 200 runs
    /// rounds of 400, 800, 1600 and 3000.
    #[arg(long, value_name = "N", requires = "resolve", help_heading = "Check options",
          value_parser = clap::value_parser!(u32).range(1..=i64::from(pipeline::measure::precision::RESOLVE_MAX_LIMIT)))]
    resolve_max: Option<u32>,
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
    #[command(flatten)]
    figures: FigureArgs,
}

/// Figure options over every manifest's `layout:` (e.g. for one column of a
/// two-column paper: --figure-width 8.5cm --font-size 8 --no-title).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Figure options (over each manifest's `layout:`)")]
struct FigureArgs {
    /// Figure width: a length with its unit (8.5cm, 85mm, 3.35in, 240pt).
    #[arg(long, value_name = "LENGTH", value_parser = parse_length)]
    figure_width: Option<reports::Length>,
    /// Figure height (default: about 0.62 of the width, plus room for a legend below).
    #[arg(long, value_name = "LENGTH", value_parser = parse_length)]
    figure_height: Option<reports::Length>,
    /// Tick and axis-label size in points (the title 10% larger, the legend 10% smaller).
    #[arg(long, value_name = "PT", value_parser = parse_font_size)]
    font_size: Option<f64>,
    /// No title above the figures (a paper puts it in the caption).
    #[arg(long)]
    no_title: bool,
    /// Legend position: auto, upper-right, upper-left, lower-right, lower-left, right (outside), below, none.
    #[arg(long, value_name = "POSITION", value_parser = parse_legend)]
    legend: Option<reports::LegendPosition>,
    /// Logarithmic x axis in every figure.
    #[arg(long)]
    log_x: bool,
    /// Logarithmic y axis in every figure.
    #[arg(long)]
    log_y: bool,
}

impl FigureArgs {
    fn overrides(&self) -> reports::FigureOverrides {
        reports::FigureOverrides {
            width: self.figure_width,
            height: self.figure_height,
            font_size: self.font_size,
            title: self.no_title.then_some(false),
            log_x: self.log_x.then_some(true),
            log_y: self.log_y.then_some(true),
            legend: self.legend,
        }
    }
}

fn parse_length(s: &str) -> Result<reports::Length, String> {
    s.parse()
}

fn parse_legend(s: &str) -> Result<reports::LegendPosition, String> {
    s.parse()
}

fn parse_font_size(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches("pt")
        .parse()
        .map_err(|_| format!("{s:?} is not a number of points"))?;
    reports::FigureOptions {
        font_size: v,
        ..Default::default()
    }
    .validate()?;
    Ok(v)
}

#[derive(Args, Debug, Clone)]
struct ListArgs {
    /// List the solvers with their parameters and metrics: the built-in ones, then the
    /// programs the manifests of --experiments declare.
    #[arg(long)]
    solvers: bool,
    /// List every claim of the manifests (kind, expectation, `quick:` mark,
    /// sanity check or fit) with the last verdict the store holds for its
    /// current definition at each fidelity; nothing is run or evaluated.
    #[arg(long, conflicts_with = "solvers")]
    claims: bool,
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
    /// Output format: an aligned text table, or the same numbers (with B − A and
    /// the EM between the versions) as JSON, CSV or Parquet.
    #[arg(long, value_enum, default_value = "text")]
    format: CompareFormat,
    /// Write the output to FILE instead of stdout (required for parquet).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Also draw each figure of the experiment with both versions overlaid
    /// (A solid, B dashed) and write the per-point difference table, into
    /// `<results>/compare/<A>-vs-<B>/` (`<results>/quick/...` with --quick).
    #[arg(long)]
    figure: bool,
    /// Compare the quick (CI) fidelity results instead of the full ones.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    store: StoreArg,
    #[command(flatten)]
    results: ResultsArg,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum CompareFormat {
    /// Aligned columns for people.
    Text,
    /// One JSON document: what differs, and the rows.
    Json,
    /// One row per (point, series, metric): A, B, B − A, EM.
    Csv,
    /// The same columns as CSV, typed, as a Parquet file (needs --out).
    Parquet,
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
    /// Write to FILE instead of stdout (required for parquet and arrow).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Export one row per paper entry the experiments show or make claims
    /// about (and per output of the project's own studies) with its status
    /// (reproduced, partly reproduced, not reproduced, calibrated, reference:
    /// hardware, drawn) and the claim counts behind it, instead of values.
    #[arg(long, conflicts_with = "claims")]
    statuses: bool,
    /// Export one row per claim (verdict, expectation, status, sanity/fit,
    /// predicate, quote) instead of values.
    #[arg(long)]
    claims: bool,
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
    /// Where to look for a solver that is not built in: the manifests of this
    /// folder that declare programs (`solvers:`).
    #[command(flatten)]
    experiments: ExperimentsArg,
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
    /// Write tidy results (experiment, version, series, solver, one column per sweep axis, metric, value, half_width, ci_n; parquet/arrow add status, fidelity, code_version) to stdout or --out.
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
    /// Print a shell completion script (e.g. `repro completions bash > ~/.local/share/bash-completion/completions/repro`).
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per command into --out
    /// (e.g. `repro man | man -l -`).
    Man(ManArgs),
}

#[derive(Args, Debug)]
struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
struct ManArgs {
    /// Folder to write repro.1 and repro-<command>.1 into (created if missing);
    /// without it, repro.1 goes to stdout.
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum ExportFormat {
    /// Tidy CSV, one column per sweep axis.
    Csv,
    /// A JSON array of rows, the point as an object of axis values.
    Json,
    /// Parquet: typed columns (one per sweep axis), plus status, fidelity and
    /// code version; needs --out.
    Parquet,
    /// Arrow IPC file (Feather v2), the same columns as parquet; needs --out.
    Arrow,
}

/// The log level of `-q`/`-v`; `None` (neither given): RUST_LOG, else warn.
fn log_level(quiet: bool, verbose: u8) -> Option<&'static str> {
    match (quiet, verbose) {
        (true, _) => Some("error"),
        (false, 0) => None,
        (false, 1) => Some("info"),
        (false, 2) => Some("debug"),
        (false, _) => Some("trace"),
    }
}

/// Colour codes only for a person at a terminal, never into CI logs or
/// files, and never when NO_COLOR is set to anything but "" (no-color.org).
fn colour(terminal: bool, no_color: Option<std::ffi::OsString>) -> bool {
    terminal && no_color.is_none_or(|v| v.is_empty())
}

fn init_tracing(level: Option<&str>) {
    let filter = match level {
        Some(l) => tracing_subscriber::EnvFilter::new(l),
        None => tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(colour(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR"),
        ))
        .init();
}

/// `repro man`: the page of `repro` to stdout, or every command's page into a folder.
fn man(cmd: clap::Command, out: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    match out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(cmd).render(&mut page)?;
            use std::io::Write;
            std::io::stdout().write_all(&page)?;
        }
        Some(dir) => {
            std::fs::create_dir_all(&dir)
                .map_err(|e| BadInput::new(format!("--out {}", dir.display()), e))?;
            clap_mangen::generate_to(cmd, &dir)
                .map_err(|e| BadInput::new(format!("--out {}", dir.display()), e))?;
            if !quiet() {
                eprintln!("man pages written into {}", dir.display());
            }
        }
    }
    Ok(ExitCode::from(exit::OK))
}

fn main() -> ExitCode {
    // Behave like other Unix filters when the reader goes away (`repro export | head`):
    // end quietly instead of panicking on a broken pipe.
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let registry = Registry::with_all();
    let cmd = Cli::command().mut_subcommand("solve", |c| {
        c.after_help(solver_names(&registry))
            .after_long_help(solver_listing(&registry))
    });
    let matches = cmd.clone().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    QUIET.store(cli.quiet, std::sync::atomic::Ordering::Relaxed);
    init_tracing(log_level(cli.quiet, cli.verbose));
    let result = match cli.command {
        Command::Run(args) => commands::run::run(args, &registry),
        Command::Check(args) => commands::check::check(args, &registry),
        Command::Report(args) => commands::report::report(args, &registry),
        Command::List(args) => commands::list::list(args, &registry),
        Command::Compare(args) => commands::compare::compare(args, &registry),
        Command::Export(args) => commands::export::export(args, &registry),
        Command::Solve(args) => commands::solve::solve(args, &registry),
        Command::Why(args) => commands::why::why(args, &registry),
        Command::Worker(args) => commands::worker::worker(args, &registry),
        Command::Status(args) => commands::status::status(args, &registry),
        Command::Completions(args) => {
            let mut cmd = cmd;
            clap_complete::generate(args.shell, &mut cmd, "repro", &mut std::io::stdout());
            Ok(ExitCode::from(exit::OK))
        }
        Command::Man(args) => man(cmd, args.out),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            let (text, code) = commands::failure(&e);
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
