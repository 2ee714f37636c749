//! Opening the result store: the writing commands create it,
//! the reading commands open an existing one read-only.

use super::InputError;
use std::path::PathBuf;
use store::Store;

/// The SQLite file behind a store location, if it names one.
pub fn sqlite_file(location: &str) -> Option<PathBuf> {
    if location.contains("://") && !location.starts_with("sqlite://") {
        return None;
    }
    let path = location.trim_start_matches("sqlite://");
    let path = path.split('?').next().unwrap_or(path);
    (!path.is_empty() && !path.starts_with(':')).then(|| PathBuf::from(path))
}

/// Opens an existing store for reading commands: never creates one, and opens
/// it read-only, so a store the user may not write (a read-only share, a
/// results database downloaded with a paper) can be read.
pub async fn open_existing_store(location: &str) -> anyhow::Result<Store> {
    if let Some(f) = sqlite_file(location) {
        if !f.is_file() {
            return Err(InputError(format!(
                "no result store at {}: run `repro run` first (or pass --store)",
                f.display()
            ))
            .into());
        }
    }
    Ok(Store::open_read_only(location).await?)
}

/// Opens the store, creating it if needed (the writing commands). A store
/// that cannot be opened or is too new is the user's to fix (exit code 2,
/// see `commands::failure`); its error keeps its cause.
pub async fn open_store(location: &str) -> anyhow::Result<Store> {
    Ok(Store::open(location).await?)
}
