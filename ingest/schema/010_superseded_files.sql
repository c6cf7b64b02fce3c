-- gymlens warehouse, schema version 10: a file some of whose records were
-- taken out of the warehouse after it was ingested (the logged judgments
-- of a judge that `gymlens judge --replace` judged again under the same
-- name) is marked superseded, so that ingesting it again reads it instead
-- of skipping it as already ingested, and restores those records.
ALTER TABLE ingested_files ADD COLUMN superseded BOOLEAN DEFAULT false;
