-- gymlens warehouse, schema version 12: the batches `gymlens judge --batch`
-- submitted to an OpenAI-compatible Batches API, so that a later run
-- collects them (or waits for them) after any crash, and submits only
-- what they did not answer.
CREATE TABLE judge_batches (
    batch_id      VARCHAR PRIMARY KEY,
    judge         VARCHAR NOT NULL,
    model         VARCHAR NOT NULL,
    base_url      VARCHAR NOT NULL,
    metrics       VARCHAR NOT NULL,   -- comma-separated, as asked
    input_file_id VARCHAR NOT NULL,
    requests      INTEGER NOT NULL,
    status        VARCHAR NOT NULL,   -- the server's last word: validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled
    collected     BOOLEAN NOT NULL,   -- its answers are in the warehouse
    created_at    TIMESTAMPTZ NOT NULL,
    updated_at    TIMESTAMPTZ NOT NULL
);
