//! The store's errors. Each keeps its cause as its `source()` (sqlx, I/O,
//! migration), so a caller can ask what went wrong ([`StoreError::is_busy`])
//! instead of reading the message; the message says it in words too.

use std::path::PathBuf;

pub use crate::status::UnknownName;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the result store at {location}: {cause}")]
    Open {
        location: String,
        #[source]
        cause: OpenError,
    },
    #[error("the result store at {location} has schema version {found}, newer than this binary understands ({supported}); upgrade repro or use another --store")]
    TooNew {
        location: String,
        found: i64,
        supported: i64,
    },
    /// A statement failed; `context` says what the store was doing.
    #[error("database error: {context}")]
    Db {
        context: String,
        #[source]
        source: sqlx::Error,
    },
    /// A value the store refuses to write, or a stored value it cannot read.
    #[error("database error: {0}")]
    Invalid(String),
    /// A stored name that is not one of its enum's (a task status, a queue state).
    #[error("database error: {context}")]
    UnknownName {
        context: &'static str,
        #[source]
        source: UnknownName,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// Why a store could not be opened. The message of each says what was
/// wrong; the database's or file system's own error is its `source()`.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The location is neither a path nor a URL the store understands.
    #[error("{0}")]
    Location(String),
    #[error("{} is a directory", .0.display())]
    IsDirectory(PathBuf),
    /// Reading commands open only an existing store.
    #[error("no store file at {}", .0.display())]
    NoFile(PathBuf),
    #[error("cannot create directory {}: {source}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Connecting to the database or reading it failed.
    #[error("{0}")]
    Database(#[source] sqlx::Error),
    /// A PostgreSQL server could not be reached or refused the connection;
    /// `hint` is the usual fix.
    #[error("cannot connect to PostgreSQL: {source}; {hint}")]
    Postgres {
        #[source]
        source: sqlx::Error,
        hint: &'static str,
    },
    #[error("cannot read the schema version: {0}")]
    SchemaVersion(#[source] sqlx::Error),
    #[error("schema version {0:?} is not an integer")]
    BadSchemaVersion(String),
    /// A reading command met a store of an older schema that it cannot
    /// upgrade (the store cannot be written).
    #[error("the store has schema version {found}, older than this binary's ({supported}), and cannot be upgraded here because it cannot be written; read it with the repro that wrote it, or open a writable copy of it once with this one")]
    Older { found: i64, supported: i64 },
    #[error("not a repro result store (no schema version); run `repro run` first")]
    NotAStore,
    #[error("migration failed: {0}")]
    Migration(#[source] sqlx::migrate::MigrateError),
}

impl StoreError {
    /// Whether the database was busy (SQLite's "database is locked":
    /// another connection held the lock longer than the busy timeout, or
    /// SQLite met a lock where it does not wait), as opposed to a store
    /// that cannot be used. Read from the sqlx errors in the causes, not
    /// from the message.
    pub fn is_busy(&self) -> bool {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = cause {
            if e.downcast_ref::<sqlx::Error>().is_some_and(sqlite_busy) {
                return true;
            }
            cause = e.source();
        }
        false
    }
}

/// SQLITE_BUSY, in any of its extended codes (the primary code is the low byte).
const SQLITE_BUSY: i32 = 5;

fn sqlite_busy(e: &sqlx::Error) -> bool {
    use sqlx::error::DatabaseError;
    match e {
        sqlx::Error::Database(d) => d
            .try_downcast_ref::<sqlx::sqlite::SqliteError>()
            .and_then(|s| s.code())
            .and_then(|c| c.parse::<i32>().ok())
            .is_some_and(|c| c & 0xff == SQLITE_BUSY),
        _ => false,
    }
}
