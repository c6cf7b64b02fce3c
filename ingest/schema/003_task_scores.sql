-- gymlens warehouse, schema version 3: deterministic rescoring.
-- One row per active task: what the trajectory implies (derived_*), and
-- the values the metrics use (effective_*): the logged ones unless absent,
-- or the derived ones when `gymlens score --prefer derived` said so.
CREATE TABLE task_scores (
    run_id                VARCHAR NOT NULL,
    task                  VARCHAR NOT NULL,
    derived_expected      VARCHAR NOT NULL,
    derived_chosen        VARCHAR NOT NULL,
    derived_evidence      DOUBLE,
    derived_outputs       DOUBLE,
    derived_constraints   DOUBLE,
    effective_expected    VARCHAR NOT NULL,
    effective_chosen      VARCHAR NOT NULL,
    effective_evidence    DOUBLE,
    effective_outputs     DOUBLE,
    effective_constraints DOUBLE,
    prefer                VARCHAR NOT NULL,  -- logged or derived
    scored_at             TIMESTAMPTZ NOT NULL
);
