-- What was drawn into a results folder (schema_version 4): one row per figure
-- or table, with a hash of what it shows and the code version that drew it,
-- so that `repro run` draws the other experiments of its index again only
-- when what they show changed (not by looking for files on disk).
-- Identical in migrations/sqlite and migrations/postgres (the queries are shared).
CREATE TABLE drawn (
    results      TEXT   NOT NULL,   -- the folder of one fidelity's pages, absolute
    experiment   TEXT   NOT NULL,
    output       TEXT   NOT NULL,   -- the figure's or table's id
    version      BIGINT NOT NULL,   -- the experiment version drawn
    hash         TEXT   NOT NULL,   -- SHA-256 of what the output shows
    code_version TEXT   NOT NULL,
    drawn_at     TEXT   NOT NULL,
    PRIMARY KEY (results, experiment, output)
);

UPDATE meta SET value = '4' WHERE key = 'schema_version';
