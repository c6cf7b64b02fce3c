-- gymlens warehouse, schema version 11: annotation queues, the items
-- `gymlens serve` shows on /annotate/{queue}, and the annotators' answers,
-- one row per (queue, item, annotator, question), replaced when edited.
CREATE TABLE annotation_queues (
    queue       VARCHAR PRIMARY KEY,
    kind        VARCHAR NOT NULL,    -- ratings (tasks or runs rated on questions) or pare (PARE samples)
    k           INTEGER NOT NULL,    -- annotators each item needs
    questions   VARCHAR[] NOT NULL,
    source      VARCHAR NOT NULL,    -- where the items came from
    created_at  TIMESTAMPTZ NOT NULL
);

CREATE TABLE annotation_items (
    queue       VARCHAR NOT NULL,
    item        VARCHAR NOT NULL,    -- run_id, run_id#task, or the PARE sample id
    position    INTEGER NOT NULL,    -- tutorial items first
    run_id      VARCHAR,
    task        VARCHAR,
    sample_id   VARCHAR,
    tutorial    BOOLEAN NOT NULL,
    context     VARCHAR,             -- what the rater is shown
    answer_key  JSON,                -- tutorial items: question → the expected answer
    PRIMARY KEY (queue, item)
);

CREATE TABLE annotation_answers (
    queue       VARCHAR NOT NULL,
    item        VARCHAR NOT NULL,
    annotator   VARCHAR NOT NULL,
    question    VARCHAR NOT NULL,
    value       DOUBLE,              -- a rating
    choice      VARCHAR,             -- a PARE decision
    answered_at TIMESTAMPTZ NOT NULL
);
