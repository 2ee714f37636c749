//! Plans: which task serves which point, series and replication of an
//! experiment version.

use sqlx::QueryBuilder;

use crate::{begin_write, db, on_pool, PlanRow, Result, Store, StoreError, MAX_BINDS};

impl Store {
    /// Replaces the plan (point/series -> task) of one experiment version.
    /// Every row must carry that experiment and version.
    pub async fn replace_plan(
        &self,
        experiment: &str,
        version: i64,
        rows: &[PlanRow],
    ) -> Result<()> {
        self.replace_plan_rows(experiment, version, rows.iter().cloned())
            .await
    }

    /// [`Store::replace_plan`] from rows made while they are written: a plan
    /// at the task limit has 10⁶ rows, and only one statement's worth of them
    /// is held at a time. A row of another experiment or version is an error
    /// and leaves the stored plan as it was.
    pub async fn replace_plan_rows<I>(&self, experiment: &str, version: i64, rows: I) -> Result<()>
    where
        I: IntoIterator<Item = PlanRow>,
        I::IntoIter: Send,
    {
        let mut rows = rows.into_iter();
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(self, pool, Some(experiment)).await?;
            sqlx::query("DELETE FROM plan WHERE experiment = $1 AND version = $2")
                .bind(experiment)
                .bind(version)
                .execute(&mut *tx)
                .await
                .map_err(db("delete old plan"))?;
            let mut chunk: Vec<PlanRow> = Vec::with_capacity(MAX_BINDS / 7);
            loop {
                chunk.clear();
                chunk.extend(rows.by_ref().take(MAX_BINDS / 7));
                if chunk.is_empty() {
                    break;
                }
                if let Some(r) = chunk
                    .iter()
                    .find(|r| r.experiment != experiment || r.version != version)
                {
                    // Dropping `tx` rolls the delete back.
                    return Err(StoreError::Invalid(format!(
                        "replace plan of {experiment} v{version}: got a row of {} v{}",
                        r.experiment, r.version
                    )));
                }
                let mut qb = QueryBuilder::<DB>::new(
                    "INSERT INTO plan \
                     (experiment, version, point, point_index, series, replication, task_key) ",
                );
                qb.push_values(&chunk, |mut b, r| {
                    b.push_bind(r.experiment.as_str())
                        .push_bind(r.version)
                        .push_bind(r.point.as_str())
                        .push_bind(r.point_index)
                        .push_bind(r.series.as_str())
                        .push_bind(r.replication)
                        .push_bind(r.task_key.as_str());
                });
                qb.build()
                    .execute(&mut *tx)
                    .await
                    .map_err(db("write plan"))?;
            }
            tx.commit().await.map_err(db("commit plan"))?;
            Ok(())
        })
    }

    /// The plan of one experiment version, ordered by point index, series,
    /// replication. Empty if none was stored.
    pub async fn plan(&self, experiment: &str, version: i64) -> Result<Vec<PlanRow>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<(String, i64, String, i64, String)> = sqlx::query_as(
                "SELECT point, point_index, series, replication, task_key \
                 FROM plan WHERE experiment = $1 AND version = $2",
            )
            .bind(experiment)
            .bind(version)
            .fetch_all(pool)
            .await
            .map_err(db("read plan"))?;
            let mut out: Vec<PlanRow> = rows
                .into_iter()
                .map(
                    |(point, point_index, series, replication, task_key)| PlanRow {
                        experiment: experiment.to_string(),
                        version,
                        point,
                        point_index,
                        series,
                        replication,
                        task_key,
                    },
                )
                .collect();
            out.sort_by(|a, b| {
                (a.point_index, &a.series, a.replication).cmp(&(
                    b.point_index,
                    &b.series,
                    b.replication,
                ))
            });
            Ok(out)
        })
    }
}
