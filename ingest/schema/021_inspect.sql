-- gymlens warehouse, schema version 21: Inspect AI evaluations
-- (docs/inspect.md). Their samples have no Proactivity-Gym scenario
-- spec and no PARE trace, so they live in tables of their own; every row
-- keeps the file it came from. JSON columns hold what the log wrote, with
-- NaN and the infinities as the strings "NaN", "Infinity", "-Infinity".
-- keeps the run inputs
CREATE TABLE inspect_evals (
    eval_id           VARCHAR NOT NULL,  -- eval.eval_id (older logs: run_id/task_id)
    run_id            VARCHAR,
    task              VARCHAR NOT NULL,  -- the task: a dimension of its own
    task_id           VARCHAR,
    task_version      VARCHAR,
    created           VARCHAR,
    model             VARCHAR NOT NULL,
    model_args        JSON,
    harness           VARCHAR NOT NULL,  -- eval.solver (an agent), else the plan's solvers joined by "+"
    harness_args      JSON,
    effort            VARCHAR NOT NULL,  -- reasoning_effort of the model args or generate config; none
    config_id         VARCHAR NOT NULL,  -- "model | harness | effort"
    status            VARCHAR NOT NULL,  -- started, success, cancelled, error
    error             VARCHAR,           -- the eval's error message
    incomplete        VARCHAR,           -- why the log is unfinished (no header.json), or NULL
    log_version       INTEGER NOT NULL,
    format            VARCHAR NOT NULL,  -- eval or json
    epochs            INTEGER,
    reducers          VARCHAR,           -- config.epochs_reducer, joined by ","; NULL: Inspect's default (mean)
    total_samples     INTEGER,
    completed_samples INTEGER,
    has_results       BOOLEAN NOT NULL,  -- false: no results section (not a zero)
    started_at        VARCHAR,
    completed_at      VARCHAR,
    samples           INTEGER NOT NULL,  -- sample × epoch rows read
    duplicates        INTEGER NOT NULL,  -- sample entries written twice (the last kept)
    spec              JSON,
    plan              JSON,
    stats             JSON,
    file_id           INTEGER NOT NULL
);

-- One row per sample and epoch.
CREATE TABLE inspect_samples (
    eval_id       VARCHAR NOT NULL,
    sample_id     VARCHAR NOT NULL,  -- unique within the task only
    epoch         INTEGER NOT NULL,
    uuid          VARCHAR,
    layout        VARCHAR NOT NULL,  -- entry, chunked, summary (no sample entry), json
    entry         VARCHAR NOT NULL,  -- where it was read
    input_tokens  BIGINT,            -- summed over the sample's models
    output_tokens BIGINT,
    total_tokens  BIGINT,
    total_time    DOUBLE,            -- seconds
    working_time  DOUBLE,
    started_at    VARCHAR,
    completed_at  VARCHAR,
    messages      INTEGER NOT NULL,  -- the final conversation's messages
    turns         INTEGER,           -- turn_count, when written
    events        INTEGER NOT NULL,
    model_events  INTEGER NOT NULL,
    tool_events   INTEGER NOT NULL,
    tool_errors   INTEGER NOT NULL,
    attachments   INTEGER NOT NULL,
    pool_messages INTEGER NOT NULL,
    pool_calls    INTEGER NOT NULL,
    retries       INTEGER NOT NULL,  -- error_retries: earlier attempts that errored
    limit_type    VARCHAR,           -- the limit that stopped it (message, token, time, …)
    limit_value   DOUBLE,
    error         VARCHAR,
    metadata      JSON,
    input         JSON,
    target        JSON,
    file_id       INTEGER NOT NULL
);

-- Tokens per sample, epoch and model.
CREATE TABLE inspect_usage (
    eval_id       VARCHAR NOT NULL,
    sample_id     VARCHAR NOT NULL,
    epoch         INTEGER NOT NULL,
    model         VARCHAR NOT NULL,
    input_tokens  BIGINT,
    output_tokens BIGINT,
    total_tokens  BIGINT,
    cache_read    BIGINT,
    cache_write   BIGINT,
    reasoning     BIGINT,
    file_id       INTEGER NOT NULL
);

-- Each scorer's value per sample and epoch (a dict value: one row per key).
CREATE TABLE inspect_scores (
    eval_id     VARCHAR NOT NULL,
    sample_id   VARCHAR NOT NULL,
    epoch       INTEGER NOT NULL,
    scorer      VARCHAR NOT NULL,
    key         VARCHAR,           -- the dict value's key, or NULL
    metric      VARCHAR NOT NULL,  -- inspect.SCORER or inspect.SCORER.KEY
    value       DOUBLE,            -- value_to_float's number; NULL when it gives none (never 0 for it)
    raw         JSON,              -- the value as written
    answer      VARCHAR,
    explanation VARCHAR,
    file_id     INTEGER NOT NULL
);

-- A sample's trajectory and pools, one item a row: its final
-- conversation's messages, its events (model events keep their pool
-- references), the message and call pools, its attachments.
CREATE TABLE inspect_items (
    eval_id   VARCHAR NOT NULL,
    sample_id VARCHAR NOT NULL,
    epoch     INTEGER NOT NULL,
    kind      VARCHAR NOT NULL,  -- message, event, pool_message, pool_call, attachment
    idx       INTEGER NOT NULL,  -- position in its sequence
    key       VARCHAR,           -- an attachment's key
    type      VARCHAR,           -- a message's role, an event's type
    data      JSON NOT NULL,
    file_id   INTEGER NOT NULL
);

-- The metrics the log's results store, per score.
CREATE TABLE inspect_results (
    eval_id          VARCHAR NOT NULL,
    score            VARCHAR NOT NULL,  -- EvalScore.name
    scorer           VARCHAR,
    reducer          VARCHAR,
    metric           VARCHAR NOT NULL,
    value            DOUBLE,
    params           JSON,
    scored_samples   INTEGER,
    unscored_samples INTEGER,
    file_id          INTEGER NOT NULL
);

-- The epoch-reduced values reductions.json stores.
CREATE TABLE inspect_reductions (
    eval_id   VARCHAR NOT NULL,
    scorer    VARCHAR NOT NULL,
    reducer   VARCHAR,
    sample_id VARCHAR NOT NULL,
    key       VARCHAR,
    value     DOUBLE,
    raw       JSON,
    file_id   INTEGER NOT NULL
);
