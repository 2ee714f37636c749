//! Facts beside the results, in the `meta` table (key/value text, there since
//! schema 1, so no migration): where each experiment version's manifest was
//! read from, and the files of each declared program by their hash (what
//! `repro why` compares when a program changed). Keys are namespaced by the
//! caller (`manifest.dir.<id>.<version>`, `code.<hash>`); the store's own
//! `schema_version` cannot be written this way.

use crate::{db, on_pool, Result, Store, StoreError};

impl Store {
    /// Sets `key` to `value` (replacing an older value).
    pub async fn set_fact(&self, key: &str, value: &str) -> Result<()> {
        if key == "schema_version" || key.is_empty() {
            return Err(StoreError::Invalid(format!(
                "`{key}` is not a fact key: it is the store's own"
            )));
        }
        on_pool!(self, |pool, DB| {
            sqlx::query(
                "INSERT INTO meta (key, value) VALUES ($1, $2) \
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            )
            .bind(key)
            .bind(value)
            .execute(pool)
            .await
            .map_err(db("set fact"))?;
            Ok(())
        })
    }

    /// The value of `key`, if set.
    pub async fn fact(&self, key: &str) -> Result<Option<String>> {
        on_pool!(self, |pool, DB| {
            sqlx::query_scalar("SELECT value FROM meta WHERE key = $1")
                .bind(key)
                .fetch_optional(pool)
                .await
                .map_err(db("read fact"))
        })
    }

    /// Every fact whose key starts with `prefix`, by key.
    pub async fn facts(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let mut rows: Vec<(String, String)> = on_pool!(self, |pool, DB| {
            sqlx::query_as("SELECT key, value FROM meta WHERE substr(key, 1, $1) = $2")
                .bind(i32::try_from(prefix.chars().count()).unwrap_or(i32::MAX))
                .bind(prefix)
                .fetch_all(pool)
                .await
                .map_err(db("list facts"))?
        });
        rows.retain(|(k, _)| k.starts_with(prefix) && k != "schema_version");
        rows.sort();
        Ok(rows)
    }
}
