-- The claim ledger (schema_version 3). `claim_definitions` keeps every
-- definition of a claim that was ever evaluated (its canonical JSON: quote,
-- where, entries, predicate or tolerance, points, expectation, why; `hash` is
-- its SHA-256), with the run and time it was first evaluated.
-- `claim_evaluations` keeps each evaluation: which run, fidelity and verdict.
-- A claim widened, narrowed, re-aimed, removed or with its expectation
-- flipped after results existed is found here by its earlier definitions.
-- Identical in migrations/postgres (the queries are shared).
CREATE TABLE claim_definitions (
    experiment TEXT   NOT NULL,
    claim_id   TEXT   NOT NULL,
    hash       TEXT   NOT NULL,
    definition TEXT   NOT NULL,
    first_run  BIGINT NOT NULL REFERENCES runs (id),
    first_seen TEXT   NOT NULL,
    PRIMARY KEY (experiment, claim_id, hash)
);

CREATE TABLE claim_evaluations (
    run_id     BIGINT NOT NULL REFERENCES runs (id),
    experiment TEXT   NOT NULL,
    version    BIGINT NOT NULL,
    claim_id   TEXT   NOT NULL,
    hash       TEXT   NOT NULL,
    fidelity   TEXT   NOT NULL,
    verdict    TEXT   NOT NULL CHECK (verdict IN ('holds', 'fails', 'inconclusive')),
    evaluated  TEXT   NOT NULL,
    PRIMARY KEY (run_id, experiment, claim_id, fidelity)
);
CREATE INDEX claim_evaluations_claim ON claim_evaluations (experiment, claim_id);

UPDATE meta SET value = '3' WHERE key = 'schema_version';
