-- gymlens warehouse, schema version 16: each run's inputs to the metrics
-- (its active tasks with their depths, rule scores and judgments, its TA
-- and rubric judgments) as one encoded value, in the order LoadRuns gives
-- them, so that reading every run's is one scan of a row per run. Derived
-- from the other tables, and used only while meta's row run_inputs names
-- the encoding: every write to those tables deletes that row, and
-- ingest, score and the judge rebuild them (ingest/inputs.go).
CREATE TABLE run_inputs (
    run_id   VARCHAR NOT NULL,
    inputs   BLOB NOT NULL
);
