//! Writing task records inside an open write transaction, several at a time
//! (issue 35: a statement per task and table, each a round trip to the
//! database, cost a quick check about half a millisecond per short task).

/// Writes task records (rows, metrics, series, links to their runs) inside
/// the open write transaction `$tx`; `$items` is a `&[(run, &TaskRecord)]`.
/// Shared by [`crate::Store::record_task`] and the queue's completions,
/// which must commit the results and their queue rows together.
///
/// Each table is written with multi-row statements for the whole batch:
/// the rows of keys stored for the first time (nearly every task) in
/// `INSERT .. ON CONFLICT DO NOTHING RETURNING key, id`; only a key already
/// stored (`--force`, a failed task retried) has its row updated (keeping
/// its id) and its old metrics and series deleted, one key at a time.
/// Metrics, series and run links refer to the task by its id (schema 5).
/// A key given twice is written once, with its last record (as writing
/// them in turn would leave it), and linked to every run it was given with.
macro_rules! write_tasks {
    ($tx:ident, $DB:ident, $items:expr) => {{
        let given: &[(i64, &$crate::TaskRecord)] = $items;
        let created = $crate::now_rfc3339();
        // The last record of each key, in the order given.
        let mut last = std::collections::HashMap::new();
        for (i, (_, t)) in given.iter().enumerate() {
            last.insert(t.key.as_str(), i);
        }
        let records: Vec<&$crate::TaskRecord> = given
            .iter()
            .enumerate()
            .filter(|(i, (_, t))| last[t.key.as_str()] == *i)
            .map(|(_, (_, t))| *t)
            .collect();

        // Each key's id: a key stored for the first time gets the next one
        // from its insert, so the rows below, keyed by id, go to the end of
        // their tables' indexes.
        let mut ids: std::collections::HashMap<&str, i64> =
            std::collections::HashMap::with_capacity(records.len());
        let rows = $crate::MAX_BINDS / 10;
        for chunk in records.chunks(rows) {
            let mut qb = sqlx::QueryBuilder::<$DB>::new(
                "INSERT INTO tasks \
                   (key, solver, solver_version, params, seed, fidelity, status, wall_ms, error, created) ",
            );
            qb.push_values(chunk, |mut b, t| {
                b.push_bind(t.key.as_str())
                    .push_bind(t.solver.as_str())
                    .push_bind(t.solver_version)
                    .push_bind(t.params.as_str())
                    .push_bind(t.seed)
                    .push_bind(t.fidelity.as_str())
                    .push_bind(t.status.as_str())
                    .push_bind(t.wall_ms)
                    .push_bind(t.error.as_deref())
                    .push_bind(created.as_str());
            });
            qb.push(" ON CONFLICT (key) DO NOTHING RETURNING key, id");
            let inserted: Vec<(String, i64)> = qb
                .build_query_as()
                .persistent($crate::keep_prepared(chunk.len(), rows))
                .fetch_all(&mut *$tx)
                .await
                .map_err($crate::db("record tasks"))?;
            for (key, id) in inserted {
                if let Some((&key, _)) = last.get_key_value(key.as_str()) {
                    ids.insert(key, id);
                }
            }
        }

        let stored: Vec<&$crate::TaskRecord> = records
            .iter()
            .filter(|t| !ids.contains_key(t.key.as_str()))
            .copied()
            .collect();
        for t in stored {
            let id: i64 = sqlx::query_scalar(
                "UPDATE tasks SET solver = $2, solver_version = $3, params = $4, seed = $5, \
                   fidelity = $6, status = $7, wall_ms = $8, error = $9, created = $10 \
                 WHERE key = $1 RETURNING id",
            )
            .bind(&t.key)
            .bind(&t.solver)
            .bind(t.solver_version)
            .bind(&t.params)
            .bind(t.seed)
            .bind(&t.fidelity)
            .bind(t.status.as_str())
            .bind(t.wall_ms)
            .bind(&t.error)
            .bind(&created)
            .fetch_one(&mut *$tx)
            .await
            .map_err($crate::db("record task"))?;
            sqlx::query("DELETE FROM metrics WHERE task_id = $1")
                .bind(id)
                .execute(&mut *$tx)
                .await
                .map_err($crate::db("delete old metrics"))?;
            sqlx::query("DELETE FROM series WHERE task_id = $1")
                .bind(id)
                .execute(&mut *$tx)
                .await
                .map_err($crate::db("delete old series"))?;
            ids.insert(t.key.as_str(), id);
        }

        let metrics: Vec<(i64, &$crate::MetricRow)> = records
            .iter()
            .flat_map(|t| {
                let id = ids[t.key.as_str()];
                t.metrics.iter().map(move |m| (id, m))
            })
            .collect();
        let rows = $crate::MAX_BINDS / 5;
        for chunk in metrics.chunks(rows) {
            let mut qb = sqlx::QueryBuilder::<$DB>::new(
                "INSERT INTO metrics (task_id, name, value, half_width, n) ",
            );
            qb.push_values(chunk, |mut b, (id, m)| {
                b.push_bind(*id)
                    .push_bind(m.name.as_str())
                    .push_bind(m.value)
                    .push_bind(m.half_width.filter(|h| !h.is_nan()))
                    .push_bind(m.n);
            });
            qb.build()
                .persistent($crate::keep_prepared(chunk.len(), rows))
                .execute(&mut *$tx)
                .await
                .map_err($crate::db("record metrics"))?;
        }

        let series: Vec<(i64, i64, &$crate::SeriesPointRow)> = records
            .iter()
            .flat_map(|t| {
                let id = ids[t.key.as_str()];
                t.series
                    .iter()
                    .enumerate()
                    .map(move |(i, p)| (id, i as i64, p))
            })
            .collect();
        for chunk in series.chunks(rows) {
            let mut qb =
                sqlx::QueryBuilder::<$DB>::new("INSERT INTO series (task_id, idx, name, x, y) ");
            qb.push_values(chunk, |mut b, (id, idx, p)| {
                b.push_bind(*id)
                    .push_bind(*idx)
                    .push_bind(p.name.as_str())
                    .push_bind(p.x)
                    .push_bind(p.y);
            });
            qb.build()
                .persistent($crate::keep_prepared(chunk.len(), rows))
                .execute(&mut *$tx)
                .await
                .map_err($crate::db("record series"))?;
        }

        let rows = $crate::MAX_BINDS / 2;
        for chunk in given.chunks(rows) {
            let mut qb = sqlx::QueryBuilder::<$DB>::new("INSERT INTO run_tasks (run_id, task_id) ");
            qb.push_values(chunk, |mut b, (run, t)| {
                b.push_bind(*run).push_bind(ids[t.key.as_str()]);
            });
            qb.push(" ON CONFLICT (run_id, task_id) DO NOTHING");
            qb.build()
                .persistent($crate::keep_prepared(chunk.len(), rows))
                .execute(&mut *$tx)
                .await
                .map_err(|source| $crate::StoreError::Db {
                    context: match chunk {
                        [(run, t)] => format!("link task {} to run {run}", t.key),
                        _ => format!("link {} tasks to their runs", chunk.len()),
                    },
                    source,
                })?;
        }
    }};
}
pub(crate) use write_tasks;
