//! What every stage and every command may use, and which itself uses no
//! stage: the error a user caused ([`InputError`], exit code 2), the exit
//! codes, the code version, the host name, and opening the result store
//! ([`store_open`]). A stage refers to the crate root only through this
//! module (checked by `tests/tests/architecture.rs`).

pub mod store_open;

pub use store_open::{open_existing_store, open_store, sqlite_file};

/// Package version and the git commit the binary was built from.
pub const CODE_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("REPRO_GIT_REV"));

/// Exit codes of the `repro` command.
pub mod exit {
    pub const OK: u8 = 0;
    /// `check`: some compared point failed its tolerance or was inconclusive.
    pub const CHECK_FAILED: u8 = 1;
    /// Bad input: manifests, CLI flags, solver parameters (clap also exits 2).
    pub const BAD_INPUT: u8 = 2;
    /// Some tasks failed (their errors and rerun commands are printed).
    pub const TASKS_FAILED: u8 = 3;
    /// An internal error: the store, the file system, a bug.
    pub const INTERNAL: u8 = 4;
    /// Interrupted by Ctrl-C (128 + SIGINT, as shells report it).
    pub const INTERRUPTED: u8 = 130;
}

/// An error the user caused (exit code 2), as opposed to an internal failure,
/// said in words. Typed errors that the user causes (a manifest's, a plan over
/// the task limit, a store that cannot be opened) keep their own type; the
/// binary's `commands::failure` maps every error to its exit code.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

/// Bad input that another error explains (exit code 2, like [`InputError`]):
/// what could not be used (`--out DIR`, a config file, `--params`) and, as
/// the source, why (the I/O or parse error).
#[derive(Debug, thiserror::Error)]
#[error("{what}")]
pub struct BadInput {
    pub what: String,
    #[source]
    pub cause: Box<dyn std::error::Error + Send + Sync + 'static>,
}

impl BadInput {
    pub fn new(
        what: impl Into<String>,
        cause: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>,
    ) -> Self {
        BadInput {
            what: what.into(),
            cause: cause.into(),
        }
    }
}

/// This machine's name (`HOSTNAME`, else `/etc/hostname`), for the provenance
/// of runs and the names of queue workers.
pub fn host() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| {
            std::fs::read_to_string("/etc/hostname")
                .ok()
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
