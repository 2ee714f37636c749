//! A local run's claims of given task keys (issue 32 item 6: runs sharing a
//! store run each task once), through the queue's rows and leases: claimed
//! and finished several at a time, each in one transaction (issue 35).

use std::time::Duration;

use super::{now_ms, Claimed, Enqueue, KeyClaim, WorkerId};
use crate::{
    begin_write, db, now_rfc3339, on_pool, QueueState, Result, Store, StoreError, TaskRecord,
};

impl Store {
    /// Claims one given task for a process that runs it itself (a local
    /// run, issue 32: two runs on one store ran each task twice), through
    /// the same rows and leases as the workers'. A key without a row gets a
    /// `running` row of `worker` (`inserted`: [`Store::finish_key`] removes it
    /// again); a pending or failed row, a running one whose lease expired or
    /// whose worker is `dead` (a process known to be gone), and with `force`
    /// a done one, is taken over. A row another live worker holds is
    /// [`KeyClaim::Busy`]; a done one without `force` is [`KeyClaim::Done`].
    pub async fn claim_key(
        &self,
        run: i64,
        item: &Enqueue,
        worker: &WorkerId,
        lease: Duration,
        force: bool,
        dead: Option<&str>,
    ) -> Result<KeyClaim> {
        let mut found = self
            .claim_keys(run, std::slice::from_ref(item), worker, lease, force, dead)
            .await?;
        found
            .pop()
            .ok_or_else(|| StoreError::Invalid(format!("claim {}: no answer", item.task_key)))
    }

    /// [`Store::claim_key`] for several keys in one write transaction (issue
    /// 35: one transaction per key cost a quick check 8 s of system time):
    /// each key is claimed, taken over or found busy or done exactly as by
    /// itself, under its own lease. The answers are in the order of `items`.
    /// The keys are visited in sorted order, so that claimants on PostgreSQL
    /// take the rows' locks in one order and never wait on each other in a
    /// circle.
    pub async fn claim_keys(
        &self,
        run: i64,
        items: &[Enqueue],
        worker: &WorkerId,
        lease: Duration,
        force: bool,
        dead: Option<&str>,
    ) -> Result<Vec<KeyClaim>> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let now = now_ms();
        let until = now + lease.as_millis() as i64;
        let started = now_rfc3339();
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by(|&a, &b| items[a].task_key.cmp(&items[b].task_key));
        let done = if force { " OR state = 'done'" } else { "" };
        let take_over = format!(
            "UPDATE queue SET state = 'running', worker = $1, lease_until = $2, \
               attempts = attempts + 1, started = $3, finished = NULL, error = NULL \
             WHERE task_key = $4 AND (state IN ('pending', 'failed'){done} \
               OR (state = 'running' AND (lease_until < $5 OR worker = $6))) \
             RETURNING run_id, attempts"
        );
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(pool, None).await?;
            let mut found: Vec<(usize, KeyClaim)> = Vec::with_capacity(items.len());
            for i in order {
                let item = &items[i];
                let claimed = |run_id, attempt| Claimed {
                    task_key: item.task_key.clone(),
                    spec: item.spec.clone(),
                    run_id,
                    attempt,
                };
                let inserted = sqlx::query(
                    "INSERT INTO queue (task_key, spec, priority, state, run_id, worker, lease_until, \
                       attempts, enqueued, started) \
                     VALUES ($1, $2, $3, 'running', $4, $5, $6, 1, $7, $7) \
                     ON CONFLICT (task_key) DO NOTHING",
                )
                .bind(&item.task_key)
                .bind(&item.spec)
                .bind(item.priority)
                .bind(run)
                .bind(&worker.0)
                .bind(until)
                .bind(&started)
                .execute(&mut *tx)
                .await
                .map_err(db("claim a task key"))?
                .rows_affected()
                    == 1;
                if inserted {
                    found.push((i, KeyClaim::Claimed(claimed(run, 1), true)));
                    continue;
                }
                let taken: Option<(i64, i64)> =
                    sqlx::query_as(sqlx::AssertSqlSafe(take_over.as_str()))
                        .bind(&worker.0)
                        .bind(until)
                        .bind(&started)
                        .bind(&item.task_key)
                        .bind(now)
                        .bind(dead.unwrap_or(""))
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(db("take over a task key"))?;
                if let Some((run_id, attempt)) = taken {
                    found.push((i, KeyClaim::Claimed(claimed(run_id, attempt), false)));
                    continue;
                }
                let row: Option<(String, Option<String>)> =
                    sqlx::query_as("SELECT state, worker FROM queue WHERE task_key = $1")
                        .bind(&item.task_key)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(db("read a task key's row"))?;
                found.push((
                    i,
                    match row {
                        Some((state, _)) if state == QueueState::Done.as_str() => KeyClaim::Done,
                        Some((_, worker)) => KeyClaim::Busy(worker.unwrap_or_default()),
                        // Removed between the statements (its holder finished): look again.
                        None => KeyClaim::Busy(String::new()),
                    },
                ));
            }
            tx.commit().await.map_err(db("commit task key claims"))?;
            found.sort_by_key(|(i, _)| *i);
            Ok(found.into_iter().map(|(_, c)| c).collect())
        })
    }

    /// Stores the result of a task claimed with [`Store::claim_key`], in one
    /// transaction with its row: a row the claim inserted is removed, one it
    /// took over is marked done (or failed) as [`Store::complete`] does.
    /// `false`, storing nothing, if `worker` no longer holds it.
    pub async fn finish_key(
        &self,
        claimed: &Claimed,
        inserted: bool,
        worker: &WorkerId,
        record: &TaskRecord,
    ) -> Result<bool> {
        let found = self
            .finish_keys(&[(claimed, inserted, record)], worker)
            .await?;
        Ok(found.first().copied().unwrap_or(false))
    }

    /// [`Store::finish_key`] for several results in one transaction (each
    /// `(claim, inserted, result)`), answered in their order.
    pub async fn finish_keys(
        &self,
        items: &[(&Claimed, bool, &TaskRecord)],
        worker: &WorkerId,
    ) -> Result<Vec<bool>> {
        self.store_claimed(items, worker).await
    }

    /// Gives back a task claimed with [`Store::claim_key`] and not finished
    /// (cancelled): a row the claim inserted is removed, one it took over is
    /// pending again ([`Store::release`]).
    pub async fn release_key(&self, key: &str, inserted: bool, worker: &WorkerId) -> Result<()> {
        if !inserted {
            return self.release(key, worker).await;
        }
        on_pool!(self, |pool, DB| {
            sqlx::query(
                "DELETE FROM queue WHERE task_key = $1 AND worker = $2 AND state = 'running'",
            )
            .bind(key)
            .bind(&worker.0)
            .execute(pool)
            .await
            .map_err(db("release a task key"))?;
            Ok(())
        })
    }
}
