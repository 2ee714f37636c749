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
//! - A task is known by its key everywhere outside the store (cache
//!   look-ups, the queue, the plan, reports). Inside, `tasks` gives each key
//!   an integer id when its first result is stored, and metrics, series and
//!   run_tasks refer to that id (schema 5, issue 35): their index pages then
//!   fill at the end as results arrive, instead of each task's rows landing
//!   on random pages of indexes keyed by text.
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

mod claims;
mod connect;
mod drawn;
mod error;
mod facts;
mod plans;
pub mod queue;
mod results;
mod rows;
mod runs;
mod schema;
mod status;
mod time;
mod write;

use std::time::Duration;

use sqlx::postgres::PgPool;
use sqlx::sqlite::SqlitePool;

pub use claims::{ClaimDefinitionRow, ClaimLastVerdict, ClaimRecord};
pub use drawn::DrawnRow;
pub use error::{OpenError, Result, StoreError};
pub use queue::{
    now_ms, Claimed, Enqueue, KeyClaim, QueueCounts, QueueRow, WorkerId, MAX_ATTEMPTS,
};
pub use rows::{
    ErrorMeasureRow, ExperimentRow, MetricRow, PlanRow, RunRow, SeriesPointRow, TaskRecord,
};
pub use schema::SCHEMA_VERSION;
pub use status::{QueueState, RunStatus, TaskStatus, UnknownName};
pub use time::{now_rfc3339, rfc3339_utc};

pub(crate) use connect::begin_write;
pub(crate) use results::validate_task;
pub(crate) use write::write_tasks;

/// Bound on the number of keys bound into one `IN (..)` list.
const KEY_CHUNK: usize = 500;
/// Bound on the number of bind parameters of one multi-row `INSERT`
/// (SQLite allows 32766, PostgreSQL 65535; staying far below keeps statements small).
const MAX_BINDS: usize = 900;
/// Whether a multi-row statement of `rows` rows (or keys), written in chunks
/// of `chunk`, is kept prepared on its connection (sqlx's statement cache) for
/// the next statement of the same text. A full chunk and a single row have
/// one text per statement kind, so they are prepared once per connection
/// (issue 35: preparing a 180-row insert cost about as much as running it);
/// other lengths have a text of their own and are prepared each time, so they
/// do not crowd the cache.
fn keep_prepared(rows: usize, chunk: usize) -> bool {
    rows == chunk || rows == 1
}
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

/// Runs `$body` with `$pool` bound to the backend's pool and `$DB` to its
/// database type, so one method body serves both backends.
macro_rules! on_pool {
    ($store:expr, |$pool:ident, $DB:ident| $body:expr) => {
        match &$store.backend {
            $crate::Backend::Sqlite($pool) => {
                #[allow(dead_code)]
                type $DB = sqlx::Sqlite;
                $body
            }
            $crate::Backend::Postgres($pool) => {
                #[allow(dead_code)]
                type $DB = sqlx::Postgres;
                $body
            }
        }
    };
}
pub(crate) use on_pool;

/// Appends `$n, $n+1, ..)` binding each of `values` (the caller has
/// written `IN (`).
macro_rules! push_binds {
    ($qb:ident, $values:expr) => {{
        let mut list = $qb.separated(", ");
        for v in $values {
            list.push_bind(v);
        }
        list.push_unseparated(")");
    }};
}
pub(crate) use push_binds;

/// [`push_binds`] of the task keys `keys`.
macro_rules! push_keys {
    ($qb:ident, $keys:expr) => {
        $crate::push_binds!($qb, $keys.into_iter().map(|k| k.as_str()))
    };
}
pub(crate) use push_keys;

/// Handle on the result database.
///
/// Cheap to clone: clones share one connection pool, so a `Store` can be handed
/// to many tokio tasks that write concurrently. [`Store::close`] on any clone
/// closes the shared pool.
#[derive(Clone)]
pub struct Store {
    backend: Backend,
    /// SQLite stores opened for writing: one connection that every write
    /// transaction of this process uses (`begin_write`). A connection's page
    /// cache is emptied whenever another connection has written since its
    /// last transaction, and the pool hands out its connections in turn, so
    /// write transactions on the shared pool read most pages they touch
    /// again from the file (issue 35: a quick check from an empty store read
    /// 1.2 GB back). Its own commits keep its cache. `None`: PostgreSQL,
    /// read-only and in-memory stores.
    writer: Option<SqlitePool>,
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
    move |source| StoreError::Db {
        context: context.to_string(),
        source,
    }
}

impl Store {
    /// Closes the connection pool (SQLite: checkpointing the WAL). Waits for
    /// clones' connections in use to be returned.
    pub async fn close(self) {
        if let Some(writer) = &self.writer {
            writer.close().await;
        }
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
}
