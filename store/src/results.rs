//! Task results (one row per task key, with its metrics and series), the cache
//! lookup by key, and the error measures of each experiment version.

use std::collections::{HashMap, HashSet};

use sqlx::QueryBuilder;

use crate::{
    begin_write, db, keep_prepared, on_pool, push_binds, push_keys, write_tasks, ErrorMeasureRow,
    MetricRow, Result, SeriesPointRow, Store, StoreError, TaskRecord, KEY_CHUNK, MAX_BINDS,
};

type TaskTuple = (
    i64,
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

type MetricTuple = (i64, String, f64, Option<f64>, Option<i64>);

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

impl Store {
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
                    .persistent(keep_prepared(chunk.len(), KEY_CHUNK))
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
                    .persistent(keep_prepared(chunk.len(), KEY_CHUNK))
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
            let mut tx = begin_write(self, pool, None).await?;
            write_tasks!(tx, DB, &[(run, t)]);
            tx.commit().await.map_err(db("commit task"))?;
            Ok(())
        })
    }

    /// `t` as [`Store::tasks`] reads it back once [`Store::record_task`]
    /// (or a completion) stored it: metrics sorted by name, NaN half-widths
    /// as `None`, and, on SQLite, negative zeros as zeros (SQLite keeps a
    /// float without a fractional part as an integer). A command that keeps
    /// the records it wrote instead of reading them again sees the same.
    pub fn as_read_back(&self, mut t: TaskRecord) -> TaskRecord {
        let sqlite = !self.is_postgres();
        let z = |v: f64| if sqlite && v == 0.0 { 0.0 } else { v };
        t.wall_ms = z(t.wall_ms);
        for m in &mut t.metrics {
            m.value = z(m.value);
            m.half_width = m.half_width.filter(|h| !h.is_nan()).map(z);
        }
        for p in &mut t.series {
            p.x = z(p.x);
            p.y = z(p.y);
        }
        t.metrics.sort_by(|a, b| a.name.cmp(&b.name));
        t
    }

    /// Full records of the stored tasks among `keys`, in the order of `keys`
    /// (duplicates and unknown keys skipped). Metrics are sorted by name, series
    /// points are in the order they were recorded.
    pub async fn tasks(&self, keys: &[String]) -> Result<Vec<TaskRecord>> {
        self.read_tasks(keys, true).await
    }

    /// [`Store::tasks`] without their series (`series` left empty): most
    /// readers need only the metrics, and the series rows are most of a
    /// store (issue 35: 504k of them in a quick check's store).
    pub async fn tasks_without_series(&self, keys: &[String]) -> Result<Vec<TaskRecord>> {
        self.read_tasks(keys, false).await
    }

    async fn read_tasks(&self, keys: &[String], series: bool) -> Result<Vec<TaskRecord>> {
        on_pool!(self, |pool, DB| {
            let mut found: HashMap<String, TaskRecord> = HashMap::new();
            for chunk in keys.chunks(KEY_CHUNK) {
                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT id, key, solver, solver_version, params, seed, fidelity, status, wall_ms, \
                       error FROM tasks WHERE key IN (",
                );
                push_keys!(qb, chunk);
                let rows: Vec<TaskTuple> = qb
                    .build_query_as()
                    .persistent(keep_prepared(chunk.len(), KEY_CHUNK))
                    .fetch_all(pool)
                    .await
                    .map_err(db("read tasks"))?;
                // The keys of this chunk's stored tasks by id, in id order.
                let mut by_id: Vec<(i64, String)> = Vec::with_capacity(rows.len());
                for (
                    id,
                    key,
                    solver,
                    solver_version,
                    params,
                    seed,
                    fidelity,
                    status,
                    wall_ms,
                    error,
                ) in rows
                {
                    by_id.push((id, key.clone()));
                    found.insert(
                        key.clone(),
                        TaskRecord {
                            key,
                            solver,
                            solver_version,
                            params,
                            seed,
                            fidelity,
                            status: status.parse().map_err(|source| StoreError::UnknownName {
                                context: "read tasks",
                                source,
                            })?,
                            wall_ms,
                            error,
                            metrics: Vec::new(),
                            series: Vec::new(),
                        },
                    );
                }
                if by_id.is_empty() {
                    continue;
                }
                by_id.sort_unstable();
                let key_of = |id: i64| {
                    by_id
                        .binary_search_by_key(&id, |(i, _)| *i)
                        .ok()
                        .map(|at| by_id[at].1.as_str())
                };

                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT task_id, name, value, half_width, n FROM metrics WHERE task_id IN (",
                );
                push_binds!(qb, by_id.iter().map(|(id, _)| *id));
                let rows: Vec<MetricTuple> = qb
                    .build_query_as()
                    .persistent(keep_prepared(by_id.len(), KEY_CHUNK))
                    .fetch_all(pool)
                    .await
                    .map_err(db("read metrics"))?;
                for (id, name, value, half_width, n) in rows {
                    if let Some(t) = key_of(id).and_then(|k| found.get_mut(k)) {
                        t.metrics.push(MetricRow {
                            name,
                            value,
                            half_width,
                            n,
                        });
                    }
                }

                if !series {
                    continue;
                }
                let mut qb = QueryBuilder::<DB>::new(
                    "SELECT task_id, name, x, y FROM series WHERE task_id IN (",
                );
                push_binds!(qb, by_id.iter().map(|(id, _)| *id));
                qb.push(" ORDER BY task_id, idx");
                let rows: Vec<(i64, String, f64, f64)> = qb
                    .build_query_as()
                    .persistent(keep_prepared(by_id.len(), KEY_CHUNK))
                    .fetch_all(pool)
                    .await
                    .map_err(db("read series"))?;
                for (id, name, x, y) in rows {
                    if let Some(t) = key_of(id).and_then(|k| found.get_mut(k)) {
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
                return Err(StoreError::Invalid(format!(
                    "replace error measures of {experiment} v{version}: got a row of {} v{}",
                    r.experiment, r.version
                )));
            }
            let not_nan = |v: Option<f64>| v.filter(|x| !x.is_nan());
            let mut tx = begin_write(self, pool, Some(experiment)).await?;
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
                .map(|t| em_row(experiment, version, t))
                .collect())
        })
    }
}

/// An error measure row from its stored columns (in the order of the SELECT).
fn em_row(experiment: &str, version: i64, t: EmTuple) -> ErrorMeasureRow {
    ErrorMeasureRow {
        experiment: experiment.to_string(),
        version,
        metric: t.0,
        reference: t.1,
        candidate: t.2,
        point: t.3,
        point_index: t.4,
        reference_value: t.5,
        reference_half_width: t.6,
        candidate_value: t.7,
        em: t.8,
        tolerance: t.9,
        // Text that names no verdict (a store edited by hand) reads as
        // inconclusive, which never counts as a pass.
        verdict: t.10.parse().unwrap_or(verdicts::PointVerdict::Inconclusive),
    }
}

/// Refuses a task record the store must not hold (NaN values).
pub(crate) fn validate_task(t: &TaskRecord) -> Result<()> {
    if t.wall_ms.is_nan() {
        return Err(StoreError::Invalid(format!(
            "record task {}: wall_ms is NaN",
            t.key
        )));
    }
    if let Some(m) = t.metrics.iter().find(|m| m.value.is_nan()) {
        return Err(StoreError::Invalid(format!(
            "record task {}: metric {} is NaN",
            t.key, m.name
        )));
    }
    if let Some(p) = t.series.iter().find(|p| p.x.is_nan() || p.y.is_nan()) {
        return Err(StoreError::Invalid(format!(
            "record task {}: series {} has a NaN point",
            t.key, p.name
        )));
    }
    Ok(())
}
