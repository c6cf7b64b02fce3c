-- gymlens warehouse, schema version 5: a second key for judge calls.
-- source_key names what a rendered input was made from (the run's and the
-- scenario's content hashes, the task, the depth the scores chose, the
-- prompt's version and text), so that a rerun can find a cached answer
-- without reading and rendering the trajectory. NULL for calls made before.
ALTER TABLE judge_calls ADD COLUMN source_key VARCHAR;
