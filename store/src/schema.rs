//! The schema: migrations embedded per backend, the schema-version check that
//! refuses a store written by a newer binary, and running the migrations.

use std::time::Duration;

use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::SqlSafeStr;

use crate::{on_pool, Backend, OpenError, Result, Store, StoreError};

/// Schema version this binary understands. A store with a higher version is refused.
/// 2: the task queue. 3: the claim ledger. 4: the record of what was drawn.
/// 5: integer task ids (metrics, series and run_tasks refer to `tasks.id`).
pub const SCHEMA_VERSION: i64 = 5;

/// The oldest schema the reading commands can read without migrating: the
/// tables their queries use have had the same columns since.
const READABLE_FROM: i64 = 5;

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
        (
            3,
            "claims",
            include_str!("../migrations/sqlite/0003_claims.sql"),
        ),
        (
            4,
            "drawn",
            include_str!("../migrations/sqlite/0004_drawn.sql"),
        ),
        (
            5,
            "task_ids",
            include_str!("../migrations/sqlite/0005_task_ids.sql"),
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
        (
            3,
            "claims",
            include_str!("../migrations/postgres/0003_claims.sql"),
        ),
        (
            4,
            "drawn",
            include_str!("../migrations/postgres/0004_drawn.sql"),
        ),
        (
            5,
            "task_ids",
            include_str!("../migrations/postgres/0005_task_ids.sql"),
        ),
    ])
}

impl Store {
    /// Checks the stored schema version, then (unless `read_only`) migrates.
    pub(crate) async fn prepare(&self, read_only: bool) -> Result<()> {
        self.prepare_up_to(read_only, SCHEMA_VERSION).await
    }

    /// [`Store::prepare`] migrating only up to schema `target` (tests make
    /// stores of an older schema with it).
    async fn prepare_up_to(&self, read_only: bool, target: i64) -> Result<()> {
        let open_err = |cause: OpenError| StoreError::Open {
            location: self.location.clone(),
            cause,
        };
        let has_meta: bool = match &self.backend {
            Backend::Sqlite(pool) => sqlx::query_scalar::<_, String>(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'",
            )
            .fetch_optional(pool)
            .await
            .map_err(|e| open_err(OpenError::Database(e)))?
            .is_some(),
            Backend::Postgres(pool) => sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = 'meta')",
            )
            .fetch_one(pool)
            .await
            .map_err(|e| open_err(OpenError::Database(e)))?,
        };
        let mut found = None;
        if has_meta {
            let stored: Option<String> = on_pool!(self, |pool, DB| {
                sqlx::query_scalar("SELECT value FROM meta WHERE key = 'schema_version'")
                    .fetch_optional(pool)
                    .await
                    .map_err(|e| open_err(OpenError::SchemaVersion(e)))?
            });
            if let Some(stored) = stored {
                let v: i64 = stored
                    .trim()
                    .parse()
                    .map_err(|_| open_err(OpenError::BadSchemaVersion(stored.clone())))?;
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
            return match found {
                Some(v) if v >= READABLE_FROM => Ok(()),
                Some(v) => Err(open_err(OpenError::Older {
                    found: v,
                    supported: SCHEMA_VERSION,
                })),
                None => Err(open_err(OpenError::NotAStore)),
            };
        }
        let up_to = |mut m: Migrator| {
            m.migrations = m
                .migrations
                .iter()
                .filter(|m| m.version <= target)
                .cloned()
                .collect::<Vec<_>>()
                .into();
            m
        };
        match &self.backend {
            Backend::Sqlite(pool) => {
                // sqlx takes no lock around SQLite migrations, so two processes
                // creating one store at once can both try migration 1; the
                // loser's transaction rolls back, and once the winner has
                // committed a retry finds nothing left to do.
                let migrator = up_to(sqlite_migrator());
                let mut attempt = 0;
                loop {
                    match migrator.run(pool).await {
                        Ok(()) => break,
                        Err(e) if attempt >= 4 => return Err(open_err(OpenError::Migration(e))),
                        Err(e) => {
                            tracing::debug!("migration attempt {attempt} failed, retrying: {e}");
                            attempt += 1;
                            tokio::time::sleep(Duration::from_millis(100 * attempt)).await;
                        }
                    }
                }
                // Schema 5 copied the task tables; the old ones' pages are
                // free pages of the file (a quick check's store: 179 MB,
                // 67 MB once vacuumed). Given back once, best effort: a
                // store another process holds stays as it is, and works.
                if found.is_some_and(|v| v < 5) && target >= 5 {
                    let started = std::time::Instant::now();
                    match sqlx::query("VACUUM").execute(pool).await {
                        Ok(_) => tracing::info!(
                            location = %self.location,
                            seconds = started.elapsed().as_secs_f64(),
                            "compacted the store after upgrading it to schema 5"
                        ),
                        Err(e) => tracing::info!(
                            location = %self.location,
                            "the store was upgraded to schema 5 but not compacted \
                             (its free pages stay for later writes): {e}"
                        ),
                    }
                }
            }
            // PostgreSQL: the migrator holds an advisory lock while it runs.
            Backend::Postgres(pool) => up_to(postgres_migrator())
                .run(pool)
                .await
                .map_err(|e| open_err(OpenError::Migration(e)))?,
        }
        Ok(())
    }
}

impl Store {
    /// Opens (creating if needed) a store of schema `version` at most: a
    /// store as an older binary left it, for tests of the migrations. Not
    /// for use outside tests: a store opened so is read and written by
    /// queries of the current schema.
    #[doc(hidden)]
    pub async fn open_at_schema(location: &str, version: i64) -> Result<Store> {
        let store = Self::open_unprepared(location).await?;
        if let Err(e) = store.prepare_up_to(false, version).await {
            store.close().await;
            return Err(e);
        }
        Ok(store)
    }
}
