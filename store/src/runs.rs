//! Experiments (manifest text and hash per version) and runs (provenance).

use crate::{
    db, now_rfc3339, on_pool, ExperimentRow, Result, RunRow, RunStatus, Store, StoreError,
};

type RunTuple = (i64, String, Option<String>, String, String, String, String);

impl Store {
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
    pub async fn finish_run(&self, run: i64, status: RunStatus) -> Result<()> {
        on_pool!(self, |pool, DB| {
            let done = sqlx::query("UPDATE runs SET finished = $1, status = $2 WHERE id = $3")
                .bind(now_rfc3339())
                .bind(status.as_str())
                .bind(run)
                .execute(pool)
                .await
                .map_err(db("finish run"))?;
            if done.rows_affected() == 0 {
                return Err(StoreError::Invalid(format!(
                    "finish run: no run with id {run}"
                )));
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
            let mut keys: Vec<String> = sqlx::query_scalar(
                "SELECT t.key FROM run_tasks r JOIN tasks t ON t.id = r.task_id \
                     WHERE r.run_id = $1",
            )
            .bind(run)
            .fetch_all(pool)
            .await
            .map_err(db("list tasks of run"))?;
            keys.sort();
            Ok(keys)
        })
    }
}
