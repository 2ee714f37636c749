//! The task queue: tasks waiting for pull-based workers, kept in the store.
//!
//! One row per task key (table `queue`, migration 0002). A run enqueues the
//! tasks it needs; any number of workers, on any machines that reach the
//! store, claim them one at a time. A claim is a lease: the row records the
//! worker and a deadline (`lease_until`, Unix milliseconds from the worker's
//! clock, so the nodes' clocks must agree to well within a lease, as NTP gives)
//! that the worker renews while the task runs. A row whose lease has expired
//! belongs to a worker that died (killed, node lost, out of time) and is
//! claimed again by the next worker.
//!
//! Guarantees: the claim is one atomic statement (PostgreSQL: `FOR UPDATE SKIP
//! LOCKED`, so workers never wait on each other's claims; SQLite: the database
//! write lock), so a pending task goes to exactly one worker. A result is
//! committed in the same transaction that marks the row done, and only if the
//! row is still leased to that worker: a worker whose lease was taken over
//! stores nothing, so a task is never stored twice and never lost.

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::QueryBuilder;

use crate::{
    begin_write, db, keep_prepared, now_rfc3339, on_pool, push_keys, validate_task, write_tasks,
    Backend, QueueState, Result, Store, StoreError, TaskRecord, TaskStatus, KEY_CHUNK, MAX_BINDS,
};

mod keys;

/// A task is failed after this many workers lost it (each claim is an attempt):
/// a task that kills its worker (out of memory, a node's time limit) must not
/// take every worker down in turn.
pub const MAX_ATTEMPTS: i64 = 3;

/// Who holds a lease: host, process id and, under Slurm, the job and array
/// index, so `repro status` can say where a task runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerId(pub String);

impl std::fmt::Display for WorkerId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One task to enqueue.
#[derive(Debug, Clone, PartialEq)]
pub struct Enqueue {
    pub task_key: String,
    /// Everything a worker needs to run the task (JSON, written by the pipeline).
    pub spec: String,
    /// Higher first: the expected wall time in ms, so long tasks start early.
    pub priority: f64,
}

/// A task a worker has claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    pub task_key: String,
    pub spec: String,
    /// The run that enqueued it; the result is linked to that run.
    pub run_id: i64,
    /// 1 for the first claim, 2 when the task was reclaimed once, ...
    pub attempt: i64,
}

/// What [`Store::claim_key`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyClaim {
    /// Claimed; `true` when the claim inserted the row (no queue run had it).
    Claimed(Claimed, bool),
    /// Another worker or run holds it under a live lease (its worker name).
    Busy(String),
    /// Its row is done: the result is stored.
    Done,
}

/// One row of the queue, for `repro status`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueueRow {
    pub task_key: String,
    pub spec: String,
    pub state: QueueState,
    pub run_id: i64,
    pub worker: Option<String>,
    pub lease_until: Option<i64>,
    pub attempts: i64,
    pub started: Option<String>,
    pub error: Option<String>,
}

/// How many queue rows are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    pub pending: usize,
    pub running: usize,
    pub done: usize,
    pub failed: usize,
}

impl QueueCounts {
    /// Rows that are neither done nor failed.
    pub fn open(&self) -> usize {
        self.pending + self.running
    }
    pub fn total(&self) -> usize {
        self.pending + self.running + self.done + self.failed
    }
    fn add(&mut self, state: &str, n: i64) -> Result<()> {
        let n = n.max(0) as usize;
        let state = state
            .parse::<QueueState>()
            .map_err(|source| StoreError::UnknownName {
                context: "count queue",
                source,
            })?;
        match state {
            QueueState::Pending => self.pending += n,
            QueueState::Running => self.running += n,
            QueueState::Done => self.done += n,
            QueueState::Failed => self.failed += n,
        }
        Ok(())
    }
}

/// Unix time in milliseconds.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

type QueueTuple = (
    String,
    String,
    String,
    i64,
    Option<String>,
    Option<i64>,
    i64,
    Option<String>,
    Option<String>,
);

impl Store {
    /// Adds tasks to the queue for `run`. A key already pending or running
    /// (another run enqueued it) is left alone, so overlapping runs share it;
    /// a failed one is made pending again (failures are retried, as in a local
    /// run); a done one only with `force`. Returns how many rows became pending.
    pub async fn enqueue(&self, run: i64, items: &[Enqueue], force: bool) -> Result<usize> {
        let when = if force {
            "queue.state IN ('done', 'failed')"
        } else {
            "queue.state = 'failed'"
        };
        let now = now_rfc3339();
        on_pool!(self, |pool, DB| {
            let mut n = 0u64;
            const COLS: usize = 7;
            for chunk in items.chunks(MAX_BINDS / COLS) {
                let mut qb = QueryBuilder::<DB>::new(
                    "INSERT INTO queue (task_key, spec, priority, state, run_id, attempts, enqueued) ",
                );
                qb.push_values(chunk, |mut b, e| {
                    b.push_bind(e.task_key.as_str())
                        .push_bind(e.spec.as_str())
                        .push_bind(e.priority)
                        .push_bind(QueueState::Pending.as_str())
                        .push_bind(run)
                        .push_bind(0i64)
                        .push_bind(now.as_str());
                });
                qb.push(format!(
                    " ON CONFLICT (task_key) DO UPDATE SET \
                       spec = excluded.spec, priority = excluded.priority, state = 'pending', \
                       run_id = excluded.run_id, worker = NULL, lease_until = NULL, attempts = 0, \
                       enqueued = excluded.enqueued, started = NULL, finished = NULL, error = NULL \
                     WHERE {when}"
                ));
                n += qb
                    .build()
                    .persistent(false)
                    .execute(pool)
                    .await
                    .map_err(db("enqueue tasks"))?
                    .rows_affected();
            }
            Ok(n as usize)
        })
    }

    /// Claims the most expensive pending task (or one whose lease expired)
    /// for `worker` under a lease of `lease`; `None` when nothing is claimable.
    /// Tasks lost by [`MAX_ATTEMPTS`] workers are failed first, not claimed.
    pub async fn claim(&self, worker: &WorkerId, lease: Duration) -> Result<Option<Claimed>> {
        let now = now_ms();
        let until = now + lease.as_millis() as i64;
        let skip_locked = match self.backend {
            Backend::Sqlite(_) => "",
            Backend::Postgres(_) => " FOR UPDATE SKIP LOCKED",
        };
        on_pool!(self, |pool, DB| {
            sqlx::query(
                "UPDATE queue SET state = 'failed', finished = $1, lease_until = NULL, \
                   error = 'the workers running it were lost ' || CAST(attempts AS TEXT) || \
                           ' times (killed, out of memory or out of time?)' \
                 WHERE state = 'running' AND lease_until < $2 AND attempts >= $3",
            )
            .bind(now_rfc3339())
            .bind(now)
            .bind(MAX_ATTEMPTS)
            .execute(pool)
            .await
            .map_err(db("fail abandoned tasks"))?;
            let row: Option<(String, String, i64, i64)> =
                sqlx::query_as(sqlx::AssertSqlSafe(format!(
                    "UPDATE queue SET state = 'running', worker = $1, lease_until = $2, \
                       attempts = attempts + 1, started = $3 \
                     WHERE task_key = (SELECT task_key FROM queue \
                       WHERE state = 'pending' OR (state = 'running' AND lease_until < $4) \
                       ORDER BY priority DESC, task_key LIMIT 1{skip_locked}) \
                     RETURNING task_key, spec, run_id, attempts"
                )))
                .bind(&worker.0)
                .bind(until)
                .bind(now_rfc3339())
                .bind(now)
                .fetch_optional(pool)
                .await
                .map_err(db("claim a task"))?;
            Ok(row.map(|(task_key, spec, run_id, attempt)| Claimed {
                task_key,
                spec,
                run_id,
                attempt,
            }))
        })
    }

    /// Extends `worker`'s lease on `key`. `false` means the lease is lost (it
    /// expired and another worker claimed the task): stop working on it.
    pub async fn renew(&self, key: &str, worker: &WorkerId, lease: Duration) -> Result<bool> {
        let until = now_ms() + lease.as_millis() as i64;
        on_pool!(self, |pool, DB| {
            let r = sqlx::query(
                "UPDATE queue SET lease_until = $1 \
                 WHERE task_key = $2 AND worker = $3 AND state = 'running'",
            )
            .bind(until)
            .bind(key)
            .bind(&worker.0)
            .execute(pool)
            .await
            .map_err(db("renew lease"))?;
            Ok(r.rows_affected() == 1)
        })
    }

    /// Stores the result of a claimed task and marks its row done (or failed,
    /// if `record.status` is "failed") in one transaction, linked to the run
    /// that enqueued it. Returns `false`, storing nothing, if `worker` no
    /// longer holds the lease.
    pub async fn complete(
        &self,
        claimed: &Claimed,
        worker: &WorkerId,
        record: &TaskRecord,
    ) -> Result<bool> {
        let found = self
            .store_claimed(&[(claimed, false, record)], worker)
            .await?;
        Ok(found.first().copied().unwrap_or(false))
    }

    /// [`Store::complete`] and [`Store::finish_keys`]: each result stored
    /// with its queue row, which is marked done (or failed), or when its
    /// flag is set (a row [`Store::claim_keys`] inserted) deleted, all in
    /// one transaction; a result whose row `worker` no longer holds is not
    /// stored (`false` in its place). The rows are visited in key order, as
    /// claims visit them.
    async fn store_claimed(
        &self,
        items: &[(&Claimed, bool, &TaskRecord)],
        worker: &WorkerId,
    ) -> Result<Vec<bool>> {
        for (claimed, _, record) in items {
            validate_task(record)?;
            if record.key != claimed.task_key {
                return Err(StoreError::Invalid(format!(
                    "complete {}: the record is of task {}",
                    claimed.task_key, record.key
                )));
            }
        }
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(|&a, &b| items[a].0.task_key.cmp(&items[b].0.task_key));
        let finished = now_rfc3339();
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(self, pool, None).await?;
            // The queue rows first: on PostgreSQL this locks them, so a
            // worker that reclaims a task meanwhile waits for this commit
            // and then finds its row done (or gone). Rows a claim inserted
            // are removed with one statement per chunk, in key order.
            let removed: Vec<usize> = order.iter().copied().filter(|&i| items[i].1).collect();
            let mut owned: HashSet<String> = HashSet::new();
            for chunk in removed.chunks(KEY_CHUNK) {
                let mut qb = QueryBuilder::<DB>::new("DELETE FROM queue WHERE worker = ");
                qb.push_bind(&worker.0);
                qb.push(" AND state = 'running' AND task_key IN (");
                push_keys!(qb, chunk.iter().map(|&i| &items[i].0.task_key));
                qb.push(" RETURNING task_key");
                let gone: Vec<String> = qb
                    .build_query_scalar()
                    .persistent(keep_prepared(chunk.len(), KEY_CHUNK))
                    .fetch_all(&mut *tx)
                    .await
                    .map_err(db("remove finished tasks' rows"))?;
                owned.extend(gone);
            }
            let mut stored = vec![false; items.len()];
            for &i in &order {
                let (claimed, remove, record) = items[i];
                stored[i] = if remove {
                    owned.contains(&claimed.task_key)
                } else {
                    let state = match record.status {
                        TaskStatus::Failed => QueueState::Failed,
                        _ => QueueState::Done,
                    };
                    sqlx::query(
                        "UPDATE queue SET state = $1, finished = $2, lease_until = NULL, error = $3 \
                         WHERE task_key = $4 AND worker = $5 AND state = 'running'",
                    )
                    .bind(state.as_str())
                    .bind(&finished)
                    .bind(&record.error)
                    .bind(&claimed.task_key)
                    .bind(&worker.0)
                    .execute(&mut *tx)
                    .await
                    .map_err(db("mark task done"))?
                    .rows_affected()
                        == 1
                };
            }
            // A row lost to another worker: nothing of it is written. The
            // others in key order, as their rows.
            let write: Vec<(i64, &TaskRecord)> = order
                .into_iter()
                .filter(|&i| stored[i])
                .map(|i| (items[i].0.run_id, items[i].2))
                .collect();
            write_tasks!(tx, DB, &write);
            tx.commit().await.map_err(db("commit task"))?;
            Ok(stored)
        })
    }

    /// Gives a claimed task back (the worker was interrupted before finishing
    /// it): pending again, and this attempt does not count.
    pub async fn release(&self, key: &str, worker: &WorkerId) -> Result<()> {
        on_pool!(self, |pool, DB| {
            sqlx::query(
                "UPDATE queue SET state = 'pending', worker = NULL, lease_until = NULL, \
                   started = NULL, attempts = attempts - 1 \
                 WHERE task_key = $1 AND worker = $2 AND state = 'running'",
            )
            .bind(key)
            .bind(&worker.0)
            .execute(pool)
            .await
            .map_err(db("release task"))?;
            Ok(())
        })
    }

    /// Counts of the queue rows among `keys` (all rows if `None`) by state.
    pub async fn queue_counts(&self, keys: Option<&[String]>) -> Result<QueueCounts> {
        let mut out = QueueCounts::default();
        on_pool!(self, |pool, DB| {
            match keys {
                None => {
                    let rows: Vec<(String, i64)> =
                        sqlx::query_as("SELECT state, COUNT(*) FROM queue GROUP BY state")
                            .fetch_all(pool)
                            .await
                            .map_err(db("count queue"))?;
                    for (s, n) in rows {
                        out.add(&s, n)?;
                    }
                }
                Some(keys) => {
                    for chunk in keys.chunks(KEY_CHUNK) {
                        let mut qb = QueryBuilder::<DB>::new(
                            "SELECT state, COUNT(*) FROM queue WHERE task_key IN (",
                        );
                        push_keys!(qb, chunk);
                        qb.push(" GROUP BY state");
                        let rows: Vec<(String, i64)> = qb
                            .build_query_as()
                            .persistent(false)
                            .fetch_all(pool)
                            .await
                            .map_err(db("count queue"))?;
                        for (s, n) in rows {
                            out.add(&s, n)?;
                        }
                    }
                }
            }
            Ok(out)
        })
    }

    /// Queue rows in the given states, most expensive first (then by key).
    pub async fn queue_rows(&self, states: &[QueueState]) -> Result<Vec<QueueRow>> {
        on_pool!(self, |pool, DB| {
            let mut qb = QueryBuilder::<DB>::new(
                "SELECT task_key, spec, state, run_id, worker, lease_until, attempts, started, error \
                 FROM queue WHERE state IN (",
            );
            let mut list = qb.separated(", ");
            for s in states {
                list.push_bind(s.as_str());
            }
            list.push_unseparated(") ORDER BY priority DESC, task_key");
            let rows: Vec<QueueTuple> = qb
                .build_query_as()
                .persistent(false)
                .fetch_all(pool)
                .await
                .map_err(db("read queue"))?;
            rows.into_iter().map(queue_row).collect()
        })
    }
}

fn queue_row(t: QueueTuple) -> Result<QueueRow> {
    Ok(QueueRow {
        task_key: t.0,
        spec: t.1,
        state: t.2.parse().map_err(|source| StoreError::UnknownName {
            context: "read queue",
            source,
        })?,
        run_id: t.3,
        worker: t.4,
        lease_until: t.5,
        attempts: t.6,
        started: t.7,
        error: t.8,
    })
}
