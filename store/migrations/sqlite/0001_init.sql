-- Initial schema of the repro result store (schema_version 1).
-- Types are spelled so that the PostgreSQL migration can use the same names
-- (BIGINT, DOUBLE PRECISION, TEXT); SQLite maps them to INTEGER/REAL/TEXT affinity.

-- Key/value facts about the store itself. `schema_version` is read before
-- migrations run, so that a binary refuses a store written by a newer one.
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO meta (key, value) VALUES ('schema_version', '1');

-- One row per experiment version (manifest id + manifest version).
CREATE TABLE experiments (
    id            TEXT   NOT NULL,
    version       BIGINT NOT NULL,
    title         TEXT   NOT NULL,
    manifest_hash TEXT   NOT NULL,
    manifest_text TEXT   NOT NULL,
    PRIMARY KEY (id, version)
);

-- One row per `repro run/check` invocation (provenance).
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    started      TEXT NOT NULL,
    finished     TEXT,
    code_version TEXT NOT NULL,
    host         TEXT NOT NULL,
    args         TEXT NOT NULL,
    status       TEXT NOT NULL
);

-- The task cache: one row per task key (hash of solver, version, params, seed).
CREATE TABLE tasks (
    key            TEXT PRIMARY KEY,
    solver         TEXT             NOT NULL,
    solver_version BIGINT           NOT NULL,
    params         TEXT             NOT NULL,
    seed           BIGINT           NOT NULL,
    fidelity       TEXT             NOT NULL,
    status         TEXT             NOT NULL CHECK (status IN ('done', 'saturated', 'undefined', 'failed')),
    wall_ms        DOUBLE PRECISION NOT NULL,
    error          TEXT,
    created        TEXT             NOT NULL
);
CREATE INDEX tasks_solver ON tasks (solver, solver_version);

CREATE TABLE metrics (
    task_key   TEXT             NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    name       TEXT             NOT NULL,
    value      DOUBLE PRECISION NOT NULL,
    half_width DOUBLE PRECISION,
    n          BIGINT,
    PRIMARY KEY (task_key, name)
);

-- `idx` is the position of the point in the task's series list, so the
-- order a solver produced is the order read back.
CREATE TABLE series (
    task_key TEXT             NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    idx      BIGINT           NOT NULL,
    name     TEXT             NOT NULL,
    x        DOUBLE PRECISION NOT NULL,
    y        DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (task_key, idx)
);

-- Which runs produced (or re-produced) which task.
CREATE TABLE run_tasks (
    run_id   BIGINT NOT NULL REFERENCES runs (id),
    task_key TEXT   NOT NULL REFERENCES tasks (key) ON DELETE CASCADE,
    PRIMARY KEY (run_id, task_key)
);
CREATE INDEX run_tasks_task ON run_tasks (task_key);

-- Which task serves which point/series/replication of an experiment version.
-- No foreign key to tasks: the plan is written before its tasks have run.
CREATE TABLE plan (
    experiment  TEXT   NOT NULL,
    version     BIGINT NOT NULL,
    point       TEXT   NOT NULL,
    point_index BIGINT NOT NULL,
    series      TEXT   NOT NULL,
    replication BIGINT NOT NULL,
    task_key    TEXT   NOT NULL,
    PRIMARY KEY (experiment, version, point_index, series, replication)
);
CREATE INDEX plan_task ON plan (task_key);

-- Error measures of one experiment version; `seq` keeps the caller's order.
CREATE TABLE error_measures (
    experiment           TEXT   NOT NULL,
    version              BIGINT NOT NULL,
    seq                  BIGINT NOT NULL,
    metric               TEXT   NOT NULL,
    reference            TEXT   NOT NULL,
    candidate            TEXT   NOT NULL,
    point                TEXT   NOT NULL,
    point_index          BIGINT NOT NULL,
    reference_value      DOUBLE PRECISION,
    reference_half_width DOUBLE PRECISION,
    candidate_value      DOUBLE PRECISION,
    em                   DOUBLE PRECISION,
    tolerance            DOUBLE PRECISION,
    verdict              TEXT   NOT NULL,
    PRIMARY KEY (experiment, version, seq)
);
