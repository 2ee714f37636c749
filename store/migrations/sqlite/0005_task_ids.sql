-- Integer task ids (schema_version 5, issue 35). A task keeps its key (32
-- hex digits: its identity everywhere outside the store, and the column
-- every look-up by key uses) and gets an integer id in the order its first
-- result is stored; metrics, series and run_tasks refer to that id. Their
-- primary-key indexes then grow at their end as results arrive, instead of
-- taking each task's rows onto random pages of indexes keyed by text (a
-- quick check wrote about 1.5 GB of write-ahead log for a 119 MB store).
-- The plan and the queue keep the text key: a plan is written once per run
-- in one transaction, and a local run's queue rows live only while their
-- tasks run.
--
-- The tables are copied (SQLite cannot change a primary key in place):
-- existing tasks get ids in the order they were stored (rowid). Every
-- column and value is kept. Identical in migrations/postgres but for the
-- id's type (an identity there), the copy's order and the names given back.
CREATE TABLE tasks_v5 (
    id             INTEGER PRIMARY KEY,
    key            TEXT             NOT NULL UNIQUE,
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
INSERT INTO tasks_v5
    (key, solver, solver_version, params, seed, fidelity, status, wall_ms, error, created)
SELECT key, solver, solver_version, params, seed, fidelity, status, wall_ms, error, created
FROM tasks ORDER BY rowid;

CREATE TABLE metrics_v5 (
    task_id    BIGINT           NOT NULL REFERENCES tasks_v5 (id) ON DELETE CASCADE,
    name       TEXT             NOT NULL,
    value      DOUBLE PRECISION NOT NULL,
    half_width DOUBLE PRECISION,
    n          BIGINT,
    PRIMARY KEY (task_id, name)
);
INSERT INTO metrics_v5 (task_id, name, value, half_width, n)
SELECT t.id, m.name, m.value, m.half_width, m.n
FROM metrics m JOIN tasks_v5 t ON t.key = m.task_key ORDER BY t.id, m.name;

-- `idx` is the position of the point in the task's series list, so the
-- order a solver produced is the order read back.
CREATE TABLE series_v5 (
    task_id BIGINT           NOT NULL REFERENCES tasks_v5 (id) ON DELETE CASCADE,
    idx     BIGINT           NOT NULL,
    name    TEXT             NOT NULL,
    x       DOUBLE PRECISION NOT NULL,
    y       DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (task_id, idx)
);
INSERT INTO series_v5 (task_id, idx, name, x, y)
SELECT t.id, s.idx, s.name, s.x, s.y
FROM series s JOIN tasks_v5 t ON t.key = s.task_key ORDER BY t.id, s.idx;

-- Which runs produced (or re-produced) which task.
CREATE TABLE run_tasks_v5 (
    run_id  BIGINT NOT NULL REFERENCES runs (id),
    task_id BIGINT NOT NULL REFERENCES tasks_v5 (id) ON DELETE CASCADE,
    PRIMARY KEY (run_id, task_id)
);
INSERT INTO run_tasks_v5 (run_id, task_id)
SELECT r.run_id, t.id
FROM run_tasks r JOIN tasks_v5 t ON t.key = r.task_key ORDER BY r.run_id, t.id;

DROP TABLE run_tasks;
DROP TABLE series;
DROP TABLE metrics;
DROP TABLE tasks;
-- Renaming a table also renames it in the other tables' foreign keys.
ALTER TABLE tasks_v5 RENAME TO tasks;
ALTER TABLE metrics_v5 RENAME TO metrics;
ALTER TABLE series_v5 RENAME TO series;
ALTER TABLE run_tasks_v5 RENAME TO run_tasks;
CREATE INDEX tasks_solver ON tasks (solver, solver_version);
CREATE INDEX run_tasks_task ON run_tasks (task_id);

UPDATE meta SET value = '5' WHERE key = 'schema_version';
