//! Opening a result store: schema versions, unusable locations, read-only
//! folders, in-memory stores and several openers at once.

mod common;

use common::{path_str, task};
use store::*;

#[tokio::test]
async fn newer_schema_is_refused_before_migrating() {
    let dir = tempfile::tempdir().unwrap();
    let path = path_str(&dir.path().join("repro.sqlite"));
    Store::open(&path).await.unwrap().close().await;

    // A newer binary would have bumped the version; simulate that with raw SQL.
    {
        use sqlx::Connection;
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{path}"))
            .await
            .unwrap();
        sqlx::query("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
            .execute(&mut conn)
            .await
            .unwrap();
        conn.close().await.unwrap();
    }
    match Store::open(&path).await {
        Err(e @ StoreError::TooNew { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&path), "{msg}");
            assert!(
                msg.contains("99") && msg.contains(&SCHEMA_VERSION.to_string()),
                "{msg}"
            );
            let StoreError::TooNew {
                found, supported, ..
            } = e
            else {
                unreachable!()
            };
            assert_eq!((found, supported), (99, SCHEMA_VERSION));
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
}

#[tokio::test]
async fn unusable_locations_are_open_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "not a directory").unwrap();

    let cases = [
        // Parent is a regular file.
        path_str(&file.join("repro.sqlite")),
        // The location is a directory.
        path_str(dir.path()),
        // A file that is not a database.
        path_str(&file),
        String::new(),
        "mysql://localhost/repro".to_string(),
    ];
    for loc in &cases {
        match Store::open(loc).await {
            Err(StoreError::Open { location, cause }) => {
                assert_eq!(&location, loc);
                assert!(!cause.to_string().is_empty());
            }
            other => panic!("{loc}: expected Open, got {other:?}"),
        }
    }

    // A refused connection (nothing listens on port 1) names the problem and the fix.
    match Store::open("postgres://repro@127.0.0.1:1/repro").await {
        Err(e @ StoreError::Open { .. }) => {
            let text = e.to_string();
            assert!(text.contains("cannot connect to PostgreSQL"), "{text}");
            assert!(text.contains("ci/services/postgres.sh up"), "{text}");
        }
        other => panic!("expected Open, got {other:?}"),
    }
    // A malformed URL is refused before any connection is tried.
    match Store::open("postgres://repro@127.0.0.1:notaport/repro").await {
        Err(e @ StoreError::Open { .. }) => {
            assert!(e.to_string().contains("invalid PostgreSQL URL"), "{e}")
        }
        other => panic!("expected Open, got {other:?}"),
    }
}

#[cfg(unix)]
#[tokio::test]
async fn read_only_directory_is_an_open_error() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Permission bits do not bind root: then there is nothing to test.
    if std::fs::write(ro.join("probe"), "x").is_ok() {
        eprintln!("skipped: running as a user that ignores permission bits");
        return;
    }
    let loc = path_str(&ro.join("sub/repro.sqlite"));
    assert!(matches!(
        Store::open(&loc).await,
        Err(StoreError::Open { .. })
    ));
    let loc = path_str(&ro.join("repro.sqlite"));
    assert!(matches!(
        Store::open(&loc).await,
        Err(StoreError::Open { .. })
    ));
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[tokio::test]
async fn in_memory_url_works_for_tests() {
    let s = Store::open("sqlite::memory:").await.unwrap();
    let run = s.begin_run("v", "h", "").await.unwrap();
    s.record_task(run, &task("k", "done")).await.unwrap();
    let s2 = s.clone();
    assert_eq!(s2.tasks(&["k".into()]).await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stores_created_by_several_openers_at_once_all_open() {
    // Two `repro run`s (or workers) starting on a store that does not exist
    // yet race through the first migration; neither may fail.
    for round in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let loc = path_str(&dir.path().join(format!("race{round}.sqlite")));
        let opens = (0..4).map(|_| {
            let loc = loc.clone();
            tokio::spawn(async move { Store::open(&loc).await })
        });
        for h in opens.collect::<Vec<_>>() {
            let s = h.await.unwrap().unwrap();
            s.close().await;
        }
    }
}

/// A write that meets another connection's lock is told apart from other
/// failures by its cause (SQLite's SQLITE_BUSY code), not by its message:
/// opening retries on it, a store that cannot be used is not retried.
#[tokio::test]
async fn a_locked_database_is_busy_by_its_code() {
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::{ConnectOptions, Connection};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repro.sqlite");
    Store::open(&path_str(&path)).await.unwrap().close().await;
    let options = SqliteConnectOptions::new().filename(&path);
    let mut holder = options.connect().await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut holder)
        .await
        .unwrap();
    // A second connection that does not wait for the lock.
    let mut other = options
        .clone()
        .busy_timeout(std::time::Duration::ZERO)
        .connect()
        .await
        .unwrap();
    let write = "INSERT INTO meta (key, value) VALUES ('probe', 'x')";
    let locked = sqlx::query(write).execute(&mut other).await.unwrap_err();
    let open = |e| StoreError::Open {
        location: path_str(&path),
        cause: OpenError::Database(e),
    };
    let locked = open(locked);
    assert!(locked.is_busy(), "{locked}");
    assert!(std::error::Error::source(&locked).is_some());
    let missing = sqlx::query("SELECT * FROM no_such_table")
        .execute(&mut other)
        .await
        .unwrap_err();
    assert!(!open(missing).is_busy());
    assert!(!StoreError::Invalid("x".into()).is_busy());
    other.close().await.unwrap();
    holder.close().await.unwrap();
}
