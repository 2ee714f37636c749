//! The record of what was drawn into each results folder: per figure and
//! table, the hash of what it shows and the code version that drew it (the
//! pipeline's render stage decides from it whether to draw an output again).

use sqlx::QueryBuilder;

use crate::{begin_write, db, now_rfc3339, on_pool, Result, Store, MAX_BINDS};

/// One output (figure or table) drawn into a results folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DrawnRow {
    /// The folder of one fidelity's pages, absolute.
    pub results: String,
    pub experiment: String,
    /// The figure's or table's id.
    pub output: String,
    pub version: i64,
    /// A hash of what the output shows.
    pub hash: String,
    pub code_version: String,
}

type DrawnTuple = (String, String, String, i64, String, String);

impl Store {
    /// What was drawn into the folder `results`, ordered by experiment and output.
    pub async fn drawn(&self, results: &str) -> Result<Vec<DrawnRow>> {
        let mut rows: Vec<DrawnRow> = on_pool!(self, |pool, DB| {
            let rows: Vec<DrawnTuple> = sqlx::query_as(
                "SELECT results, experiment, output, version, hash, code_version \
                 FROM drawn WHERE results = $1",
            )
            .bind(results)
            .fetch_all(pool)
            .await
            .map_err(db("read what was drawn"))?;
            rows.into_iter()
                .map(
                    |(results, experiment, output, version, hash, code_version)| DrawnRow {
                        results,
                        experiment,
                        output,
                        version,
                        hash,
                        code_version,
                    },
                )
                .collect()
        });
        rows.sort_by(|a, b| (&a.experiment, &a.output).cmp(&(&b.experiment, &b.output)));
        Ok(rows)
    }

    /// Records outputs as drawn (replacing what was recorded of each), in one
    /// transaction.
    pub async fn record_drawn(&self, rows: &[DrawnRow]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let at = now_rfc3339();
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(self, pool, None).await?;
            for chunk in rows.chunks(MAX_BINDS / 7) {
                let mut qb = QueryBuilder::<DB>::new(
                    "INSERT INTO drawn \
                     (results, experiment, output, version, hash, code_version, drawn_at) ",
                );
                qb.push_values(chunk, |mut b, r| {
                    b.push_bind(r.results.as_str())
                        .push_bind(r.experiment.as_str())
                        .push_bind(r.output.as_str())
                        .push_bind(r.version)
                        .push_bind(r.hash.as_str())
                        .push_bind(r.code_version.as_str())
                        .push_bind(at.as_str());
                });
                qb.push(
                    " ON CONFLICT (results, experiment, output) DO UPDATE SET \
                     version = excluded.version, hash = excluded.hash, \
                     code_version = excluded.code_version, drawn_at = excluded.drawn_at",
                );
                qb.build()
                    .execute(&mut *tx)
                    .await
                    .map_err(db("record what was drawn"))?;
            }
            tx.commit().await.map_err(db("commit what was drawn"))?;
            Ok(())
        })
    }
}
