//! The Slurm launcher: `repro run --executor slurm` submits an `sbatch` job
//! array whose elements each run `repro worker`, which pulls tasks from the
//! store's queue (see [`crate::execute::queue`]): the [`Slurm`] launcher. Slurm only starts workers; what runs
//! where is decided by the queue, so a worker lost to a node failure or a
//! time limit costs one task's lease, not the run.
//!
//! Options come from flags, else from the `[slurm]` section of a TOML config
//! file (`--config FILE`, or `repro.toml` in the current folder if present):
//!
//! ```toml
//! [slurm]
//! workers = 16            # array size
//! partition = "compute"
//! time = "02:00:00"       # per worker
//! sbatch_args = ["--mem-per-cpu=2G", "--qos=normal"]
//! ```
//!
//! The workers read the store URL from `REPRO_STORE` in their environment
//! (sbatch exports the submitter's environment by default), so a password in
//! the URL does not appear in `squeue`'s command lines.

use super::{LaunchArgs, Launched, Launcher, Registration, Start};
use crate::shared::{BadInput, InputError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use store::{QueueCounts, Store};

pub const REGISTRATION: Registration = Registration {
    name: "slurm",
    help: "an sbatch job array of workers; needs a postgres:// store",
    build,
};

fn build(a: &LaunchArgs<'_>) -> anyhow::Result<Arc<dyn Launcher>> {
    Ok(Arc::new(Slurm(a.slurm.resolve(a.results)?)))
}

/// `--executor slurm` flags (flattened into `repro run`/`check`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SlurmArgs {
    /// Slurm: number of workers (the job array's size) [config: workers; default 4].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub workers: Option<u32>,
    /// Slurm: partition to submit to [config: partition; default: the cluster's].
    #[arg(long)]
    pub partition: Option<String>,
    /// Slurm: time limit of each worker, e.g. 01:00:00 [config: time].
    #[arg(long)]
    pub time: Option<String>,
    /// Slurm: an extra sbatch argument (repeatable), e.g. --sbatch-arg=--mem-per-cpu=2G [config: sbatch_args].
    #[arg(long = "sbatch-arg", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// Config file with a [slurm] section (default: ./repro.toml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// Resolved options of one submission.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmOptions {
    pub workers: u32,
    pub partition: Option<String>,
    pub time: Option<String>,
    pub sbatch_args: Vec<String>,
    /// Where the workers' stdout/stderr go (`<results>/slurm`).
    pub log_dir: PathBuf,
}

const DEFAULT_WORKERS: u32 = 4;

/// The `[slurm]` section of a config file (TOML; other sections are ignored).
#[derive(Debug, Default, PartialEq)]
struct SlurmConfig {
    workers: Option<u32>,
    partition: Option<String>,
    time: Option<String>,
    sbatch_args: Vec<String>,
}

fn parse_config(path: &Path, text: &str) -> Result<SlurmConfig, InputError> {
    // Errors name the line of the value (or of the syntax error).
    let line_of = |span: Option<std::ops::Range<usize>>| {
        span.map_or(1, |r| {
            text[..r.start.min(text.len())].matches('\n').count() + 1
        })
    };
    let err = |line: usize, msg: String| InputError(format!("{}:{line}: {msg}", path.display()));
    let doc = toml_edit::Document::parse(text)
        .map_err(|e| err(line_of(e.span()), e.message().trim().to_string()))?;
    let mut cfg = SlurmConfig::default();
    let Some(section) = doc.get("slurm") else {
        return Ok(cfg);
    };
    let Some(section) = section.as_table_like() else {
        return Err(err(
            line_of(section.span()),
            "`slurm` must be a [slurm] section".into(),
        ));
    };
    for (key, item) in section.iter() {
        let n = line_of(item.span());
        let string = || {
            item.as_str().map(str::to_string).ok_or_else(|| {
                err(
                    n,
                    format!(
                        "{key}: expected a quoted string, got `{}`",
                        shown(text, item)
                    ),
                )
            })
        };
        match key {
            "workers" => {
                cfg.workers = Some(
                    item.as_integer()
                        .and_then(|w| u32::try_from(w).ok())
                        .filter(|&w| w >= 1)
                        .ok_or_else(|| err(n, "workers must be an integer >= 1".into()))?,
                )
            }
            "partition" => cfg.partition = Some(string()?),
            "time" => cfg.time = Some(string()?),
            "sbatch_args" => {
                let strings = item.as_array().and_then(|a| {
                    a.iter()
                        .map(|v| v.as_str().map(str::to_string))
                        .collect::<Option<Vec<String>>>()
                });
                cfg.sbatch_args = strings.ok_or_else(|| {
                    err(n, format!("sbatch_args must be an array of quoted strings, got `{}`", shown(text, item)))
                })?;
            }
            other => {
                return Err(err(
                    n,
                    format!(
                        "unknown key `{other}` in [slurm] (known: workers, partition, time, sbatch_args)"
                    ),
                ))
            }
        }
    }
    Ok(cfg)
}

/// A value as written in `text`.
fn shown<'t>(text: &'t str, item: &toml_edit::Item) -> &'t str {
    item.span().and_then(|r| text.get(r)).unwrap_or("").trim()
}

impl SlurmArgs {
    /// Flags over config file over defaults. Fails early, before anything is
    /// planned, if `sbatch` is not on PATH.
    pub fn resolve(&self, results_dir: &Path) -> anyhow::Result<SlurmOptions> {
        let on_path = std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("sbatch").is_file()));
        if !on_path {
            return Err(InputError(missing_tool_text("sbatch", "not found on PATH".into())).into());
        }
        self.options(results_dir)
    }

    fn options(&self, results_dir: &Path) -> anyhow::Result<SlurmOptions> {
        let path = match &self.config {
            Some(p) => Some(p.clone()),
            None => Some(PathBuf::from("repro.toml")).filter(|p| p.is_file()),
        };
        let cfg = match path {
            Some(p) => {
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    BadInput::new(format!("cannot read the config file {}", p.display()), e)
                })?;
                parse_config(&p, &text)?
            }
            None => SlurmConfig::default(),
        };
        let log_dir = std::path::absolute(results_dir.join("slurm"))
            .map_err(|e| BadInput::new(format!("--results {}", results_dir.display()), e))?;
        let mut sbatch_args = cfg.sbatch_args;
        sbatch_args.extend(self.sbatch_args.iter().cloned());
        Ok(SlurmOptions {
            workers: self.workers.or(cfg.workers).unwrap_or(DEFAULT_WORKERS),
            partition: self.partition.clone().or(cfg.partition),
            time: self.time.clone().or(cfg.time),
            sbatch_args,
            log_dir,
        })
    }
}

fn missing_tool_text(tool: &str, why: String) -> String {
    format!(
        "cannot run `{tool}` ({why}): --executor slurm needs the Slurm client commands on PATH \
         (run on a cluster's login node, or `apt-get install slurm-client`; a single-node \
         cluster for testing: `ci/services/slurm.sh up`)"
    )
}

fn missing_tool(tool: &str, e: std::io::Error) -> anyhow::Error {
    InputError(missing_tool_text(tool, e.to_string())).into()
}

/// How long an `sbatch`, `squeue` or `scancel` call may take: a Slurm
/// controller that does not answer must not hang the run.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `cmd` with its output captured; kills it and fails with
/// `ErrorKind::TimedOut` if it has not ended within `timeout`.
fn output_within(mut cmd: Command, timeout: Duration) -> std::io::Result<Output> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    // Read both pipes on their own threads, so a full pipe cannot stall it.
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let (stdout, stderr) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", timeout.as_secs_f64()),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// The error of a Slurm command that could not be run: not installed, or
/// no answer in time.
fn call_failed(tool: &str, e: std::io::Error) -> anyhow::Error {
    if e.kind() == std::io::ErrorKind::TimedOut {
        return anyhow::anyhow!("`{tool}` gave {e}; is the Slurm controller up (`scontrol ping`)?");
    }
    missing_tool(tool, e)
}

/// The `sbatch` arguments for `opts` (without the program name).
pub fn sbatch_args(opts: &SlurmOptions, exe: &Path) -> Vec<String> {
    let mut a = vec![
        "--parsable".to_string(),
        "--job-name=repro-worker".into(),
        format!("--array=0-{}", opts.workers - 1),
        format!("--output={}/worker-%A_%a.out", opts.log_dir.display()),
    ];
    if let Some(p) = &opts.partition {
        a.push(format!("--partition={p}"));
    }
    if let Some(t) = &opts.time {
        a.push(format!("--time={t}"));
    }
    a.extend(opts.sbatch_args.iter().cloned());
    let exe = exe.display().to_string().replace('\'', "'\\''");
    a.push(format!("--wrap=exec '{exe}' worker"));
    a
}

/// Submits the job array; returns its job id.
fn submit(opts: &SlurmOptions, store_location: &str) -> anyhow::Result<String> {
    std::fs::create_dir_all(&opts.log_dir).map_err(|e| {
        InputError(format!(
            "cannot create the worker log folder {}: {e}",
            opts.log_dir.display()
        ))
    })?;
    let exe = std::env::current_exe()?;
    let mut sbatch = Command::new("sbatch");
    sbatch
        .args(sbatch_args(opts, &exe))
        .env("REPRO_STORE", store_location);
    let out = output_within(sbatch, CALL_TIMEOUT).map_err(|e| call_failed("sbatch", e))?;
    if !out.status.success() {
        return Err(InputError(format!(
            "sbatch refused the worker array: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
        .into());
    }
    // --parsable prints `jobid` or `jobid;cluster`.
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        anyhow::bail!("sbatch printed no job id: {text:?}");
    }
    Ok(id)
}

/// Whether any element of job `id` is still pending or running. A `squeue`
/// that does not answer in time counts as "still running", with a warning:
/// the next check asks again.
fn job_alive(id: &str) -> anyhow::Result<bool> {
    let mut squeue = Command::new("squeue");
    squeue.args([
        "--noheader",
        "--jobs",
        id,
        "--states=PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING,REQUEUED,RESIZING",
        "--format=%i",
    ]);
    let out = match output_within(squeue, CALL_TIMEOUT) {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
            tracing::warn!("squeue gave {e} about job {id}; asking again later");
            return Ok(true);
        }
        Err(e) => return Err(call_failed("squeue", e)),
    };
    // squeue fails on a job id it has forgotten: that job is over.
    Ok(out.status.success() && !String::from_utf8_lossy(&out.stdout).trim().is_empty())
}

/// Cancels job `id` (best effort: the queue's leases cover a failure here).
fn cancel(id: &str) {
    let mut scancel = Command::new("scancel");
    scancel.arg(id);
    match output_within(scancel, CALL_TIMEOUT) {
        Ok(out) if out.status.success() => {}
        Ok(out) => tracing::warn!(
            "scancel {id} failed ({}): {}; cancel it by hand",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ),
        Err(e) => tracing::warn!("scancel {id} failed: {e}; cancel it by hand"),
    }
}

fn log_dir_hint() -> &'static str {
    "<results>/slurm/worker-<job>_<index>.out"
}

/// `--executor slurm`: the workers are an sbatch job array of `repro worker`.
#[derive(Debug, Clone)]
pub struct Slurm(pub SlurmOptions);

impl Launcher for Slurm {
    fn check_store(&self, store: &Store) -> Result<(), InputError> {
        if store.is_postgres() {
            return Ok(());
        }
        Err(InputError(format!(
            "--executor slurm needs a store that every node can reach: pass --store \
             postgres://USER@HOST/DB (the store {} is a file on this machine)",
            store.location()
        )))
    }

    fn launch(&self, s: Start<'_>) -> anyhow::Result<Box<dyn Launched>> {
        let id = submit(&self.0, s.store.location())?;
        eprintln!(
            "submitted Slurm job {id}: {} workers for {} tasks (logs in {})",
            self.0.workers,
            s.tasks,
            self.0.log_dir.display()
        );
        Ok(Box::new(Job(id)))
    }
}

/// A submitted job array.
struct Job(String);

impl Launched for Job {
    fn job(&self) -> Option<&str> {
        Some(&self.0)
    }
    fn workers(&self) -> String {
        format!("Slurm job {}", self.0)
    }
    fn first_start(&self, after: Duration) -> Option<String> {
        Some(format!(
            "first task started {:.1} s after sbatch (job {})",
            after.as_secs_f64(),
            self.0
        ))
    }
    fn ended(&self) -> anyhow::Result<bool> {
        Ok(!job_alive(&self.0)?)
    }
    fn ended_early(&self, c: &QueueCounts) -> anyhow::Error {
        anyhow::anyhow!(
            "Slurm job {} ended with {} of this run's tasks not finished ({} pending, \
             {} running); see the worker logs in {}; `repro status` shows the queue, \
             and `repro worker` or the same `repro run` resumes it",
            self.0,
            c.open(),
            c.pending,
            c.running,
            log_dir_hint()
        )
    }
    fn interrupt(&self) -> String {
        cancel(&self.0);
        format!(
            "interrupted: cancelled Slurm job {}; finished tasks are kept, unfinished ones go back to the queue when their leases expire",
            self.0
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_section_is_parsed_and_flags_win() {
        let text = r#"
# shared settings
[other]
workers = 99
[slurm]
workers = 8          # array size
partition = "compute"
time = "01:00:00"
sbatch_args = ["--mem-per-cpu=2G", "--qos=low#1"]
"#;
        let cfg = parse_config(Path::new("repro.toml"), text).unwrap();
        assert_eq!(
            cfg,
            SlurmConfig {
                workers: Some(8),
                partition: Some("compute".into()),
                time: Some("01:00:00".into()),
                sbatch_args: vec!["--mem-per-cpu=2G".into(), "--qos=low#1".into()],
            }
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.toml");
        std::fs::write(&path, text).unwrap();
        let args = SlurmArgs {
            workers: Some(2),
            sbatch_args: vec!["--exclusive".into()],
            config: Some(path),
            ..Default::default()
        };
        let o = args.options(dir.path()).unwrap();
        assert_eq!(o.workers, 2);
        assert_eq!(o.partition.as_deref(), Some("compute"));
        assert_eq!(o.sbatch_args.len(), 3);
        let a = sbatch_args(&o, Path::new("/opt/re'pro"));
        assert!(a.contains(&"--array=0-1".to_string()));
        assert!(a.contains(&"--partition=compute".to_string()));
        assert_eq!(a.last().unwrap(), "--wrap=exec '/opt/re'\\''pro' worker");
    }

    /// The check runs before anything is queued, so the user hears it
    /// without sbatch being called (the end-to-end test needs a cluster).
    #[test]
    fn a_file_store_is_refused_before_submitting() {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("s.sqlite").display().to_string();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let store = rt.block_on(Store::open(&location)).unwrap();
        let slurm = Slurm(SlurmArgs::default().options(dir.path()).unwrap());
        let e = slurm.check_store(&store).unwrap_err();
        assert!(
            e.0.contains("postgres://") && e.0.contains(&location),
            "{}",
            e.0
        );
        assert!(super::super::InProcess(1).check_store(&store).is_ok());
    }

    /// A Slurm command that hangs is killed at its deadline and reported as
    /// such; one that answers gives its output.
    #[test]
    fn a_call_that_does_not_answer_is_given_up() {
        let mut sleep = Command::new("sleep");
        sleep.arg("30");
        let e = output_within(sleep, Duration::from_millis(200)).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
        let said = call_failed("squeue", e).to_string();
        assert!(
            said.contains("no answer within 0.2 s") && said.contains("scontrol ping"),
            "{said}"
        );
        let mut echo = Command::new("sh");
        echo.args(["-c", "echo 4242; echo oops >&2"]);
        let out = output_within(echo, Duration::from_secs(60)).unwrap();
        assert!(out.status.success());
        assert_eq!(
            out.stdout,
            b"4242
"
        );
        assert_eq!(
            out.stderr,
            b"oops
"
        );
    }

    #[test]
    fn config_errors_name_file_line_and_key() {
        let e = parse_config(Path::new("c.toml"), "[slurm]\nworkerz = 3\n").unwrap_err();
        assert!(
            e.0.contains("c.toml:2") && e.0.contains("workerz"),
            "{}",
            e.0
        );
        let e = parse_config(Path::new("c.toml"), "[slurm]\nworkers = 0\n").unwrap_err();
        assert!(e.0.contains("c.toml:2"), "{}", e.0);
        let e = parse_config(Path::new("c.toml"), "[slurm]\ntime = 3\n").unwrap_err();
        assert!(
            e.0.contains("c.toml:2") && e.0.contains("quoted"),
            "{}",
            e.0
        );
        // Whatever TOML allows is read as TOML reads it: a multi-line array,
        // literal strings, a dotted key.
        let cfg = parse_config(Path::new("c.toml"), "slurm.workers = 3\n[other]\nx = 1\n").unwrap();
        assert_eq!(cfg.workers, Some(3));
        let cfg = parse_config(
            Path::new("c.toml"),
            "[slurm]\nsbatch_args = [\n  '--qos=a',  # first\n  \"--mem=1G\",\n]\n",
        )
        .unwrap();
        assert_eq!(cfg.sbatch_args, vec!["--qos=a", "--mem=1G"]);
        // A syntax error names its line.
        let e = parse_config(
            Path::new("c.toml"),
            "[slurm]\nworkers = 2\ntime = \"01:00\n",
        )
        .unwrap_err();
        assert!(e.0.starts_with("c.toml:3: "), "{}", e.0);
        let e =
            parse_config(Path::new("c.toml"), "[slurm]\nsbatch_args = [\"a\", 1]\n").unwrap_err();
        assert!(
            e.0.contains("c.toml:2") && e.0.contains("array of quoted strings"),
            "{}",
            e.0
        );
    }
}
