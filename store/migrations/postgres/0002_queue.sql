-- The task queue (schema_version 2): tasks waiting for pull-based workers
-- (`repro worker`, `repro run --executor queue|slurm`). One row per task key.
-- A worker claims a pending row under a lease (`lease_until`, Unix time in
-- milliseconds) that it renews while the task runs; a running row whose lease
-- has expired (its worker died) is claimed again by another worker. The result
-- itself goes to `tasks`, in the same transaction that marks the row done.
-- Identical in migrations/postgres (the queries are shared).
CREATE TABLE queue (
    task_key    TEXT             PRIMARY KEY,
    spec        TEXT             NOT NULL,
    priority    DOUBLE PRECISION NOT NULL,
    state       TEXT             NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed')),
    run_id      BIGINT           NOT NULL REFERENCES runs (id),
    worker      TEXT,
    lease_until BIGINT,
    attempts    BIGINT           NOT NULL,
    enqueued    TEXT             NOT NULL,
    started     TEXT,
    finished    TEXT,
    error       TEXT
);
CREATE INDEX queue_claim ON queue (state, priority);

UPDATE meta SET value = '2' WHERE key = 'schema_version';
