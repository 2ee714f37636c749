//! Reading commands on a store the user may not write (issue 11, item 7): a
//! results database on a read-only share, or downloaded with a paper.
//!
//! The store file is made read-only (0444) in a read-only folder (0555). Root
//! ignores permission bits, so under root (as in CI) the commands run as the
//! unprivileged user `nobody` (uid/gid 65534), which the bits do bind.

mod common;
use common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output};

const SMALL: &str = r#"
id: small
title: small credit study
version: 1
params: { lambda: 5.0, mu1: 6.0, mu2: 8.0, n: 4 }
sweep: { m: [2, 3, 4] }
series:
  model: { solver: credit.ctmc, label: model }
  sim:
    solver: credit.sim
    params: { batch_len: 2000, warmup: 500, batches: 5 }
compare:
  - { metric: L1, reference: sim, candidate: model, tolerance: 0.5 }
figures:
  - { id: small-L1, title: "L1", x: m, y: L1, series: [model, sim] }
tables:
  - { id: small-em, kind: error-measures }
"#;

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Runs repro in `dir`, as `nobody` when the test runs as root.
fn repro_unprivileged(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(repro_bin());
    c.args(args)
        .current_dir(dir)
        .env_remove("REPRO_STORE")
        .env_remove("RUST_LOG");
    // A folder this process created belongs to its effective user.
    if std::fs::metadata(dir).unwrap().uid() == 0 {
        c.uid(65534).gid(65534);
    }
    c.output().expect("run repro")
}

#[test]
fn reading_commands_work_on_a_read_only_store() {
    let p = tempfile::tempdir().unwrap();
    write_manifest(p.path(), "small", SMALL);
    ok(&repro(p.path(), &["run"]));
    let original = stdout(&ok_out(repro(p.path(), &["export", "--format", "csv"])));
    assert!(original.lines().count() > 10, "{original}");

    // A read-only copy: file 0444 in a folder 0555, no -wal or -shm beside it.
    let shelf = p.path().join("shelf");
    std::fs::create_dir(&shelf).unwrap();
    let db = shelf.join("repro.sqlite");
    std::fs::copy(p.path().join("results/repro.sqlite"), &db).unwrap();
    let bytes = std::fs::read(&db).unwrap();
    chmod(&db, 0o444);
    chmod(&shelf, 0o555);
    // Where the unprivileged user may write its figures, and reach everything.
    let out = p.path().join("out");
    std::fs::create_dir(&out).unwrap();
    chmod(&out, 0o777);
    chmod(p.path(), 0o755);
    let store = db.to_str().unwrap();

    let export = repro_unprivileged(p.path(), &["export", "--format", "csv", "--store", store]);
    assert_eq!(stdout(&ok_out(export)), original);

    let list = ok_out(repro_unprivileged(p.path(), &["list", "--store", store]));
    assert!(stdout(&list).contains("6/6"), "{}", stdout(&list));

    let compare = ok_out(repro_unprivileged(
        p.path(),
        &["compare", "small", "small@1", "--store", store],
    ));
    assert!(stdout(&compare).contains("L1"), "{}", stdout(&compare));

    ok(&repro_unprivileged(
        p.path(),
        &[
            "report",
            "--store",
            store,
            "--results",
            out.to_str().unwrap(),
        ],
    ));
    assert!(out.join("index.html").is_file());
    assert!(out.join("figures/small-L1.png").is_file());

    // Nothing was written next to the store, and the store is unchanged.
    let beside: Vec<_> = std::fs::read_dir(&shelf)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(beside, vec![std::ffi::OsString::from("repro.sqlite")]);
    assert_eq!(std::fs::read(&db).unwrap(), bytes);

    // A writing command on it fails with a clear open error, not a panic.
    let run = repro_unprivileged(p.path(), &["run", "--store", store]);
    assert!(!run.status.success());
    assert!(stderr(&run).contains("repro.sqlite"), "{}", stderr(&run));

    chmod(&shelf, 0o755);
}

fn ok_out(o: Output) -> Output {
    ok(&o);
    o
}

/// A store written by an older repro (schema 4: the store crate's
/// fixture, written by main fe57107's binary).
const STORE_V4: &str = include_str!("../../store/tests/fixtures/store-v4.sql");

/// The schema version stored in the SQLite file `db`.
fn schema_of(db: &Path) -> String {
    rt().block_on(async {
        use sqlx::{ConnectOptions, Connection};
        let mut c = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(db)
            .read_only(true)
            .connect()
            .await
            .unwrap();
        let v: String = sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
            .fetch_one(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
        v
    })
}

#[test]
fn an_older_store_is_upgraded_by_a_reading_command_only_where_it_can_be_written() {
    let p = tempfile::tempdir().unwrap();
    let db = p.path().join("old.sqlite");
    rt().block_on(async {
        use sqlx::{ConnectOptions, Connection};
        let mut c = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&db)
            .create_if_missing(true)
            .connect()
            .await
            .unwrap();
        sqlx::raw_sql(sqlx::AssertSqlSafe(STORE_V4))
            .execute(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
    });
    assert_eq!(schema_of(&db), "4");

    // A read-only copy (file 0444 in a folder 0555): refused, saying why,
    // and left as it was.
    let shelf = p.path().join("shelf");
    std::fs::create_dir(&shelf).unwrap();
    let ro = shelf.join("repro.sqlite");
    std::fs::copy(&db, &ro).unwrap();
    let bytes = std::fs::read(&ro).unwrap();
    chmod(&ro, 0o444);
    chmod(&shelf, 0o555);
    chmod(p.path(), 0o755);
    let status = repro_unprivileged(p.path(), &["status", "--store", ro.to_str().unwrap()]);
    assert_eq!(status.status.code(), Some(2), "{}", stderr(&status));
    assert!(
        stderr(&status).contains("schema version 4")
            && stderr(&status).contains("cannot be written"),
        "{}",
        stderr(&status)
    );
    assert_eq!(std::fs::read(&ro).unwrap(), bytes);
    chmod(&shelf, 0o755);

    // The writable one: upgraded once by the first reading command, which
    // goes on reading.
    let store = db.to_str().unwrap();
    let status = ok_out(repro(p.path(), &["status", "--store", store]));
    assert!(stdout(&status).contains("5 done"), "{}", stdout(&status));
    assert_eq!(schema_of(&db), "5");
    let export = ok_out(repro(
        p.path(),
        &["export", "--quick", "--format", "csv", "--store", store],
    ));
    // 172 metrics, one row each, and the header.
    assert_eq!(stdout(&export).lines().count(), 173, "{}", stdout(&export));
}
