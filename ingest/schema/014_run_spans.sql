-- gymlens warehouse, schema version 14: where each run's events lie.
-- One row per run and file its events came from: the file and the first
-- and last line of them, so that a run's trajectory is read from the few
-- row groups that hold those lines (DuckDB prunes by the integer columns'
-- min and max, where a run id's long shared prefixes prune nothing), not
-- from every event. Events without a line have lo and hi NULL: those runs
-- are read by run id alone.
CREATE TABLE run_spans (
    run_id   VARCHAR NOT NULL,
    file_id  INTEGER NOT NULL,
    lo       INTEGER,
    hi       INTEGER,
    events   BIGINT NOT NULL
);
INSERT INTO run_spans
SELECT run_id, file_id, CASE WHEN count(src_line) = count(*) THEN min(src_line) END,
       CASE WHEN count(src_line) = count(*) THEN max(src_line) END, count(*)
FROM events GROUP BY ALL;
