//! The result database of repro. SQLite (WAL) by default at `results/repro.sqlite`;
//! a `postgres://` URL selects PostgreSQL, for many machines writing at once.
//!
//! Architecture invariant: the store knows no solver. It stores tasks by key,
//! their metrics and series, which experiment points use which task, runs for
//! provenance, error measures, and the queue that pull-based workers claim
//! tasks from ([`queue`]). The pool type stays behind [`Store`]: callers see one
//! API whatever the backend.
//!
//! Implementation notes:
//! - Runtime queries only (`sqlx::query*`, [`sqlx::QueryBuilder`]); building never
//!   needs a database. Placeholders are spelled `$1, $2, ..`, which both SQLite and
//!   PostgreSQL accept, and upserts use `INSERT .. ON CONFLICT .. DO UPDATE`, so
//!   every statement is shared: each method body is written once and compiled
//!   for both pool types by the `on_pool!` macro.
//! - The schema lives in migrations embedded with `include_str!` and run by a
//!   runtime [`Migrator`] (no `sqlx::migrate!`, hence no sqlx `macros` feature,
//!   which compiled SQLite's C code a second time for the proc-macro; issue 12).
//!   SQLite and PostgreSQL have their own folders (`migrations/sqlite`,
//!   `migrations/postgres`) with the same tables and types. The stored
//!   `meta.schema_version` is checked *before* migrating, so an older binary
//!   never touches a store written by a newer one.
//! - Every write that must be atomic (one task with its metrics and series, one
//!   plan, one set of error measures) is one transaction. SQLite write
//!   transactions start with `BEGIN IMMEDIATE` so that concurrent writers queue on
//!   the busy timeout instead of failing on a read-to-write lock upgrade; on
//!   PostgreSQL, replacing an experiment's plan or error measures takes a
//!   transaction-scoped advisory lock on the experiment id, so two runs of one
//!   experiment serialise instead of colliding on its primary keys.
//! - Reading commands open the store with [`Store::open_read_only`]: no
//!   directory, file, WAL or migration is created, so a store on a read-only
//!   share (or a results database downloaded with a paper) can be browsed.
//! - Ordering of results is done in Rust where it involves text, so that it is
//!   byte order regardless of the database's collation.
//! - Timestamps are RFC 3339 UTC text with millisecond precision (see [`rfc3339_utc`]).

pub mod queue;

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{QueryBuilder, SqlSafeStr};

pub use queue::{now_ms, Claimed, Enqueue, QueueCounts, QueueRow, WorkerId, MAX_ATTEMPTS};

/// Schema version this binary understands. A store with a higher version is refused.
/// 2: the task queue.
pub const SCHEMA_VERSION: i64 = 2;

/// Bound on the number of keys bound into one `IN (..)` list.
const KEY_CHUNK: usize = 500;
/// Bound on the number of bind parameters of one multi-row `INSERT`
/// (SQLite allows 32766, PostgreSQL 65535; staying far below keeps statements small).
const MAX_BINDS: usize = 900;
/// How long a connection waits for another writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);
/// WAL allows many readers and one writer; a handful of connections suffices.
const MAX_CONNECTIONS: u32 = 8;
/// PostgreSQL: each process (a `repro run` or a worker) keeps a few
/// connections; hundreds of workers must stay under the server's
/// `max_connections` (100 by default).
const PG_MAX_CONNECTIONS: u32 = 4;
/// How long opening a PostgreSQL store waits for a connection.
const PG_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The migrations of one backend, embedded at compile time. Version and
/// description follow the file names (`0001_init.sql` -> 1, "init"), as
/// `sqlx::migrate!` named them, so stores created by earlier binaries (which
/// used that macro) see the same versions and checksums.
fn migrator(files: &[(i64, &'static str, &'static str)]) -> Migrator {
    Migrator::with_migrations(
        files
            .iter()
            .map(|&(version, description, sql)| {
                Migration::new(
                    version,
                    description.into(),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    )
}

fn sqlite_migrator() -> Migrator {
    migrator(&[
        (
            1,
            "init",
            include_str!("../migrations/sqlite/0001_init.sql"),
        ),
        (
            2,
            "queue",
            include_str!("../migrations/sqlite/0002_queue.sql"),
        ),
    ])
}

fn postgres_migrator() -> Migrator {
    migrator(&[
        (
            1,
            "init",
            include_str!("../migrations/postgres/0001_init.sql"),
        ),
        (
            2,
            "queue",
            include_str!("../migrations/postgres/0002_queue.sql"),
        ),
    ])
}

/// Runs `$body` with `$pool` bound to the backend's pool and `$DB` to its
/// database type, so one method body serves both backends.
macro_rules! on_pool {
    ($store:expr, |$pool:ident, $DB:ident| $body:expr) => {
        match &$store.backend {
            Backend::Sqlite($pool) => {
                #[allow(dead_code)]
                type $DB = sqlx::Sqlite;
                $body
            }
            Backend::Postgres($pool) => {
                #[allow(dead_code)]
                type $DB = sqlx::Postgres;
                $body
            }
        }
    };
}
pub(crate) use on_pool;

/// Appends `$n, $n+1, ..)` binding `keys` (the caller has written `IN (`).
macro_rules! push_keys {
    ($qb:ident, $keys:expr) => {{
        let mut list = $qb.separated(", ");
        for k in $keys {
            list.push_bind(k.as_str());
        }
        list.push_unseparated(")");
    }};
}
pub(crate) use push_keys;

/// How each backend starts a write transaction.
trait BeginWrite {
    type Db: sqlx::Database;
    /// Begins a write transaction; `lock` names an experiment whose plan or
    /// error measures the transaction replaces.
    async fn begin_write_tx(
        &self,
        lock: Option<&str>,
    ) -> Result<sqlx::Transaction<'static, Self::Db>>;
}

impl BeginWrite for SqlitePool {
    type Db = sqlx::Sqlite;
    async fn begin_write_tx(
        &self,
        _lock: Option<&str>,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        // Holds the database's write lock from the start: it serialises
        // writers, so no per-experiment lock is needed.
        self.begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(db("begin write transaction"))
    }
}

impl BeginWrite for PgPool {
    type Db = sqlx::Postgres;
    async fn begin_write_tx(
        &self,
        lock: Option<&str>,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>> {
        let mut tx = self.begin().await.map_err(db("begin write transaction"))?;
        if let Some(key) = lock {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
                .bind(key)
                .execute(&mut *tx)
                .await
                .map_err(db("lock experiment"))?;
        }
        Ok(tx)
    }
}

async fn begin_write<P: BeginWrite>(
    pool: &P,
    lock: Option<&str>,
) -> Result<sqlx::Transaction<'static, P::Db>> {
    pool.begin_write_tx(lock).await
}

/// Writes one task record (row, metrics, series, link to its run) inside
/// the open write transaction `$tx`; shared by [`Store::record_task`] and the
/// queue's completion, which must commit the result and the queue row together.
macro_rules! write_task {
    ($tx:ident, $DB:ident, $run:expr, $t:expr) => {{
        sqlx::query(
            "INSERT INTO tasks \
               (key, solver, solver_version, params, seed, fidelity, status, wall_ms, error, created) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) \
             ON CONFLICT (key) DO UPDATE SET \
               solver = excluded.solver, \
               solver_version = excluded.solver_version, \
               params = excluded.params, \
               seed = excluded.seed, \
               fidelity = excluded.fidelity, \
               status = excluded.status, \
               wall_ms = excluded.wall_ms, \
               error = excluded.error, \
               created = excluded.created",
        )
        .bind(&$t.key)
        .bind(&$t.solver)
        .bind($t.solver_version)
        .bind(&$t.params)
        .bind($t.seed)
        .bind(&$t.fidelity)
        .bind(&$t.status)
        .bind($t.wall_ms)
        .bind(&$t.error)
        .bind(now_rfc3339())
        .execute(&mut *$tx)
        .await
        .map_err(db("record task"))?;

        sqlx::query("DELETE FROM metrics WHERE task_key = $1")
            .bind(&$t.key)
            .execute(&mut *$tx)
            .await
            .map_err(db("delete old metrics"))?;
        sqlx::query("DELETE FROM series WHERE task_key = $1")
            .bind(&$t.key)
            .execute(&mut *$tx)
            .await
            .map_err(db("delete old series"))?;

        for chunk in $t.metrics.chunks(MAX_BINDS / 5) {
            let mut qb = QueryBuilder::<$DB>::new(
                "INSERT INTO metrics (task_key, name, value, half_width, n) ",
            );
            qb.push_values(chunk, |mut b, m| {
                b.push_bind($t.key.as_str())
                    .push_bind(m.name.as_str())
                    .push_bind(m.value)
                    .push_bind(m.half_width.filter(|h| !h.is_nan()))
                    .push_bind(m.n);
            });
            qb.build()
                .execute(&mut *$tx)
                .await
                .map_err(db("record metrics"))?;
        }

        for (c, chunk) in $t.series.chunks(MAX_BINDS / 5).enumerate() {
            let base = c * (MAX_BINDS / 5);
            let mut qb =
                QueryBuilder::<$DB>::new("INSERT INTO series (task_key, idx, name, x, y) ");
            qb.push_values(chunk.iter().enumerate(), |mut b, (i, p)| {
                b.push_bind($t.key.as_str())
                    .push_bind((base + i) as i64)
                    .push_bind(p.name.as_str())
                    .push_bind(p.x)
                    .push_bind(p.y);
            });
            qb.build()
                .execute(&mut *$tx)
                .await
                .map_err(db("record series"))?;
        }

        sqlx::query(
            "INSERT INTO run_tasks (run_id, task_key) VALUES ($1, $2) \
             ON CONFLICT (run_id, task_key) DO NOTHING",
        )
        .bind($run)
        .bind(&$t.key)
        .execute(&mut *$tx)
        .await
        .map_err(|e| StoreError::Db(format!("link task {} to run {}: {e}", $t.key, $run)))?;
    }};
}
pub(crate) use write_task;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the result store at {location}: {reason}")]
    Open { location: String, reason: String },
    #[error("the result store at {location} has schema version {found}, newer than this binary understands ({supported}); upgrade repro or use another --store")]
    TooNew {
        location: String,
        found: i64,
        supported: i64,
    },
    #[error("database error: {0}")]
    Db(String),
}
pub type Result<T> = std::result::Result<T, StoreError>;

/// One experiment version as loaded from its manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentRow {
    pub id: String,
    pub version: i64,
    pub title: String,
    /// Hex SHA-256 of the manifest text.
    pub manifest_hash: String,
    pub manifest_text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    pub name: String,
    pub value: f64,
    pub half_width: Option<f64>,
    pub n: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPointRow {
    pub name: String,
    pub x: f64,
    pub y: f64,
}

/// Task outcome status as stored: "done", "saturated", "undefined" (the model
/// is not defined at that point; the reason is in `error`) or "failed".
/// "done", "saturated" and "undefined" tasks count as cached (see
/// [`Store::cached_keys`]): being undefined is a property of the parameters, so
/// rerunning would give the same answer. Only "failed" tasks run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub key: String,
    pub solver: String,
    pub solver_version: i64,
    /// Canonical JSON of the parameters.
    pub params: String,
    pub seed: i64,
    /// "quick" or "full" (analytic tasks: "any").
    pub fidelity: String,
    pub status: String,
    pub wall_ms: f64,
    pub error: Option<String>,
    pub metrics: Vec<MetricRow>,
    pub series: Vec<SeriesPointRow>,
}

/// Which task serves which point of which series of an experiment version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRow {
    pub experiment: String,
    pub version: i64,
    /// Canonical JSON object of the sweep-axis values of the point.
    pub point: String,
    /// Index of the point in sweep order (for stable ordering).
    pub point_index: i64,
    pub series: String,
    pub replication: i64,
    pub task_key: String,
}

/// One run of `repro run/check` for provenance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub id: i64,
    pub started: String,
    pub finished: Option<String>,
    pub code_version: String,
    pub host: String,
    pub args: String,
    pub status: String,
}

/// One error measure per compared point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorMeasureRow {
    pub experiment: String,
    pub version: i64,
    pub metric: String,
    pub reference: String,
    pub candidate: String,
    pub point: String,
    pub point_index: i64,
    pub reference_value: Option<f64>,
    pub reference_half_width: Option<f64>,
    pub candidate_value: Option<f64>,
    pub em: Option<f64>,
    pub tolerance: Option<f64>,
    /// "pass", "fail", "inconclusive" or "unchecked" (no tolerance).
    pub verdict: String,
}

/// Handle on the result database.
///
/// Cheap to clone: clones share one connection pool, so a `Store` can be handed
/// to many tokio tasks that write concurrently. [`Store::close`] on any clone
/// closes the shared pool.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    location: String,
}

#[derive(Clone)]
enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

/// Wraps a sqlx error with what the store was doing.
fn db(context: &'static str) -> impl FnOnce(sqlx::Error) -> StoreError {
    move |e| StoreError::Db(format!("{context}: {e}"))
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

type RunTuple = (i64, String, Option<String>, String, String, String, String);
type MetricTuple = (String, String, f64, Option<f64>, Option<i64>);

type EmTuple = (
    String,
    String,
    String,
    String,
    i64,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    Option<f64>,
    String,
);

/// What a store location names.
enum Location {
    Sqlite(SqliteConnectOptions),
    Postgres(PgConnectOptions),
}

impl Location {
    /// [`Location::parse_url`] with sqlx's "slow statement" warnings moved
    /// to debug: reading a large figure's series takes seconds by design,
    /// and a WARN line in the middle of a normal `repro run` reads as a fault.
    fn parse(location: &str) -> std::result::Result<Location, String> {
        use sqlx::ConnectOptions;
        let (level, after) = (log::LevelFilter::Debug, std::time::Duration::from_secs(1));
        Ok(match Self::parse_url(location)? {
            Location::Sqlite(o) => Location::Sqlite(o.log_slow_statements(level, after)),
            Location::Postgres(o) => Location::Postgres(o.log_slow_statements(level, after)),
        })
    }

    fn parse_url(location: &str) -> std::result::Result<Location, String> {
        let lower = location.to_ascii_lowercase();
        if location.trim().is_empty() {
            return Err("empty location".into());
        }
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            return PgConnectOptions::from_str(location)
                .map(Location::Postgres)
                .map_err(|e| {
                    format!(
                        "invalid PostgreSQL URL ({e}); expected \
                         postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
                    )
                });
        }
        if lower.starts_with("sqlite:") {
            return SqliteConnectOptions::from_str(location)
                .map(Location::Sqlite)
                .map_err(|e| format!("invalid SQLite URL: {e}"));
        }
        if location.contains("://") {
            return Err("unsupported URL scheme; use a file path, sqlite:// or postgres://".into());
        }
        Ok(Location::Sqlite(
            SqliteConnectOptions::new().filename(location),
        ))
    }
}

/// Explains a failed PostgreSQL connection with the usual fix.
fn pg_connect_error(e: sqlx::Error) -> String {
    let text = e.to_string();
    let hint = match &e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => {
            "is the server running and listening there? (a throwaway one for tests: \
             `ci/services/postgres.sh up`)"
        }
        sqlx::Error::Database(d) if d.code().as_deref() == Some("3D000") => {
            "create the database first (`createdb NAME`) or fix the URL's database name"
        }
        sqlx::Error::Database(d)
            if matches!(d.code().as_deref(), Some("28P01") | Some("28000")) =>
        {
            "check the user and password in the URL (or PGPASSWORD)"
        }
        _ => "check the URL",
    };
    format!("cannot connect to PostgreSQL: {text}; {hint}")
}

impl Store {
    /// Opens (creating if needed) the store. `location` is a file path, a
    /// `sqlite://` URL or a `postgres://` URL. For SQLite: creates parent
    /// directories, sets WAL + busy timeout. Then checks the schema version
    /// (refusing a newer one) and runs the embedded migrations.
    /// `sqlite::memory:` gives a private in-memory store (handy in tests) that
    /// lives until [`Store::close`].
    ///
    /// Every failure before the store is usable is [`StoreError::Open`], except a
    /// store written by a newer binary, which is [`StoreError::TooNew`].
    pub async fn open(location: &str) -> Result<Store> {
        Self::open_with(location, false).await
    }

    /// Opens an existing store for reading only: nothing is created or
    /// migrated, and no write is attempted (SQLite: `mode=ro`, and if even the
    /// WAL's shared-memory file cannot be created, as on a read-only share,
    /// `immutable=1`; PostgreSQL: read-only transactions). Writing methods then
    /// fail with [`StoreError::Db`]. A store of an older schema can be read; a
    /// newer one is refused like in [`Store::open`].
    pub async fn open_read_only(location: &str) -> Result<Store> {
        Self::open_with(location, true).await
    }

    async fn open_with(location: &str, read_only: bool) -> Result<Store> {
        // Openers racing to create one SQLite store can meet SQLITE_BUSY where
        // SQLite does not call the busy handler (switching a new file to WAL,
        // recovering its WAL index). Such an open is tried again a few times.
        let mut attempt = 0u64;
        loop {
            match Self::open_once(location, read_only).await {
                Err(StoreError::Open { reason, .. })
                    if attempt < 8 && reason.contains("database is locked") =>
                {
                    attempt += 1;
                    tracing::debug!(location, attempt, "store locked while opening, retrying");
                    tokio::time::sleep(Duration::from_millis(25 * attempt * attempt)).await;
                }
                other => return other,
            }
        }
    }

    async fn open_once(location: &str, read_only: bool) -> Result<Store> {
        let open_err = |reason: String| StoreError::Open {
            location: location.to_string(),
            reason,
        };
        let backend = match Location::parse(location).map_err(open_err)? {
            Location::Sqlite(options) => {
                Backend::Sqlite(Self::connect_sqlite(location, options, read_only).await?)
            }
            Location::Postgres(options) => {
                let options = if read_only {
                    options.options([("default_transaction_read_only", "on")])
                } else {
                    options
                }
                .application_name("repro");
                // One direct connection first: the pool retries a refused
                // connection until its timeout, this fails at once and clearly.
                let probe = sqlx::ConnectOptions::connect(&options)
                    .await
                    .map_err(|e| open_err(pg_connect_error(e)))?;
                sqlx::Connection::close(probe).await.ok();
                let pool = PgPoolOptions::new()
                    .max_connections(PG_MAX_CONNECTIONS)
                    .acquire_timeout(PG_CONNECT_TIMEOUT)
                    .connect_with(options)
                    .await
                    .map_err(|e| open_err(pg_connect_error(e)))?;
                Backend::Postgres(pool)
            }
        };
        let store = Store {
            backend,
            location: location.to_string(),
        };
        if let Err(e) = store.prepare(read_only).await {
            store.close().await;
            return Err(e);
        }
        tracing::debug!(location, read_only, "opened result store");
        Ok(store)
    }

    async fn connect_sqlite(
        location: &str,
        options: SqliteConnectOptions,
        read_only: bool,
    ) -> Result<SqlitePool> {
        let open_err = |reason: String| StoreError::Open {
            location: location.to_string(),
            reason,
        };
        let lower = location.to_ascii_lowercase();
        let in_memory = lower.contains(":memory:") || lower.contains("mode=memory");
        let file = options.get_filename().to_path_buf();
        if file.is_dir() {
            return Err(open_err(format!("{} is a directory", file.display())));
        }
        let mut pool_options = SqlitePoolOptions::new().max_connections(MAX_CONNECTIONS);
        if in_memory {
            // An in-memory database lives only while a connection to it is open.
            pool_options = pool_options
                .min_connections(1)
                .idle_timeout(None)
                .max_lifetime(None);
        }
        if read_only {
            if !in_memory && !file.is_file() {
                return Err(open_err(format!("no store file at {}", file.display())));
            }
            // The journal mode is left as the file has it: setting it writes.
            let options = options
                .read_only(true)
                .create_if_missing(false)
                .busy_timeout(BUSY_TIMEOUT);
            let pool = pool_options
                .clone()
                .connect_with(options.clone())
                .await
                .map_err(|e| open_err(e.to_string()))?;
            // A WAL store needs its `-shm` file even to read; where it cannot be
            // created (read-only folder) SQLite refuses the first query. Such a
            // store has no live writer, so reading it as immutable is exact.
            let probe: std::result::Result<i64, _> =
                sqlx::query_scalar("SELECT count(*) FROM sqlite_master")
                    .fetch_one(&pool)
                    .await;
            if probe.is_ok() {
                return Ok(pool);
            }
            pool.close().await;
            return pool_options
                .connect_with(options.immutable(true))
                .await
                .map_err(|e| open_err(e.to_string()));
        }
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(BUSY_TIMEOUT)
            // Up to 64 MiB of page cache (default 2 MiB): a plan at the task
            // limit (10^6 rows and their index) otherwise spills pages to the
            // WAL and reads them back many times within its transaction.
            .pragma("cache_size", "-65536")
            .foreign_keys(true);
        if let Some(parent) = file.parent() {
            if !parent.as_os_str().is_empty() && !in_memory {
                std::fs::create_dir_all(parent).map_err(|e| {
                    open_err(format!("cannot create directory {}: {e}", parent.display()))
                })?;
            }
        }
        pool_options
            .connect_with(options)
            .await
            .map_err(|e| open_err(e.to_string()))
    }

    /// Checks the stored schema version, then (unless `read_only`) migrates.
    async fn prepare(&self, read_only: bool) -> Result<()> {
        let open_err = |reason: String| StoreError::Open {
            location: self.location.clone(),
            reason,
        };
        let has_meta: bool = match &self.backend {
            Backend::Sqlite(pool) => sqlx::query_scalar::<_, String>(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            )
            .fetch_optional(pool)
            .await
            .map_err(|e| open_err(e.to_string()))?
            .is_some(),
            Backend::Postgres(pool) => sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = 'meta')",
            )
            .fetch_one(pool)
            .await
            .map_err(|e| open_err(e.to_string()))?,
        };
        let mut found = None;
        if has_meta {
            let stored: Option<String> = on_pool!(self, |pool, DB| {
                sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
                    .fetch_optional(pool)
                    .await
                    .map_err(|e| open_err(format!("cannot read the schema version: {e}")))?
            });
            if let Some(stored) = stored {
                let v: i64 = stored.trim().parse().map_err(|_| {
                    open_err(format!("schema version {stored:?} is not an integer"))
                })?;
                if v > SCHEMA_VERSION {
                    return Err(StoreError::TooNew {
                        location: self.location.clone(),
                        found: v,
                        supported: SCHEMA_VERSION,
                    });
                }
                found = Some(v);
            }
        }
        if read_only {
            // Versions 1 and later hold every table the reading commands use.
            return match found {
                Some(_) => Ok(()),
                None => Err(open_err(
                    "not a repro result store (no schema version); run `repro run` first".into(),
                )),
            };
        }
        match &self.backend {
            Backend::Sqlite(pool) => {
                // sqlx takes no lock around SQLite migrations, so two processes
                // creating one store at once can both try migration 1; the
                // loser's transaction rolls back, and once the winner has
                // committed a retry finds nothing left to do.
                let migrator = sqlite_migrator();
                let mut attempt = 0;
                loop {
                    match migrator.run(pool).await {
                        Ok(()) => break,
                        Err(e) if attempt >= 4 => {
                            return Err(open_err(format!("migration failed: {e}")))
                        }
                        Err(e) => {
                            tracing::debug!("migration attempt {attempt} failed, retrying: {e}");
                            attempt += 1;
                            tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
                        }
                    }
                }
            }
            // PostgreSQL: the migrator holds an advisory lock while it runs.
            Backend::Postgres(pool) => postgres_migrator()
                .run(pool)
                .await
                .map_err(|e| open_err(format!("migration failed: {e}")))?,
        }
        Ok(())
    }

    /// Closes the connection pool (SQLite: checkpointing the WAL). Waits for
    /// clones' connections in use to be returned.
    pub async fn close(self) {
        on_pool!(self, |pool, DB| pool.close().await)
    }

    /// The location this store was opened with.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Whether this store is a PostgreSQL database (many machines can reach it).
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Inserts or replaces the experiment version `(id, version)`.
    pub async fn upsert_experiment(&self, e: &ExperimentRow) -> Result<()> {
        on_pool!(self, |pool, DB| {
            sqlx::query(
                "INSERT INTO experiments (id, version, title, manifest_hash, manifest_text) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (id, version) DO UPDATE SET \
                   title = excluded.title, \
                   manifest_hash = excluded.manifest_hash, \
                   manifest_text = excluded.manifest_text",
            )
            .bind(&e.id)
            .bind(e.version)
            .bind(&e.title)
            .bind(&e.manifest_hash)
            .bind(&e.manifest_text)
            .execute(pool)
            .await
            .map_err(db("upsert experiment"))?;
            Ok(())
        })
    }

    /// All experiment versions, ordered by id, then version.
    pub async fn experiments(&self) -> Result<Vec<ExperimentRow>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<(String, i64, String, String, String)> = sqlx::query_as(
                "SELECT id, version, title, manifest_hash, manifest_text FROM experiments",
            )
            .fetch_all(pool)
            .await
            .map_err(db("list experiments"))?;
            let mut out: Vec<ExperimentRow> = rows
                .into_iter()
                .map(
                    |(id, version, title, manifest_hash, manifest_text)| ExperimentRow {
                        id,
                        version,
                        title,
                        manifest_hash,
                        manifest_text,
                    },
                )
                .collect();
            out.sort_by(|a, b| (&a.id, a.version).cmp(&(&b.id, b.version)));
            Ok(out)
        })
    }

    /// Starts a run (status "running", `started` = now); returns its id.
    pub async fn begin_run(&self, code_version: &str, host: &str, args: &str) -> Result<i64> {
        on_pool!(self, |pool, DB| {
            sqlx::query_scalar(
                "INSERT INTO runs (started, finished, code_version, host, args, status) \
                 VALUES ($1, NULL, $2, $3, $4, 'running') RETURNING id",
            )
            .bind(now_rfc3339())
            .bind(code_version)
            .bind(host)
            .bind(args)
            .fetch_one(pool)
            .await
            .map_err(db("begin run"))
        })
    }

    /// Sets the final status of a run and `finished` = now.
    pub async fn finish_run(&self, run: i64, status: &str) -> Result<()> {
        on_pool!(self, |pool, DB| {
            let done = sqlx::query("UPDATE runs SET finished = $1, status = $2 WHERE id = $3")
                .bind(now_rfc3339())
                .bind(status)
                .bind(run)
                .execute(pool)
                .await
                .map_err(db("finish run"))?;
            if done.rows_affected() == 0 {
                return Err(StoreError::Db(format!("finish run: no run with id {run}")));
            }
            Ok(())
        })
    }

    /// All runs, ordered by id (= start order).
    pub async fn runs(&self) -> Result<Vec<RunRow>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<RunTuple> = sqlx::query_as(
                "SELECT id, started, finished, code_version, host, args, status \
                     FROM runs ORDER BY id",
            )
            .fetch_all(pool)
            .await
            .map_err(db("list runs"))?;
            Ok(rows
                .into_iter()
                .map(
                    |(id, started, finished, code_version, host, args, status)| RunRow {
                        id,
                        started,
                        finished,
                        code_version,
                        host,
                        args,
                        status,
                    },
                )
                .collect())
        })
    }

    /// Keys of the tasks that `run` recorded, sorted.
    pub async fn run_task_keys(&self, run: i64) -> Result<Vec<String>> {
        on_pool!(self, |pool, DB| {
            let mut keys: Vec<String> =
                sqlx::query_scalar("SELECT task_key FROM run_tasks WHERE run_id = $1")
                    .bind(run)
                    .fetch_all(pool)
                    .await
                    .map_err(db("list tasks of run"))?;
            keys.sort();
            Ok(keys)
        })
    }

    /// Keys among `keys` whose stored status is "done", "saturated" or "undefined"
    /// (outcomes, as opposed to failures, which are retried).
    /// One query per 500 keys.
    pub async fn cached_keys(&self, keys: &[String]) -> Result<HashSet<String>> {
        on_pool!(self, |pool, DB| {
            let mut out = HashSet::new();
            for chunk in keys.chunks(KEY_CHUNK) {
                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT key FROM tasks WHERE status IN ('done', 'saturated', 'undefined') AND key IN (",
                );
                push_keys!(qb, chunk);
                let found: Vec<String> = qb
                    .build_query_scalar()
                    .persistent(false)
                    .fetch_all(pool)
                    .await
                    .map_err(db("look up cached tasks"))?;
                out.extend(found);
            }
            Ok(out)
        })
    }

    /// Stored wall times (ms) of the given keys, for longest-first ordering.
    /// Includes failed tasks (their time is still the best estimate there is);
    /// keys never recorded are absent.
    pub async fn wall_times(&self, keys: &[String]) -> Result<HashMap<String, f64>> {
        on_pool!(self, |pool, DB| {
            let mut out = HashMap::new();
            for chunk in keys.chunks(KEY_CHUNK) {
                let mut qb =
                    QueryBuilder::<DB>::new("SELECT key, wall_ms FROM tasks WHERE key IN (");
                push_keys!(qb, chunk);
                let found: Vec<(String, f64)> = qb
                    .build_query_as()
                    .persistent(false)
                    .fetch_all(pool)
                    .await
                    .map_err(db("look up wall times"))?;
                out.extend(found);
            }
            Ok(out)
        })
    }

    /// Writes one task (row, metrics, series) in its own transaction, replacing
    /// any earlier record of the same key, and links it to `run`.
    ///
    /// `run` must be an id returned by [`Store::begin_run`]. `status` must be
    /// "done", "saturated" or "failed". `wall_ms`, metric values and series
    /// coordinates must not be NaN (half-widths may be; they are stored as NULL).
    pub async fn record_task(&self, run: i64, t: &TaskRecord) -> Result<()> {
        validate_task(t)?;
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(pool, None).await?;
            write_task!(tx, DB, run, t);
            tx.commit().await.map_err(db("commit task"))?;
            Ok(())
        })
    }

    /// Full records of the stored tasks among `keys`, in the order of `keys`
    /// (duplicates and unknown keys skipped). Metrics are sorted by name, series
    /// points are in the order they were recorded.
    pub async fn tasks(&self, keys: &[String]) -> Result<Vec<TaskRecord>> {
        on_pool!(self, |pool, DB| {
            let mut found: HashMap<String, TaskRecord> = HashMap::new();
            for chunk in keys.chunks(KEY_CHUNK) {
                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT key, solver, solver_version, params, seed, fidelity, status, wall_ms, error \
                     FROM tasks WHERE key IN (",
                );
                push_keys!(qb, chunk);
                let rows: Vec<TaskTuple> = qb
                    .build_query_as()
                    .persistent(false)
                    .fetch_all(pool)
                    .await
                    .map_err(db("read tasks"))?;
                for (key, solver, solver_version, params, seed, fidelity, status, wall_ms, error) in
                    rows
                {
                    found.insert(
                        key.clone(),
                        TaskRecord {
                            key,
                            solver,
                            solver_version,
                            params,
                            seed,
                            fidelity,
                            status,
                            wall_ms,
                            error,
                            metrics: Vec::new(),
                            series: Vec::new(),
                        },
                    );
                }

                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT task_key, name, value, half_width, n FROM metrics WHERE task_key IN (",
                );
                push_keys!(qb, chunk);
                let rows: Vec<MetricTuple> = qb
                    .build_query_as()
                    .persistent(false)
                    .fetch_all(pool)
                    .await
                    .map_err(db("read metrics"))?;
                for (key, name, value, half_width, n) in rows {
                    if let Some(t) = found.get_mut(&key) {
                        t.metrics.push(MetricRow {
                            name,
                            value,
                            half_width,
                            n,
                        });
                    }
                }

                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT task_key, name, x, y FROM series WHERE task_key IN (",
                );
                push_keys!(qb, chunk);
                qb.push(" ORDER BY task_key, idx");
                let rows: Vec<(String, String, f64, f64)> = qb
                    .build_query_as()
                    .persistent(false)
                    .fetch_all(pool)
                    .await
                    .map_err(db("read series"))?;
                for (key, name, x, y) in rows {
                    if let Some(t) = found.get_mut(&key) {
                        t.series.push(SeriesPointRow { name, x, y });
                    }
                }
            }
            let mut out = Vec::with_capacity(found.len());
            for key in keys {
                if let Some(mut t) = found.remove(key) {
                    t.metrics.sort_by(|a, b| a.name.cmp(&b.name));
                    out.push(t);
                }
            }
            Ok(out)
        })
    }

    /// Replaces the plan (point/series -> task) of one experiment version.
    /// Every row must carry that experiment and version.
    pub async fn replace_plan(
        &self,
        experiment: &str,
        version: i64,
        rows: &[PlanRow],
    ) -> Result<()> {
        self.replace_plan_rows(experiment, version, rows.iter().cloned())
            .await
    }

    /// [`Store::replace_plan`] from rows made while they are written: a plan
    /// at the task limit has 10⁶ rows, and only one statement's worth of them
    /// is held at a time. A row of another experiment or version is an error
    /// and leaves the stored plan as it was.
    pub async fn replace_plan_rows<I>(&self, experiment: &str, version: i64, rows: I) -> Result<()>
    where
        I: IntoIterator<Item = PlanRow>,
        I::IntoIter: Send,
    {
        let mut rows = rows.into_iter();
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(pool, Some(experiment)).await?;
            sqlx::query("DELETE FROM plan WHERE experiment = $1 AND version = $2")
                .bind(experiment)
                .bind(version)
                .execute(&mut *tx)
                .await
                .map_err(db("delete old plan"))?;
            let mut chunk: Vec<PlanRow> = Vec::with_capacity(MAX_BINDS / 7);
            loop {
                chunk.clear();
                chunk.extend(rows.by_ref().take(MAX_BINDS / 7));
                if chunk.is_empty() {
                    break;
                }
                if let Some(r) = chunk
                    .iter()
                    .find(|r| r.experiment != experiment || r.version != version)
                {
                    // Dropping `tx` rolls the delete back.
                    return Err(StoreError::Db(format!(
                        "replace plan of {experiment} v{version}: got a row of {} v{}",
                        r.experiment, r.version
                    )));
                }
                let mut qb = QueryBuilder::<DB>::new(
                    "INSERT INTO plan \
                     (experiment, version, point, point_index, series, replication, task_key) ",
                );
                qb.push_values(&chunk, |mut b, r| {
                    b.push_bind(r.experiment.as_str())
                        .push_bind(r.version)
                        .push_bind(r.point.as_str())
                        .push_bind(r.point_index)
                        .push_bind(r.series.as_str())
                        .push_bind(r.replication)
                        .push_bind(r.task_key.as_str());
                });
                qb.build()
                    .execute(&mut *tx)
                    .await
                    .map_err(db("write plan"))?;
            }
            tx.commit().await.map_err(db("commit plan"))?;
            Ok(())
        })
    }

    /// The plan of one experiment version, ordered by point index, series,
    /// replication. Empty if none was stored.
    pub async fn plan(&self, experiment: &str, version: i64) -> Result<Vec<PlanRow>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<(String, i64, String, i64, String)> = sqlx::query_as(
                "SELECT point, point_index, series, replication, task_key \
                 FROM plan WHERE experiment = $1 AND version = $2",
            )
            .bind(experiment)
            .bind(version)
            .fetch_all(pool)
            .await
            .map_err(db("read plan"))?;
            let mut out: Vec<PlanRow> = rows
                .into_iter()
                .map(
                    |(point, point_index, series, replication, task_key)| PlanRow {
                        experiment: experiment.to_string(),
                        version,
                        point,
                        point_index,
                        series,
                        replication,
                        task_key,
                    },
                )
                .collect();
            out.sort_by(|a, b| {
                (a.point_index, &a.series, a.replication).cmp(&(
                    b.point_index,
                    &b.series,
                    b.replication,
                ))
            });
            Ok(out)
        })
    }

    /// Replaces the error measures of one experiment version. Every row must
    /// carry that experiment and version; their order is kept. NaN values are
    /// stored as NULL (read back as `None`).
    pub async fn replace_error_measures(
        &self,
        experiment: &str,
        version: i64,
        rows: &[ErrorMeasureRow],
    ) -> Result<()> {
        on_pool!(self, |pool, DB| {
            if let Some(r) = rows
                .iter()
                .find(|r| r.experiment != experiment || r.version != version)
            {
                return Err(StoreError::Db(format!(
                    "replace error measures of {experiment} v{version}: got a row of {} v{}",
                    r.experiment, r.version
                )));
            }
            let not_nan = |v: Option<f64>| v.filter(|x| !x.is_nan());
            let mut tx = begin_write(pool, Some(experiment)).await?;
            sqlx::query("DELETE FROM error_measures WHERE experiment = $1 AND version = $2")
                .bind(experiment)
                .bind(version)
                .execute(&mut *tx)
                .await
                .map_err(db("delete old error measures"))?;
            const COLS: usize = 14;
            for (c, chunk) in rows.chunks(MAX_BINDS / COLS).enumerate() {
                let base = c * (MAX_BINDS / COLS);
                let mut qb = QueryBuilder::<DB>::new(
                    "INSERT INTO error_measures \
                     (experiment, version, seq, metric, reference, candidate, point, point_index, \
                      reference_value, reference_half_width, candidate_value, em, tolerance, verdict) ",
                );
                qb.push_values(chunk.iter().enumerate(), |mut b, (i, r)| {
                    b.push_bind(r.experiment.as_str())
                        .push_bind(r.version)
                        .push_bind((base + i) as i64)
                        .push_bind(r.metric.as_str())
                        .push_bind(r.reference.as_str())
                        .push_bind(r.candidate.as_str())
                        .push_bind(r.point.as_str())
                        .push_bind(r.point_index)
                        .push_bind(not_nan(r.reference_value))
                        .push_bind(not_nan(r.reference_half_width))
                        .push_bind(not_nan(r.candidate_value))
                        .push_bind(not_nan(r.em))
                        .push_bind(not_nan(r.tolerance))
                        .push_bind(r.verdict.as_str());
                });
                qb.build()
                    .execute(&mut *tx)
                    .await
                    .map_err(db("write error measures"))?;
            }
            tx.commit().await.map_err(db("commit error measures"))?;
            Ok(())
        })
    }

    /// The error measures of one experiment version, in the order they were
    /// given to [`Store::replace_error_measures`].
    pub async fn error_measures(
        &self,
        experiment: &str,
        version: i64,
    ) -> Result<Vec<ErrorMeasureRow>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<EmTuple> = sqlx::query_as(
                "SELECT metric, reference, candidate, point, point_index, reference_value, \
                        reference_half_width, candidate_value, em, tolerance, verdict \
                 FROM error_measures WHERE experiment = $1 AND version = $2 ORDER BY seq",
            )
            .bind(experiment)
            .bind(version)
            .fetch_all(pool)
            .await
            .map_err(db("read error measures"))?;
            Ok(rows
                .into_iter()
                .map(
                    |(
                        metric,
                        reference,
                        candidate,
                        point,
                        point_index,
                        reference_value,
                        reference_half_width,
                        candidate_value,
                        em,
                        tolerance,
                        verdict,
                    )| ErrorMeasureRow {
                        experiment: experiment.to_string(),
                        version,
                        metric,
                        reference,
                        candidate,
                        point,
                        point_index,
                        reference_value,
                        reference_half_width,
                        candidate_value,
                        em,
                        tolerance,
                        verdict,
                    },
                )
                .collect())
        })
    }
}

/// Refuses a task record the store must not hold (unknown status, NaN values).
fn validate_task(t: &TaskRecord) -> Result<()> {
    if !matches!(
        t.status.as_str(),
        "done" | "saturated" | "undefined" | "failed"
    ) {
        return Err(StoreError::Db(format!(
            "record task {}: status {:?} is not one of done, saturated, undefined, failed",
            t.key, t.status
        )));
    }
    if t.wall_ms.is_nan() {
        return Err(StoreError::Db(format!(
            "record task {}: wall_ms is NaN",
            t.key
        )));
    }
    if let Some(m) = t.metrics.iter().find(|m| m.value.is_nan()) {
        return Err(StoreError::Db(format!(
            "record task {}: metric {} is NaN",
            t.key, m.name
        )));
    }
    if let Some(p) = t.series.iter().find(|p| p.x.is_nan() || p.y.is_nan()) {
        return Err(StoreError::Db(format!(
            "record task {}: series {} has a NaN point",
            t.key, p.name
        )));
    }
    Ok(())
}

/// The current time as RFC 3339 UTC text, e.g. `2026-11-21T08:01:02.345Z`.
pub fn now_rfc3339() -> String {
    rfc3339_utc(SystemTime::now())
}

/// Formats `t` as RFC 3339 UTC text with millisecond precision
/// (times before 1970 are clamped to the epoch).
pub fn rfc3339_utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (y, m, day) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60,
        d.subsec_millis()
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01
/// (H. Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, millis: u64) -> String {
        rfc3339_utc(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
    }

    #[test]
    fn rfc3339_known_instants() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 0), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(951_868_799, 999), "2000-02-29T23:59:59.999Z");
        assert_eq!(at(1_700_000_000, 5), "2023-11-14T22:13:20.005Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
        assert_eq!(
            rfc3339_utc(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000Z"
        );
    }
}
