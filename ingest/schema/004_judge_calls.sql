-- gymlens warehouse, schema version 4: judge calls made by `gymlens judge`.
-- Every answer is kept, valid or not; the key of a call is what determines
-- its answer (model, parameters, prompt version, rendered input), so that a
-- rerun with nothing changed asks nothing. Valid answers are also written
-- to judgments (with file_id 0: written by gymlens, not read from a file).
CREATE TABLE judge_calls (
    model          VARCHAR NOT NULL,
    params         VARCHAR NOT NULL,  -- canonical JSON of the answer-changing parameters
    prompt         VARCHAR NOT NULL,  -- prompt version, e.g. tc/v1
    input_hash     VARCHAR NOT NULL,  -- sha256 of the rendered prompt
    judge          VARCHAR NOT NULL,  -- the judge's name
    run_id         VARCHAR NOT NULL,
    task           VARCHAR NOT NULL,  -- '' for run-level metrics
    metric         VARCHAR NOT NULL,
    status         VARCHAR NOT NULL,  -- valid or invalid
    reason         VARCHAR,           -- why invalid
    answer         VARCHAR,           -- the judge's reply as received
    input_tokens   BIGINT,
    output_tokens  BIGINT,
    cost_usd       DOUBLE,            -- NULL: price unknown
    attempts       INTEGER NOT NULL,
    latency_ms     DOUBLE,
    created_at     TIMESTAMPTZ NOT NULL
);
