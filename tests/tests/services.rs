//! End-to-end tests of the task queue, `repro worker`, the PostgreSQL store
//! and the Slurm executor, against real services.
//!
//! The queue tests run on SQLite always and, when `REPRO_TEST_POSTGRES` is
//! set, on PostgreSQL too. The PostgreSQL tests need `REPRO_TEST_POSTGRES`
//! (a server URL; each test creates its own database there), the Slurm tests
//! also `REPRO_TEST_SLURM` (and `SLURM_CONF` for the client commands). The
//! scripts in `ci/services/` start both and print these variables; `.ci/run`
//! does that. Without them a test says that it was skipped and why.

mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Cheap analytic tasks plus replicated quick simulations.
const SMALL: [&str; 2] = ["yan-credit-downstream", "yan-credit-both"];

/// One simulation long enough (about 1.5 s) to be killed in the middle,
/// and four cheap model tasks. The simulation is the only task with a high
/// expected cost, so a worker claims it first.
const SLOW: &str = r#"
id: slow
title: one slow simulation
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 12 }
sweep: { m: [5] }
series:
  long:
    solver: credit.sim
    params: { batch_len: 600000, warmup: 1000 }
"#;

const FAST: &str = r#"
id: fast
title: cheap models
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 12 }
sweep: { m: [2, 3, 4, 5] }
series:
  model: { solver: credit.ctmc, label: model }
"#;

/// 5 tasks: 1 slow simulation, 4 models.
fn slow_manifest(dir: &Path) {
    write_manifest(dir, "slow", SLOW);
    write_manifest(dir, "fast", FAST);
}

fn pg_base() -> Option<String> {
    pg_base_or_skip("skipped")
}

fn slurm_ready() -> bool {
    if std::env::var_os("REPRO_TEST_SLURM").is_none() {
        eprintln!(
            "skipped: REPRO_TEST_SLURM is not set (start a single-node cluster with \
             `eval \"$(ci/services/slurm.sh up)\"`; .ci/run does)"
        );
        return false;
    }
    true
}

/// The store locations to test the queue on: SQLite always, PostgreSQL if available.
fn queue_stores(dir: &Path, tag: &str) -> Vec<String> {
    let mut v = vec![dir.join("q.sqlite").to_str().unwrap().to_string()];
    if let Some(base) = pg_base_or_skip("ran on SQLite only, the PostgreSQL half skipped") {
        v.push(fresh_pg_db(&base, tag));
    }
    v
}

fn export(dir: &Path, store: &str) -> String {
    let o = repro(
        dir,
        &["export", "--quick", "--format", "csv", "--store", store],
    );
    ok(&o);
    stdout(&o)
}

fn spawn(dir: &Path, args: &[&str]) -> std::process::Child {
    Command::new(repro_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("REPRO_STORE")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn repro")
}

/// Count of rows of a query's first column (an integer), on either backend.
fn scalar(store: &str, sql: &'static str) -> i64 {
    rt().block_on(async {
        use sqlx::Connection;
        if store.starts_with("postgres") {
            let mut c = sqlx::PgConnection::connect(store).await.unwrap();
            sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
        } else {
            let mut c = sqlx::SqliteConnection::connect(&format!("sqlite://{store}"))
                .await
                .unwrap();
            sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
        }
    })
}

#[test]
fn postgres_and_sqlite_give_byte_identical_exports_and_every_command_works() {
    let Some(base) = pg_base() else { return };
    let pg = fresh_pg_db(&base, "ident");
    let p = project(&SMALL);
    ok(&repro(
        p.path(),
        &["run", "--quick", "--store", "local.sqlite"],
    ));
    ok(&repro(p.path(), &["run", "--quick", "--store", &pg]));
    let a = export(p.path(), "local.sqlite");
    assert!(a.lines().count() > 100);
    assert_eq!(
        a,
        export(p.path(), &pg),
        "exports differ between SQLite and PostgreSQL"
    );
    // A rerun on PostgreSQL is fully cached; check, list, report, compare work on it.
    let again = ok(&repro(p.path(), &["check", "--quick", "--store", &pg]));
    let (total, cached, run, failed) = summary(&again);
    assert_eq!((cached, run, failed), (total, 0, 0), "{again}");
    let list = repro(p.path(), &["list", "--store", &pg]);
    assert!(stdout(&ok_out(list)).contains("yan-credit-both"));
    ok(&repro(
        p.path(),
        &["report", "--store", &pg, "--results", "pg-results"],
    ));
    // Quick results render into results/quick/ (never over the full figures).
    assert!(p
        .path()
        .join("pg-results/quick/figures/yan-4.9.png")
        .is_file());
    let cmp = repro(
        p.path(),
        &[
            "compare",
            "--quick",
            "yan-credit-both",
            "yan-credit-both@1",
            "--store",
            &pg,
        ],
    );
    assert!(stdout(&ok_out(cmp)).contains("L1"));
}

fn ok_out(o: Output) -> Output {
    ok(&o);
    o
}

#[test]
fn a_worker_killed_mid_task_loses_nothing_and_stores_nothing_twice() {
    let p = project(&[]);
    slow_manifest(p.path());
    let reference = {
        ok(&repro(
            p.path(),
            &["run", "--quick", "--store", "ref.sqlite"],
        ));
        export(p.path(), "ref.sqlite")
    };
    for store in queue_stores(p.path(), "kill") {
        // Enqueue only; workers are started by hand.
        let out = ok(&repro(
            p.path(),
            &[
                "run",
                "--quick",
                "--executor",
                "queue",
                "--detach",
                "--store",
                &store,
            ],
        ));
        assert!(out.contains("queued for workers"), "{out}");
        let mut a = spawn(p.path(), &["worker", "--lease", "2", "--store", &store]);
        // Wait until worker A runs the slow simulation (claimed first: it is
        // queued with the highest expected cost), then kill it outright.
        let t0 = Instant::now();
        loop {
            let s = stdout(&repro(p.path(), &["status", "--store", &store]));
            if s.contains("running:") {
                break;
            }
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "no task started: {s}"
            );
            std::thread::sleep(Duration::from_millis(30));
        }
        std::thread::sleep(Duration::from_millis(200));
        a.kill().unwrap(); // SIGKILL
        a.wait().unwrap();
        let s = stdout(&repro(p.path(), &["status", "--store", &store]));
        assert!(s.contains("running:") && s.contains("attempt 1"), "{s}");

        // Worker B finishes the rest and, once A's lease expires, A's task.
        let b = repro(p.path(), &["worker", "--lease", "2", "--store", &store]);
        let b_err = ok(&b);
        let s = stdout(&repro(p.path(), &["status", "--store", &store]));
        assert!(
            s.starts_with("queue: 0 pending, 0 running, 5 done, 0 failed"),
            "{s}\n{b_err}"
        );
        assert_eq!(
            scalar(&store, "SELECT COUNT(*) FROM queue WHERE attempts = 2"),
            1
        );
        assert_eq!(scalar(&store, "SELECT COUNT(*) FROM tasks"), 5);
        assert_eq!(scalar(&store, "SELECT COUNT(*) FROM run_tasks"), 5);
        // Everything is cached now, and the results are the local executor's.
        let rerun = ok(&repro(p.path(), &["run", "--quick", "--store", &store]));
        assert_eq!(summary(&rerun), (5, 5, 0, 0), "{rerun}");
        assert_eq!(export(p.path(), &store), reference, "{store}");
    }
}

#[test]
fn two_runs_enqueueing_overlapping_manifests_run_every_task_once() {
    let p = project(&SMALL);
    // Both runs share yan-credit-downstream; the second adds yan-credit-both.
    for store in queue_stores(p.path(), "overlap") {
        let a = spawn(
            p.path(),
            &[
                "run",
                "--quick",
                "--executor",
                "queue",
                "-j",
                "2",
                "yan-credit-downstream",
                "--store",
                &store,
            ],
        );
        let b = spawn(
            p.path(),
            &[
                "run",
                "--quick",
                "--executor",
                "queue",
                "-j",
                "2",
                "--store",
                &store,
            ],
        );
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        ok(&a);
        ok(&b);
        assert_eq!(summary(&stderr(&b)).0, 34);
        // Each task was claimed once and linked to exactly one run.
        assert_eq!(
            scalar(&store, "SELECT COUNT(*) FROM queue WHERE attempts <> 1"),
            0,
            "{store}"
        );
        assert_eq!(scalar(&store, "SELECT COUNT(*) FROM queue"), 34);
        assert_eq!(scalar(&store, "SELECT COUNT(*) FROM run_tasks"), 34);
        assert_eq!(scalar(&store, "SELECT COUNT(*) FROM tasks"), 34);
    }
}

#[test]
fn a_postgres_store_of_a_newer_schema_and_bad_urls_are_refused_clearly() {
    let p = project(&["yan-credit-downstream"]);
    // Refused connection and malformed URL: no server needed.
    let o = repro(
        p.path(),
        &[
            "run",
            "--quick",
            "--store",
            "postgres://repro@127.0.0.1:1/repro",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("cannot connect to PostgreSQL") && e.contains("postgres.sh up"),
        "{e}"
    );
    let o = repro(
        p.path(),
        &["list", "--store", "postgres://repro@127.0.0.1:x/repro"],
    );
    assert!(
        stderr(&o).contains("invalid PostgreSQL URL"),
        "{}",
        stderr(&o)
    );

    let Some(base) = pg_base() else { return };
    let pg = fresh_pg_db(&base, "newer");
    ok(&repro(p.path(), &["run", "--quick", "--store", &pg]));
    rt().block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(&pg).await.unwrap();
        sqlx::query("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
            .execute(&mut c)
            .await
            .unwrap();
    });
    for args in [vec!["run", "--quick"], vec!["export"]] {
        let mut a = args.clone();
        a.extend(["--store", pg.as_str()]);
        let o = repro(p.path(), &a);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("schema version 99"), "{}", stderr(&o));
    }
    // A missing database is named, with the fix.
    let (prefix, _) = base.rsplit_once('/').unwrap();
    let o = repro(
        p.path(),
        &["run", "--quick", "--store", &format!("{prefix}/no_such_db")],
    );
    assert!(stderr(&o).contains("createdb"), "{}", stderr(&o));
}

#[test]
fn the_slurm_executor_without_sbatch_or_with_a_file_store_says_what_to_do() {
    let p = project(&["yan-credit-downstream"]);
    let o = Command::new(repro_bin())
        .args(["run", "--quick", "--executor", "slurm"])
        .current_dir(p.path())
        .env("PATH", "/nonexistent")
        .env_remove("REPRO_STORE")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("sbatch") && stderr(&o).contains("slurm.sh up"),
        "{}",
        stderr(&o)
    );
    if !slurm_ready() {
        return;
    }
    let o = repro(p.path(), &["run", "--quick", "--executor", "slurm"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("postgres://"), "{}", stderr(&o));
}

#[test]
fn slurm_workers_complete_several_manifests_like_a_local_run() {
    if !slurm_ready() {
        return;
    }
    let Some(base) = pg_base() else { return };
    let p = project(&SMALL);
    slow_manifest(p.path());
    ok(&repro(
        p.path(),
        &["run", "--quick", "--store", "local.sqlite"],
    ));
    let pg = fresh_pg_db(&base, "slurm");
    let out = ok(&repro(
        p.path(),
        &[
            "run",
            "--quick",
            "--executor",
            "slurm",
            "--workers",
            "3",
            "--store",
            &pg,
        ],
    ));
    assert!(out.contains("submitted Slurm job"), "{out}");
    let (total, cached, run, failed) = summary(&out);
    assert_eq!((cached, run, failed), (0, total, 0), "{out}");
    assert_eq!(export(p.path(), &pg), export(p.path(), "local.sqlite"));
    assert!(p.path().join("results/quick/figures/yan-4.5.png").is_file());

    // --detach: submit and return; status follows; a plain rerun renders from the cache.
    let pg2 = fresh_pg_db(&base, "detach");
    let out = ok(&repro(
        p.path(),
        &[
            "run",
            "--quick",
            "--executor",
            "slurm",
            "--workers",
            "2",
            "--detach",
            "--store",
            &pg2,
        ],
    ));
    assert!(out.contains("queued for Slurm job"), "{out}");
    let t0 = Instant::now();
    loop {
        let s = stdout(&ok_out(repro(p.path(), &["status", "--store", &pg2])));
        if s.starts_with("queue: 0 pending, 0 running") {
            break;
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "{s}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let rerun = ok(&repro(p.path(), &["run", "--quick", "--store", &pg2]));
    let (total, cached, _, _) = summary(&rerun);
    assert_eq!(cached, total, "{rerun}");
    assert_eq!(export(p.path(), &pg2), export(p.path(), "local.sqlite"));
}

/// A program declared in a manifest (README "Bring your own solver") that
/// logs where it ran: the Slurm array job's id, or `none` outside Slurm.
const LOGGED_PY: &str = r#"import json, os, sys
req = json.load(sys.stdin)
p = req["params"]
with open("ran.log", "a") as log:
    log.write("%s %s\n" % (os.environ.get("SLURM_ARRAY_JOB_ID", "none"), p["lambda"]))
rho = p["lambda"] / p["mu"]
json.dump({"metrics": {"L": rho / (1 - rho)}}, sys.stdout)
"#;

const LOGGED: &str = r#"
id: byo-slurm
title: a declared program run by Slurm workers
version: 1
solvers:
  mm1_logged:
    command: [python3, mm1_logged.py]
    kind: analytic
    params: { lambda: { type: float, min: 0 }, mu: { type: float, min: 0 } }
    metrics: [L]
    timeout_s: 60
params: { mu: 1.0 }
sweep: { lambda: [0.2, 0.4, 0.6, 0.8] }
series:
  exact: { solver: mm1k.exact, params: { K: 200 } }
  logged: { solver: mm1_logged }
compare:
  - { metric: L, reference: exact, candidate: logged, tolerance: 0.01 }
"#;

/// The Slurm executor runs a declared program's tasks in its array's
/// workers (the program finds its files at the same path: here one machine,
/// on a cluster a shared filesystem), with the results of a local run.
#[test]
fn slurm_workers_run_a_declared_program() {
    if !slurm_ready() {
        return;
    }
    let Some(base) = pg_base() else { return };
    let python = Command::new("python3").args(["-c", "pass"]).status();
    if !python.is_ok_and(|s| s.success()) {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let p = project(&[]);
    write_manifest(p.path(), "byo-slurm", LOGGED);
    let log = p.path().join("experiments/ran.log");
    std::fs::write(p.path().join("experiments/mm1_logged.py"), LOGGED_PY).unwrap();
    let lines = || -> Vec<String> {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let mut v: Vec<String> = text.lines().map(str::to_string).collect();
        v.sort();
        v
    };
    ok(&repro(
        p.path(),
        &["check", "--quick", "--store", "local.sqlite"],
    ));
    assert_eq!(
        lines(),
        ["none 0.2", "none 0.4", "none 0.6", "none 0.8"],
        "the local run"
    );
    std::fs::remove_file(&log).unwrap();

    let pg = fresh_pg_db(&base, "byo");
    let out = ok(&repro(
        p.path(),
        &[
            "check",
            "--quick",
            "--executor",
            "slurm",
            "--workers",
            "2",
            "--store",
            &pg,
        ],
    ));
    let job = out
        .split("submitted Slurm job ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .unwrap_or_else(|| panic!("no Slurm job in {out}"));
    let (total, cached, run, failed) = summary(&out);
    assert_eq!((total, cached, run, failed), (8, 0, 8, 0), "{out}");
    // Each of the program's four tasks ran once, in the Slurm job.
    let expected: Vec<String> = ["0.2", "0.4", "0.6", "0.8"]
        .iter()
        .map(|l| format!("{job} {l}"))
        .collect();
    assert_eq!(lines(), expected, "{out}");
    assert_eq!(export(p.path(), &pg), export(p.path(), "local.sqlite"));
}
