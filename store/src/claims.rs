//! The claim ledger: each claim's definition with every run that evaluated it
//! (migration 0003). A definition is recorded once, by its hash, with the run
//! and time it was first evaluated; each evaluation adds a row with the run,
//! the fidelity and the verdict. Reading a claim's history gives its earlier
//! definitions that had results.

use crate::{begin_write, db, now_rfc3339, on_pool, Result, Store};
use serde::{Deserialize, Serialize};
use verdicts::Verdict;

/// One claim's evaluation in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRecord {
    pub experiment: String,
    pub version: i64,
    pub claim_id: String,
    /// SHA-256 of `definition`.
    pub hash: String,
    /// Canonical JSON of the definition.
    pub definition: String,
    pub verdict: Verdict,
}

/// One definition of a claim that was evaluated, with when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimDefinitionRow {
    pub experiment: String,
    pub claim_id: String,
    pub hash: String,
    pub definition: String,
    /// When it was first evaluated (RFC 3339).
    pub first_seen: String,
    /// When it was last evaluated.
    pub last_evaluated: String,
    pub evaluations: i64,
    /// The verdict of its last evaluation.
    pub last_verdict: Verdict,
}

type DefTuple = (String, String, String, String, String, String, i64, String);

/// The last evaluation of one definition of a claim at one fidelity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimLastVerdict {
    pub claim_id: String,
    pub hash: String,
    pub fidelity: String,
    pub verdict: Verdict,
    /// When (RFC 3339).
    pub evaluated: String,
}

impl Store {
    /// Records the evaluations of one run (at one fidelity): each definition
    /// once, each evaluation once per run and fidelity (a later evaluation in
    /// the same run replaces it).
    pub async fn record_claims(
        &self,
        run: i64,
        fidelity: &str,
        rows: &[ClaimRecord],
    ) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        let now = now_rfc3339();
        on_pool!(self, |pool, DB| {
            let mut tx = begin_write(self, pool, None).await?;
            for r in rows {
                sqlx::query(
                    "INSERT INTO claim_definitions (experiment, claim_id, hash, definition, first_run, first_seen) \
                     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (experiment, claim_id, hash) DO NOTHING",
                )
                .bind(&r.experiment)
                .bind(&r.claim_id)
                .bind(&r.hash)
                .bind(&r.definition)
                .bind(run)
                .bind(&now)
                .execute(&mut *tx)
                .await
                .map_err(db("record a claim definition"))?;
                sqlx::query(
                    "INSERT INTO claim_evaluations (run_id, experiment, version, claim_id, hash, fidelity, verdict, evaluated) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (run_id, experiment, claim_id, fidelity) DO UPDATE SET \
                       version = excluded.version, hash = excluded.hash, \
                       verdict = excluded.verdict, evaluated = excluded.evaluated",
                )
                .bind(run)
                .bind(&r.experiment)
                .bind(r.version)
                .bind(&r.claim_id)
                .bind(&r.hash)
                .bind(fidelity)
                .bind(r.verdict.as_str())
                .bind(&now)
                .execute(&mut *tx)
                .await
                .map_err(db("record a claim evaluation"))?;
            }
            tx.commit().await.map_err(db("commit claim evaluations"))?;
            Ok(())
        })
    }

    /// The last evaluation of each definition of each claim of an experiment,
    /// per fidelity.
    pub async fn claim_last_verdicts(&self, experiment: &str) -> Result<Vec<ClaimLastVerdict>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<(String, String, String, String, String)> = sqlx::query_as(
                "SELECT e.claim_id, e.hash, e.fidelity, e.verdict, e.evaluated \
                 FROM claim_evaluations e \
                 WHERE e.experiment = $1 AND NOT EXISTS ( \
                   SELECT 1 FROM claim_evaluations l \
                    WHERE l.experiment = e.experiment AND l.claim_id = e.claim_id \
                      AND l.hash = e.hash AND l.fidelity = e.fidelity \
                      AND (l.evaluated > e.evaluated OR (l.evaluated = e.evaluated AND l.run_id > e.run_id))) \
                 ORDER BY e.claim_id, e.fidelity",
            )
            .bind(experiment)
            .fetch_all(pool)
            .await
            .map_err(db("read the last claim verdicts"))?;
            Ok(rows
                .into_iter()
                .map(|t| ClaimLastVerdict {
                    claim_id: t.0,
                    hash: t.1,
                    fidelity: t.2,
                    // Text that names no verdict (edited by hand) never reads as a pass.
                    verdict: t.3.parse().unwrap_or(Verdict::Inconclusive),
                    evaluated: t.4,
                })
                .collect())
        })
    }

    /// Every definition of every claim of an experiment that was evaluated,
    /// oldest first within a claim.
    pub async fn claim_definitions(&self, experiment: &str) -> Result<Vec<ClaimDefinitionRow>> {
        on_pool!(self, |pool, DB| {
            let rows: Vec<DefTuple> = sqlx::query_as(
                "SELECT d.experiment, d.claim_id, d.hash, d.definition, d.first_seen, \
                        MAX(e.evaluated), COUNT(e.run_id), \
                        (SELECT e2.verdict FROM claim_evaluations e2 \
                          WHERE e2.experiment = d.experiment AND e2.claim_id = d.claim_id AND e2.hash = d.hash \
                          ORDER BY e2.evaluated DESC, e2.run_id DESC LIMIT 1) \
                 FROM claim_definitions d JOIN claim_evaluations e \
                   ON e.experiment = d.experiment AND e.claim_id = d.claim_id AND e.hash = d.hash \
                 WHERE d.experiment = $1 \
                 GROUP BY d.experiment, d.claim_id, d.hash, d.definition, d.first_seen, d.first_run \
                 ORDER BY d.claim_id, d.first_run, d.first_seen",
            )
            .bind(experiment)
            .fetch_all(pool)
            .await
            .map_err(db("read claim definitions"))?;
            Ok(rows
                .into_iter()
                .map(|t| ClaimDefinitionRow {
                    experiment: t.0,
                    claim_id: t.1,
                    hash: t.2,
                    definition: t.3,
                    first_seen: t.4,
                    last_evaluated: t.5,
                    evaluations: t.6,
                    // Text that names no verdict (edited by hand) never reads as a pass.
                    last_verdict: t.7.parse().unwrap_or(Verdict::Inconclusive),
                })
                .collect())
        })
    }
}
