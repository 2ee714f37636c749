//! Migrating a store written by an older binary (schema 4, before the
//! integer task ids of schema 5): it opens, migrates once, and reads back
//! what the older binary stored, on SQLite and (with `REPRO_TEST_POSTGRES`)
//! on PostgreSQL.
//!
//! `fixtures/store-v4.sql` is a store written by `repro run --quick` of the
//! binary of main fe57107 (schema 4): `lib-gege1n` run locally, then
//! `wu-3.2-opt` through the queue executor (so it has queue rows, series
//! and two runs), dumped as SQL text.

mod common;

use std::collections::BTreeMap;

use common::path_str;
use store::*;

const FIXTURE: &str = include_str!("fixtures/store-v4.sql");

/// What a schema-4 store holds, read with the schema-4 tables' own columns.
#[derive(Debug, Default, PartialEq)]
struct Old {
    tasks: BTreeMap<String, TaskRecord>,
    /// Run id -> its task keys, sorted.
    run_tasks: BTreeMap<i64, Vec<String>>,
    /// Experiment, version -> plan rows.
    plan: BTreeMap<(String, i64), Vec<PlanRow>>,
    /// Queue rows by key: (key, spec, state, run, worker, lease, attempts, started, error).
    queue: Vec<QueueRow>,
}

type TaskTuple = (
    String,
    String,
    i64,
    String,
    i64,
    String,
    String,
    f64,
    Option<String>,
);
type QueueTuple = (
    String,
    String,
    String,
    i64,
    Option<String>,
    Option<i64>,
    i64,
    Option<String>,
    Option<String>,
    f64,
);

/// Reads a schema-4 store through `$conn` (either backend), with the
/// queries of schema 4, sorted in Rust (byte order of the text).
macro_rules! read_old {
    ($conn:expr) => {{
        let c = $conn;
        let mut old = Old::default();
        let tasks: Vec<TaskTuple> = sqlx::query_as(
            "SELECT key, solver, solver_version, params, seed, fidelity, status, wall_ms, error \
             FROM tasks",
        )
        .fetch_all(&mut *c)
        .await
        .unwrap();
        for (key, solver, solver_version, params, seed, fidelity, status, wall_ms, error) in tasks {
            old.tasks.insert(
                key.clone(),
                TaskRecord {
                    key,
                    solver,
                    solver_version,
                    params,
                    seed,
                    fidelity,
                    status: status.parse().unwrap(),
                    wall_ms,
                    error,
                    metrics: vec![],
                    series: vec![],
                },
            );
        }
        let metrics: Vec<(String, String, f64, Option<f64>, Option<i64>)> =
            sqlx::query_as("SELECT task_key, name, value, half_width, n FROM metrics")
                .fetch_all(&mut *c)
                .await
                .unwrap();
        for (key, name, value, half_width, n) in metrics {
            old.tasks.get_mut(&key).unwrap().metrics.push(MetricRow {
                name,
                value,
                half_width,
                n,
            });
        }
        let series: Vec<(String, String, f64, f64)> =
            sqlx::query_as("SELECT task_key, name, x, y FROM series ORDER BY idx")
                .fetch_all(&mut *c)
                .await
                .unwrap();
        for (key, name, x, y) in series {
            old.tasks
                .get_mut(&key)
                .unwrap()
                .series
                .push(SeriesPointRow { name, x, y });
        }
        for t in old.tasks.values_mut() {
            t.metrics.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let links: Vec<(i64, String)> = sqlx::query_as("SELECT run_id, task_key FROM run_tasks")
            .fetch_all(&mut *c)
            .await
            .unwrap();
        for (run, key) in links {
            old.run_tasks.entry(run).or_default().push(key);
        }
        for keys in old.run_tasks.values_mut() {
            keys.sort();
        }
        let plan: Vec<(String, i64, String, i64, String, i64, String)> = sqlx::query_as(
            "SELECT experiment, version, point, point_index, series, replication, task_key \
             FROM plan",
        )
        .fetch_all(&mut *c)
        .await
        .unwrap();
        for (experiment, version, point, point_index, series, replication, task_key) in plan {
            old.plan
                .entry((experiment.clone(), version))
                .or_default()
                .push(PlanRow {
                    experiment,
                    version,
                    point,
                    point_index,
                    series,
                    replication,
                    task_key,
                });
        }
        for rows in old.plan.values_mut() {
            rows.sort_by(|a, b| {
                (a.point_index, &a.series, a.replication).cmp(&(
                    b.point_index,
                    &b.series,
                    b.replication,
                ))
            });
        }
        let mut queue: Vec<QueueTuple> = sqlx::query_as(
            "SELECT task_key, spec, state, run_id, worker, lease_until, attempts, started, error, \
               priority FROM queue",
        )
        .fetch_all(&mut *c)
        .await
        .unwrap();
        queue.sort_by(|a, b| b.9.total_cmp(&a.9).then_with(|| a.0.cmp(&b.0)));
        old.queue = queue
            .into_iter()
            .map(|t| QueueRow {
                task_key: t.0,
                spec: t.1,
                state: t.2.parse().unwrap(),
                run_id: t.3,
                worker: t.4,
                lease_until: t.5,
                attempts: t.6,
                started: t.7,
                error: t.8,
            })
            .collect();
        old
    }};
}

/// The same through the store's API (the current schema).
async fn read_new(s: &Store, old: &Old) -> Old {
    let keys: Vec<String> = old.tasks.keys().cloned().collect();
    let mut new = Old::default();
    for t in s.tasks(&keys).await.unwrap() {
        new.tasks.insert(t.key.clone(), t);
    }
    for &run in old.run_tasks.keys() {
        new.run_tasks
            .insert(run, s.run_task_keys(run).await.unwrap());
    }
    for (experiment, version) in old.plan.keys() {
        new.plan.insert(
            (experiment.clone(), *version),
            s.plan(experiment, *version).await.unwrap(),
        );
    }
    new.queue = s
        .queue_rows(&[
            QueueState::Pending,
            QueueState::Running,
            QueueState::Done,
            QueueState::Failed,
        ])
        .await
        .unwrap();
    // The lighter reads agree with the full one.
    let light = s.tasks_without_series(&keys).await.unwrap();
    assert_eq!(light.len(), new.tasks.len());
    for t in light {
        let full = &new.tasks[&t.key];
        assert_eq!((&t.metrics, t.series.len()), (&full.metrics, 0));
    }
    new
}

/// The fixture's content: 29 tasks (24 of `lib-gege1n`, 5 of `wu-3.2-opt`),
/// their metrics and series, two runs, two plans and five queue rows.
fn check_fixture_counts(old: &Old) {
    assert_eq!(old.tasks.len(), 29);
    let metrics: usize = old.tasks.values().map(|t| t.metrics.len()).sum();
    let series: usize = old.tasks.values().map(|t| t.series.len()).sum();
    assert_eq!((metrics, series), (172, 156));
    assert_eq!(old.run_tasks.values().map(Vec::len).sum::<usize>(), 29);
    assert_eq!(old.run_tasks.len(), 2);
    assert_eq!(old.plan.values().map(Vec::len).sum::<usize>(), 29);
    assert_eq!(old.queue.len(), 5);
}

/// Applied migrations and the stored schema version.
macro_rules! versions {
    ($conn:expr) => {{
        let c = $conn;
        let applied: Vec<i64> =
            sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
                .fetch_all(&mut *c)
                .await
                .unwrap();
        let stored: String =
            sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
                .fetch_one(&mut *c)
                .await
                .unwrap();
        (applied, stored)
    }};
}

/// After the migration: a task recorded again keeps its id, a new one gets
/// the next, and both read back as written.
async fn write_after_migrating(s: &Store, old: &Old) {
    let run = s.begin_run("test", "host", "migrate").await.unwrap();
    let mut again = old.tasks.values().next().unwrap().clone();
    again.wall_ms += 1.0;
    again.metrics.truncate(1);
    let mut fresh = common::task("a-key-stored-after-migrating", "done");
    fresh.series = vec![SeriesPointRow {
        name: "s".into(),
        x: 1.0,
        y: 2.0,
    }];
    s.record_task(run, &again).await.unwrap();
    s.record_task(run, &fresh).await.unwrap();
    let keys = vec![again.key.clone(), fresh.key.clone()];
    let back = s.tasks(&keys).await.unwrap();
    assert_eq!(
        back,
        vec![s.as_read_back(again.clone()), s.as_read_back(fresh)]
    );
    let mut linked = keys.clone();
    linked.sort();
    assert_eq!(s.run_task_keys(run).await.unwrap(), linked);
    // The other tasks are untouched.
    let others: Vec<String> = old.tasks.keys().skip(1).cloned().collect();
    let rest = s.tasks(&others).await.unwrap();
    assert_eq!(
        rest,
        old.tasks.values().skip(1).cloned().collect::<Vec<_>>()
    );
}

/// Writes the fixture into a new SQLite file at `path`; what it holds.
async fn sqlite_fixture(path: &str) -> Old {
    use sqlx::{ConnectOptions, Connection};
    let mut c = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .connect()
        .await
        .unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(FIXTURE))
        .execute(&mut c)
        .await
        .unwrap();
    let old = read_old!(&mut c);
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4], "4".to_string()));
    c.close().await.unwrap();
    check_fixture_counts(&old);
    old
}

/// Pages of the file and free pages among them.
async fn pages(path: &str) -> (i64, i64) {
    use sqlx::{ConnectOptions, Connection};
    let mut c = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .connect()
        .await
        .unwrap();
    let n: i64 = sqlx::query_scalar("PRAGMA page_count")
        .fetch_one(&mut c)
        .await
        .unwrap();
    let free: i64 = sqlx::query_scalar("PRAGMA freelist_count")
        .fetch_one(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();
    (n, free)
}

#[tokio::test]
async fn a_schema_4_sqlite_store_migrates_once_and_reads_back_what_it_held() {
    use sqlx::{ConnectOptions, Connection};
    let dir = tempfile::tempdir().unwrap();
    let path = path_str(&dir.path().join("old.sqlite"));
    let options = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
    let old = sqlite_fixture(&path).await;
    let (old_pages, _) = pages(&path).await;

    // A reading open of a store it cannot write refuses it, saying why,
    // and leaves it as it was.
    match Store::open_read_only(&format!("sqlite://{path}?mode=ro")).await {
        Err(e @ StoreError::Open { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("schema version 4"), "{msg}");
            assert!(msg.contains("cannot be written"), "{msg}");
        }
        other => panic!("expected an open error, got {other:?}"),
    }
    let mut c = options.connect().await.unwrap();
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4], "4".to_string()));
    c.close().await.unwrap();

    let s = Store::open(&path).await.unwrap();
    assert_eq!(read_new(&s, &old).await, old);
    s.close().await;

    let mut c = options.connect().await.unwrap();
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4, 5], "5".to_string()));
    // Ids in the order the tasks were stored; no text key left in the
    // tables that refer to tasks.
    let ids: Vec<(i64, String)> = sqlx::query_as("SELECT id, key FROM tasks ORDER BY id")
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(ids.first().map(|r| r.0), Some(1));
    assert_eq!(ids.last().map(|r| r.0), Some(29));
    let broken: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM pragma_foreign_key_check")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(broken, 0);
    let text_keys: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM pragma_table_info('metrics') WHERE name = 'task_key'",
    )
    .fetch_one(&mut c)
    .await
    .unwrap();
    assert_eq!(text_keys, 0);
    c.close().await.unwrap();

    // Opened again: nothing left to migrate, the same answers, readable
    // by the reading commands.
    let s = Store::open(&path).await.unwrap();
    assert_eq!(read_new(&s, &old).await, old);
    s.close().await;
    let r = Store::open_read_only(&path).await.unwrap();
    assert_eq!(read_new(&r, &old).await, old);
    r.close().await;
    let mut c = options.connect().await.unwrap();
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4, 5], "5".to_string()));
    c.close().await.unwrap();

    // Compacted after the copy: no free pages, and no larger than the
    // schema-4 file.
    let (new_pages, free) = pages(&path).await;
    assert_eq!(free, 0);
    assert!(new_pages <= old_pages, "{new_pages} > {old_pages}");

    let s = Store::open(&path).await.unwrap();
    write_after_migrating(&s, &old).await;
    s.close().await;
}

#[tokio::test]
async fn a_reading_open_of_a_writable_schema_4_store_upgrades_it_first() {
    use sqlx::{ConnectOptions, Connection};
    let dir = tempfile::tempdir().unwrap();
    let path = path_str(&dir.path().join("old.sqlite"));
    let old = sqlite_fixture(&path).await;
    let r = Store::open_read_only(&path).await.unwrap();
    assert_eq!(read_new(&r, &old).await, old);
    // Read-only after the upgrade.
    assert!(r.begin_run("test", "host", "read").await.is_err());
    r.close().await;
    let mut c = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(&path)
        .connect()
        .await
        .unwrap();
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4, 5], "5".to_string()));
    c.close().await.unwrap();
    assert_eq!(pages(&path).await.1, 0);
}

#[tokio::test]
async fn a_schema_4_postgres_store_migrates_once_and_reads_back_what_it_held() {
    use sqlx::Connection;
    let Some(base) = std::env::var("REPRO_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!(
            "skipped: REPRO_TEST_POSTGRES is not set (start a throwaway server with \
             `eval \"$(ci/services/postgres.sh up)\"`; .ci/run does)"
        );
        return;
    };
    let name = format!("repro_t_migrate_{}", std::process::id());
    let mut c = sqlx::PgConnection::connect(&base).await.unwrap();
    for sql in [
        format!("DROP DATABASE IF EXISTS {name}"),
        format!("CREATE DATABASE {name}"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&mut c)
            .await
            .unwrap();
    }
    c.close().await.ok();
    let url = format!("{}/{name}", base.rsplit_once('/').unwrap().0);

    // A schema-4 store (the migrations an older binary ran), holding the
    // fixture's runs and task rows.
    let s = Store::open_at_schema(&url, 4).await.unwrap();
    s.close().await;
    let rows: String = FIXTURE
        .lines()
        .filter(|l| {
            [
                "runs",
                "tasks",
                "metrics",
                "series",
                "run_tasks",
                "\"plan\"",
                "queue",
            ]
            .iter()
            .any(|t| l.starts_with(&format!("INSERT INTO {t} VALUES(")))
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
    sqlx::raw_sql(sqlx::AssertSqlSafe(rows))
        .execute(&mut c)
        .await
        .unwrap();
    let old = read_old!(&mut c);
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4], "4".to_string()));
    c.close().await.unwrap();
    check_fixture_counts(&old);

    let s = Store::open(&url).await.unwrap();
    assert_eq!(read_new(&s, &old).await, old);
    s.close().await;
    let s = Store::open(&url).await.unwrap();
    assert_eq!(read_new(&s, &old).await, old);
    s.close().await;
    let r = Store::open_read_only(&url).await.unwrap();
    assert_eq!(read_new(&r, &old).await, old);
    r.close().await;
    let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
    assert_eq!(versions!(&mut c), (vec![1, 2, 3, 4, 5], "5".to_string()));
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM tasks ORDER BY id")
        .fetch_all(&mut c)
        .await
        .unwrap();
    assert_eq!(ids, (1..=29).collect::<Vec<i64>>());
    // The copies carry the names tables created under their own name have.
    let names: Vec<String> = sqlx::query_scalar(
        "SELECT conname::text FROM pg_constraint WHERE conname LIKE '%v5%' \
         UNION ALL SELECT relname::text FROM pg_class WHERE relname LIKE '%v5%'",
    )
    .fetch_all(&mut c)
    .await
    .unwrap();
    assert!(names.is_empty(), "{names:?}");
    // The runs' ids were inserted as they were: begin_run's identity
    // continues after them.
    sqlx::query("SELECT setval(pg_get_serial_sequence('runs', 'id'), 2)")
        .execute(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();

    let s = Store::open(&url).await.unwrap();
    write_after_migrating(&s, &old).await;
    s.close().await;
}
