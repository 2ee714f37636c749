//! Opening a store: parsing its location, connecting to SQLite (WAL, busy
//! timeout, read-only and immutable opens) or PostgreSQL (one probe
//! connection, then a pool), and how each backend begins a write transaction.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::{
    db, Backend, OpenError, Result, Store, StoreError, BUSY_TIMEOUT, MAX_CONNECTIONS,
    PG_CONNECT_TIMEOUT, PG_MAX_CONNECTIONS,
};

/// How each backend starts a write transaction.
pub(crate) trait BeginWrite {
    type Db: sqlx::Database;
    /// Begins a write transaction of `store`, whose pool this is; `lock`
    /// names an experiment whose plan or error measures the transaction
    /// replaces.
    async fn begin_write_tx(
        &self,
        store: &Store,
        lock: Option<&str>,
    ) -> Result<sqlx::Transaction<'static, Self::Db>>;
}

impl BeginWrite for SqlitePool {
    type Db = sqlx::Sqlite;
    async fn begin_write_tx(
        &self,
        store: &Store,
        _lock: Option<&str>,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>> {
        // On the store's writer connection, whose page cache only its own
        // commits change (`Store::writer`). Holds the database's write lock
        // from the start: it serialises writers, so no per-experiment lock
        // is needed.
        store
            .writer
            .as_ref()
            .unwrap_or(self)
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(db("begin write transaction"))
    }
}

impl BeginWrite for PgPool {
    type Db = sqlx::Postgres;
    async fn begin_write_tx(
        &self,
        _store: &Store,
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

/// Begins a write transaction of `store` on `pool`, its backend's pool.
pub(crate) async fn begin_write<P: BeginWrite>(
    store: &Store,
    pool: &P,
    lock: Option<&str>,
) -> Result<sqlx::Transaction<'static, P::Db>> {
    pool.begin_write_tx(store, lock).await
}

/// What a store location names.
enum Location {
    Sqlite(SqliteConnectOptions),
    Postgres(PgConnectOptions),
}

impl Location {
    /// [`Location::parse_url`] with sqlx's "slow statement" warnings moved
    /// to debug: reading a large figure's series takes seconds by design,
    /// and a WARN line in the middle of a normal `repro run` reads as a fault.
    fn parse(location: &str) -> std::result::Result<Location, OpenError> {
        use sqlx::ConnectOptions;
        let (level, after) = (log::LevelFilter::Debug, std::time::Duration::from_secs(1));
        let parsed = Self::parse_url(location).map_err(OpenError::Location)?;
        Ok(match parsed {
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

/// A failed PostgreSQL connection with the usual fix.
fn pg_connect_error(e: sqlx::Error) -> OpenError {
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
    OpenError::Postgres { source: e, hint }
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
    /// fail with [`StoreError::Db`]. A store of an older schema is upgraded
    /// first (as [`Store::open`] would) if it can be written, and refused
    /// ([`OpenError::Older`]) if it cannot; a newer one is refused like in
    /// [`Store::open`].
    pub async fn open_read_only(location: &str) -> Result<Store> {
        let (found, supported) = match Self::open_with(location, true).await {
            Err(StoreError::Open {
                cause: OpenError::Older { found, supported },
                ..
            }) => (found, supported),
            other => return other,
        };
        // Written by an older repro: upgraded once if it can be written (as
        // a user who just installed this one expects), then read as asked;
        // refused if it cannot.
        tracing::info!(
            location,
            "upgrading the store from schema {found} to {supported} (once)"
        );
        match Self::open_with(location, false).await {
            Ok(store) => {
                store.close().await;
                Self::open_with(location, true).await
            }
            Err(cannot) => {
                tracing::debug!(location, "the store cannot be upgraded: {cannot}");
                Err(StoreError::Open {
                    location: location.to_string(),
                    cause: OpenError::Older { found, supported },
                })
            }
        }
    }

    async fn open_with(location: &str, read_only: bool) -> Result<Store> {
        // Openers racing to create one SQLite store can meet SQLITE_BUSY where
        // SQLite does not call the busy handler (switching a new file to WAL,
        // recovering its WAL index). Such an open is tried again a few times.
        let mut attempt = 0u64;
        loop {
            match Self::open_once(location, read_only).await {
                Err(e @ StoreError::Open { .. }) if attempt < 8 && e.is_busy() => {
                    attempt += 1;
                    tracing::debug!(location, attempt, "store locked while opening, retrying");
                    tokio::time::sleep(Duration::from_millis(25 * attempt * attempt)).await;
                }
                other => return other,
            }
        }
    }

    async fn open_once(location: &str, read_only: bool) -> Result<Store> {
        let store = Self::connect(location, read_only).await?;
        if let Err(e) = store.prepare(read_only).await {
            store.close().await;
            return Err(e);
        }
        tracing::debug!(location, read_only, "opened result store");
        Ok(store)
    }

    /// A store opened for writing whose schema is neither checked nor
    /// migrated yet.
    pub(crate) async fn open_unprepared(location: &str) -> Result<Store> {
        Self::connect(location, false).await
    }

    /// Connects to the store at `location`, without looking at its schema.
    async fn connect(location: &str, read_only: bool) -> Result<Store> {
        let open_err = |cause: OpenError| StoreError::Open {
            location: location.to_string(),
            cause,
        };
        let mut writer = None;
        let backend = match Location::parse(location).map_err(open_err)? {
            Location::Sqlite(options) => {
                let (pool, w) = Self::connect_sqlite(location, options, read_only).await?;
                writer = w;
                Backend::Sqlite(pool)
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
        Ok(Store {
            backend,
            writer,
            location: location.to_string(),
        })
    }

    async fn connect_sqlite(
        location: &str,
        options: SqliteConnectOptions,
        read_only: bool,
    ) -> Result<(SqlitePool, Option<SqlitePool>)> {
        let open_err = |cause: OpenError| StoreError::Open {
            location: location.to_string(),
            cause,
        };
        let lower = location.to_ascii_lowercase();
        let in_memory = lower.contains(":memory:") || lower.contains("mode=memory");
        let file = options.get_filename().to_path_buf();
        if file.is_dir() {
            return Err(open_err(OpenError::IsDirectory(file)));
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
                return Err(open_err(OpenError::NoFile(file)));
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
                .map_err(|e| open_err(OpenError::Database(e)))?;
            // A WAL store needs its `-shm` file even to read; where it cannot be
            // created (read-only folder) SQLite refuses the first query. Such a
            // store has no live writer, so reading it as immutable is exact.
            let probe: std::result::Result<i64, _> =
                sqlx::query_scalar("SELECT count(*) FROM sqlite_master")
                    .fetch_one(&pool)
                    .await;
            if probe.is_ok() {
                return Ok((pool, None));
            }
            pool.close().await;
            return pool_options
                .connect_with(options.immutable(true))
                .await
                .map(|pool| (pool, None))
                .map_err(|e| open_err(OpenError::Database(e)));
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
            // Statement journals in memory (issue 35: a multi-row insert's
            // journal outgrew SQLite's 64 KiB in-memory default and was
            // written to a temporary file, about 8 % of the writer's time in
            // a quick check). They only undo a failed statement within its
            // transaction; the store's own journal is the WAL, as before.
            .pragma("temp_store", "memory")
            // A checkpoint (copying the WAL's pages into the database, and
            // two fsyncs) every 8192 pages of WAL (32 MiB at 4 KiB pages),
            // not SQLite's 1000: a page that several commits changed
            // (an index page, the last page of a table) is copied once per
            // checkpoint, so fewer checkpoints copy fewer pages (issue 35:
            // checkpoints were about 13 % of the writer's time).
            .pragma("wal_autocheckpoint", "8192")
            .foreign_keys(true);
        if let Some(parent) = file.parent() {
            if !parent.as_os_str().is_empty() && !in_memory {
                std::fs::create_dir_all(parent).map_err(|source| {
                    open_err(OpenError::CreateDir {
                        path: parent.to_path_buf(),
                        source,
                    })
                })?;
            }
        }
        let pool = pool_options
            .connect_with(options.clone())
            .await
            .map_err(|e| open_err(OpenError::Database(e)))?;
        // The writer connection (`Store::writer`), opened at the first write
        // transaction, after the migrations have run on `pool`. Writers of
        // this process queue for it; other processes' on the busy timeout.
        let writer = (!in_memory).then(|| {
            SqlitePoolOptions::new()
                .max_connections(1)
                .connect_lazy_with(options)
        });
        Ok((pool, writer))
    }
}
