-- gymlens warehouse, schema version 17: each run's trajectory as one
-- value. One row per run: its events, as a run page reads them from
-- events, encoded and compressed by gymlens (ingest/packs.go), with their
-- number. A cold run page reads one value instead of a vector of each of
-- fifteen columns. Derived from events: an ingest deletes the packs of
-- the runs it writes events for, in its own transaction; gymlens serve
-- packs the runs without one when it starts; a reader uses a pack only
-- when its number of events is what run_spans counts for the run, and
-- reads the columns otherwise. Nothing the run inputs come from changes:
-- keeps the run inputs
CREATE TABLE event_packs (
    run_id   VARCHAR NOT NULL,
    events   BIGINT NOT NULL,
    pack     BLOB NOT NULL
);
