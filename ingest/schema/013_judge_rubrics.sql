-- gymlens warehouse, schema version 13: user rubrics and repeated asks.
-- judge_rubrics keeps each rubric `gymlens judge --prompt` judged with (one
-- row per prompt version): the metric it makes (custom.NAME), the item it
-- judges and its level, its score fields with their ranges, and its text,
-- so that the metrics and their scales are known without the file.
CREATE TABLE judge_rubrics (
    prompt      VARCHAR PRIMARY KEY,  -- NAME/vN
    metric      VARCHAR NOT NULL,     -- custom.NAME
    item        VARCHAR NOT NULL,     -- tc, trj, ta, task or run
    level       VARCHAR NOT NULL,     -- task or run
    scores      JSON NOT NULL,        -- [{name, min, max, levels}]
    digest      VARCHAR NOT NULL,     -- sha256 of what shapes a request
    text        VARCHAR NOT NULL,     -- the rubric file as read
    created_at  TIMESTAMPTZ NOT NULL
);
-- The scores of each valid answer, by the warehouse's names (judgments
-- columns for built-in scores, field names for a rubric's), so that the
-- answers of repeated asks (--repeats) can be averaged and compared
-- without parsing the replies again. NULL for invalid answers and for
-- answers stored before.
ALTER TABLE judge_calls ADD COLUMN scores JSON;
