//! Helpers: locate the binary, make a scratch project, run commands.
//! Run these tests with `cargo test --workspace` (the README command): it builds
//! `target/<profile>/repro` first; `cargo test -p tests` alone may drive a stale binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `target/<profile>/repro`, next to this test's own `deps/` folder.
pub fn repro_bin() -> PathBuf {
    if let Some(p) = option_env!("CARGO_BIN_EXE_repro") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = profile_dir.join(format!("repro{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} not found: run the tests with `cargo test --workspace` (it builds the binary)",
        bin.display()
    );
    bin
}

/// The repository's `experiments/` folder.
pub fn shipped_experiments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("experiments")
}

/// A scratch project folder with an `experiments/` holding the given shipped manifests.
pub fn project(manifests: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let exp = dir.path().join("experiments");
    std::fs::create_dir_all(&exp).unwrap();
    for m in manifests {
        std::fs::copy(
            shipped_experiments().join(format!("{m}.yaml")),
            exp.join(format!("{m}.yaml")),
        )
        .unwrap();
    }
    dir
}

pub fn write_manifest(dir: &Path, id: &str, text: &str) -> PathBuf {
    let p = dir.join("experiments").join(format!("{id}.yaml"));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

pub fn repro(dir: &Path, args: &[&str]) -> Output {
    Command::new(repro_bin())
        .args(args)
        .current_dir(dir)
        .env_remove("REPRO_STORE")
        .env_remove("RUST_LOG")
        .output()
        .expect("run repro")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts success and returns stderr (where the run summary goes).
pub fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        stdout(o),
        stderr(o)
    );
    stderr(o)
}

/// Asserts exit code 2 (bad input) and returns stderr.
pub fn refused(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(2),
        "stdout:\n{}\nstderr:\n{err}",
        stdout(o)
    );
    err
}

/// Parses "N tasks: C cached, R run (S saturated), F failed" from the summary line.
pub fn summary(stderr: &str) -> (usize, usize, usize, usize) {
    let line = stderr
        .lines()
        .find(|l| l.contains(" tasks: "))
        .unwrap_or_else(|| panic!("no summary line in:\n{stderr}"));
    let before = |label: &str| -> usize {
        let i = line
            .find(label)
            .unwrap_or_else(|| panic!("no `{label}` in {line}"));
        line[..i]
            .split_whitespace()
            .last()
            .unwrap()
            .trim_start_matches('(')
            .parse()
            .unwrap()
    };
    (
        before(" tasks:"),
        before(" cached"),
        before(" run"),
        before(" failed"),
    )
}

/// The PostgreSQL server of the tests (`REPRO_TEST_POSTGRES`), or `None`
/// with a line saying what was skipped.
pub fn pg_base_or_skip(what: &str) -> Option<String> {
    match std::env::var("REPRO_TEST_POSTGRES") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            eprintln!(
                "{what}: REPRO_TEST_POSTGRES is not set (start a throwaway server with \
                 `eval \"$(ci/services/postgres.sh up)\"`; .ci/run does)"
            );
            None
        }
    }
}

pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A fresh database on the test server; returns its URL.
pub fn fresh_pg_db(base: &str, tag: &str) -> String {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let name = format!(
        "repro_t_{tag}_{}_{}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    rt().block_on(async {
        use sqlx::Connection;
        let mut c = sqlx::PgConnection::connect(base)
            .await
            .expect("connect to REPRO_TEST_POSTGRES");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name}"
        )))
        .execute(&mut c)
        .await
        .unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut c)
            .await
            .unwrap();
        c.close().await.ok();
    });
    let (prefix, _) = base.rsplit_once('/').expect("URL with a database");
    format!("{prefix}/{name}")
}
