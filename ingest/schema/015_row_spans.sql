-- gymlens warehouse, schema version 15: where each run's task outcomes
-- and file judgments lie, as run_spans (schema 14) says of its events.
-- One row per table, run and file: the file and the first and last line
-- of that run's rows of that table in it, so that a run page reads the
-- row groups holding those lines alone; an IN list of run ids is not
-- pushed into a scan and read all 1.2 million judgments of a --scale 10
-- warehouse. Rows without a line have lo and hi NULL (read by file and
-- run id). Judgments gymlens judge wrote (file_id 0) have no span: they
-- are read by file_id = 0, which prunes the row groups of every file.
-- A span may outlive rows deleted since (it then bounds nothing more);
-- every row read from a file has one.
CREATE TABLE row_spans (
    tbl      VARCHAR NOT NULL,  -- 'task_outcomes' or 'judgments'
    run_id   VARCHAR NOT NULL,
    file_id  INTEGER NOT NULL,
    lo       INTEGER,
    hi       INTEGER,
    n        BIGINT NOT NULL
);
INSERT INTO row_spans
SELECT 'task_outcomes', run_id, file_id, CASE WHEN count(src_line) = count(*) THEN min(src_line) END,
       CASE WHEN count(src_line) = count(*) THEN max(src_line) END, count(*)
FROM task_outcomes GROUP BY ALL;
INSERT INTO row_spans
SELECT 'judgments', run_id, file_id, CASE WHEN count(src_line) = count(*) THEN min(src_line) END,
       CASE WHEN count(src_line) = count(*) THEN max(src_line) END, count(*)
FROM judgments WHERE file_id <> 0 GROUP BY ALL;
