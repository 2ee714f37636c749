//! A local run's claims of given task keys (issue 32 item 6: runs sharing a
//! store run each task once), through the queue's rows and leases: claimed
//! and finished several at a time, each in one transaction (issue 35).

use std::collections::HashSet;
use std::time::Duration;

use sqlx::QueryBuilder;

use super::{now_ms, Claimed, Enqueue, KeyClaim, WorkerId};
use crate::{
    begin_write, db, keep_prepared, now_rfc3339, on_pool, push_keys, QueueState, Result, Store,
    StoreError, TaskRecord, KEY_CHUNK, MAX_BINDS,
};

impl Store {
    /// Claims one given task for a process that runs it itself (a local
    /// run, issue 32: two runs on one store ran each task twice), through
    /// the same rows and leases as the workers'. A key without a row gets a
    /// `running` row of `worker` (`inserted`: [`Store::finish_key`] removes it
    /// again); a pending or failed row, a running one whose lease expired or
    /// whose worker is `dead` (a process known to be gone), and with `force`
    /// a done one, is taken over. A row another live worker holds is
    /// [`KeyClaim::Busy`]; a done one without `force` is [`KeyClaim::Done`],
    /// and so is, without `force`, a key whose result is stored.
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
    /// circle. Keys without a row (nearly all) get theirs from one multi-row
    /// statement per chunk; only keys with a row cost statements of their own.
    ///
    /// Without `force`, a key whose result is stored (another process
    /// finished it since the caller looked) is [`KeyClaim::Done`] and left
    /// as it was: the cache is read in the same transaction, after the
    /// claims, so a result committed before any of them is seen.
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
            let mut tx = begin_write(self, pool, None).await?;
            let mut inserted: HashSet<String> = HashSet::new();
            const COLS: usize = 10;
            for chunk in order.chunks(MAX_BINDS / COLS) {
                let mut qb = QueryBuilder::<DB>::new(
                    "INSERT INTO queue (task_key, spec, priority, state, run_id, worker, lease_until, \
                       attempts, enqueued, started) ",
                );
                qb.push_values(chunk, |mut b, &i| {
                    let item = &items[i];
                    b.push_bind(item.task_key.as_str())
                        .push_bind(item.spec.as_str())
                        .push_bind(item.priority)
                        .push_bind(QueueState::Running.as_str())
                        .push_bind(run)
                        .push_bind(worker.0.as_str())
                        .push_bind(until)
                        .push_bind(1i64)
                        .push_bind(started.as_str())
                        .push_bind(started.as_str());
                });
                qb.push(" ON CONFLICT (task_key) DO NOTHING RETURNING task_key");
                let keys: Vec<String> = qb
                    .build_query_scalar()
                    .persistent(keep_prepared(chunk.len(), MAX_BINDS / COLS))
                    .fetch_all(&mut *tx)
                    .await
                    .map_err(db("claim task keys"))?;
                inserted.extend(keys);
            }
            let mut found: Vec<Option<KeyClaim>> = vec![None; items.len()];
            for &i in &order {
                let item = &items[i];
                let claimed = |run_id, attempt| Claimed {
                    task_key: item.task_key.clone(),
                    spec: item.spec.clone(),
                    run_id,
                    attempt,
                };
                // A key given twice is inserted once: its second place
                // finds the row this claim holds, as a claim of it alone
                // after the first would.
                if inserted.remove(&item.task_key) {
                    found[i] = Some(KeyClaim::Claimed(claimed(run, 1), true));
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
                    found[i] = Some(KeyClaim::Claimed(claimed(run_id, attempt), false));
                    continue;
                }
                let row: Option<(String, Option<String>)> =
                    sqlx::query_as("SELECT state, worker FROM queue WHERE task_key = $1")
                        .bind(&item.task_key)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(db("read a task key's row"))?;
                found[i] = Some(match row {
                    Some((state, _)) if state == QueueState::Done.as_str() => KeyClaim::Done,
                    Some((_, worker)) => KeyClaim::Busy(worker.unwrap_or_default()),
                    // Removed between the statements (its holder finished): look again.
                    None => KeyClaim::Busy(String::new()),
                });
            }
            let mut found: Vec<KeyClaim> = found.into_iter().flatten().collect();
            if !force {
                // Stored since the caller looked: given back in this
                // transaction (an inserted row removed, a taken-over one
                // pending again, as `release_key` does), and done.
                let claimed: Vec<&String> = found
                    .iter()
                    .filter_map(|f| match f {
                        KeyClaim::Claimed(c, _) => Some(&c.task_key),
                        _ => None,
                    })
                    .collect();
                let mut stored: HashSet<String> = HashSet::new();
                for chunk in claimed.chunks(KEY_CHUNK) {
                    let mut qb = QueryBuilder::<DB>::new(
                        "SELECT key FROM tasks WHERE status IN ('done', 'saturated', 'undefined') \
                         AND key IN (",
                    );
                    push_keys!(qb, chunk);
                    let keys: Vec<String> = qb
                        .build_query_scalar()
                        .persistent(keep_prepared(chunk.len(), KEY_CHUNK))
                        .fetch_all(&mut *tx)
                        .await
                        .map_err(db("look up cached tasks"))?;
                    stored.extend(keys);
                }
                for f in found.iter_mut() {
                    let KeyClaim::Claimed(c, inserted) = f else {
                        continue;
                    };
                    if !stored.contains(&c.task_key) {
                        continue;
                    }
                    let sql = if *inserted {
                        "DELETE FROM queue WHERE task_key = $1 AND worker = $2 AND state = 'running'"
                    } else {
                        "UPDATE queue SET state = 'pending', worker = NULL, lease_until = NULL, \
                           started = NULL, attempts = attempts - 1 \
                         WHERE task_key = $1 AND worker = $2 AND state = 'running'"
                    };
                    sqlx::query(sql)
                        .bind(&c.task_key)
                        .bind(&worker.0)
                        .execute(&mut *tx)
                        .await
                        .map_err(db("give back a stored task key"))?;
                    *f = KeyClaim::Done;
                }
            }
            tx.commit().await.map_err(db("commit task key claims"))?;
            Ok(found)
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
