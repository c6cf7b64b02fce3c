-- gymlens warehouse, schema version 8: what PARE and Meta-ARE report
-- about their runs (result rows and summary reports), and what gymlens
-- reads beside the events of a trace (capability, noise, apps, tokens).
ALTER TABLE pare_runs ADD COLUMN capability VARCHAR;     -- metadata.definition.config (Meta-ARE)
ALTER TABLE pare_runs ADD COLUMN app_set VARCHAR;        -- the app classes, sorted, joined by "+"
ALTER TABLE pare_runs ADD COLUMN tool_noise BOOLEAN;     -- has_tool_augmentation
ALTER TABLE pare_runs ADD COLUMN env_noise BOOLEAN;      -- has_env_events_augmentation
ALTER TABLE pare_runs ADD COLUMN llm_calls INTEGER;      -- llm_output log entries
ALTER TABLE pare_runs ADD COLUMN prompt_tokens BIGINT;   -- NULL: unknown (the export wrote zeros)
ALTER TABLE pare_runs ADD COLUMN completion_tokens BIGINT;
ALTER TABLE pare_runs ADD COLUMN reasoning_tokens BIGINT;

-- One row per scenario run a result file lists: PARE's *_result.json
-- rows, Meta-ARE's output.jsonl lines.
CREATE TABLE pare_results (
    result_id           VARCHAR NOT NULL,  -- <scenario>_run_<n> | <config_id>
    source              VARCHAR NOT NULL,  -- pare or are
    scenario            VARCHAR NOT NULL,
    run_number          INTEGER,
    config_id           VARCHAR NOT NULL,  -- PARE: proactive model | user model [| noise]; ARE: model
    status              VARCHAR NOT NULL,  -- success, failed, exception, no_validation
    success             DOUBLE,            -- 1, 0, or NULL (not validated)
    has_exception       BOOLEAN NOT NULL,
    exception_type      VARCHAR,
    exception_message   VARCHAR,
    rationale           VARCHAR,
    export_path         VARCHAR,           -- where the run's trace was written
    run_id              VARCHAR,           -- the ingested trace it links to, or NULL
    run_duration        DOUBLE,
    job_duration        DOUBLE,
    user_model          VARCHAR,
    proactive_model     VARCHAR,
    observe_model       VARCHAR,
    execute_model       VARCHAR,
    tool_failure_probability DOUBLE,
    env_events_per_minute    INTEGER,
    capability          VARCHAR,           -- ARE: execution, search, …
    phase               VARCHAR,           -- ARE: standard, agent2agent, noise
    proposal_count      INTEGER,           -- PARE's stored counts and rates
    acceptance_count    INTEGER,
    read_only_actions   INTEGER,
    write_actions       INTEGER,
    number_of_turns     INTEGER,
    proposal_rate       DOUBLE,
    acceptance_rate     DOUBLE,
    fields              JSON NOT NULL,     -- the row as written
    file_id             INTEGER NOT NULL,
    src_line            INTEGER NOT NULL
);

-- One row per configuration (PARE combined_result.json) or capability
-- (Meta-ARE benchmark_stats.json) of a summary report, with the
-- statistics as the report gives them.
CREATE TABLE pare_reports (
    source     VARCHAR NOT NULL,  -- pare or are
    kind       VARCHAR NOT NULL,  -- combined_result, benchmark_stats
    section    VARCHAR NOT NULL,  -- PARE: the configuration's config_id; ARE: a capability or "global"
    config_id  VARCHAR NOT NULL,  -- the configuration the section is about (ARE: metadata.model)
    stats      JSON NOT NULL,
    file_id    INTEGER NOT NULL,
    src_line   INTEGER NOT NULL
);
