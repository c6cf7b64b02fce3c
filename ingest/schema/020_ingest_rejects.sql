-- gymlens warehouse, schema version 20: how many of an ingest's rejected
-- records its rejects file leaves out (--max-rejects and the size limits
-- of the rejects file, docs/format.md). Ingests before it wrote every
-- rejected record: 0. Nothing the run inputs come from changes:
-- keeps the run inputs
ALTER TABLE ingests ADD COLUMN rejects_unwritten BIGINT DEFAULT 0;
