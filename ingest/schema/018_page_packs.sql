-- gymlens warehouse, schema version 18: the rest of each run page as one
-- value. One row per run: its rows of task_outcomes, task_scores and
-- judgments, as a run page reads them, encoded and compressed by gymlens
-- (ingest/pagepacks.go). Derived from those tables: every write to them
-- deletes the meta row page_packs (with run_inputs), a reader uses the
-- packs only while that row is there, and gymlens serve rebuilds them all
-- when it starts and finds them stale. Nothing the run inputs come from
-- changes:
-- keeps the run inputs
CREATE TABLE page_packs (
    run_id   VARCHAR NOT NULL,
    pack     BLOB NOT NULL
);
