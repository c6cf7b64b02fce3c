-- gymlens warehouse, schema version 6: PARE and Meta-ARE runs.
-- Their traces have no Proactivity-Gym scenario spec, so they live in
-- their own tables; every row keeps the file it came from.
CREATE TABLE pare_runs (
    run_id        VARCHAR NOT NULL,  -- <scenario>_run_<n> | <observe model> | <user model>
    source        VARCHAR NOT NULL,  -- pare or are
    scenario      VARCHAR NOT NULL,
    run_number    INTEGER,           -- NULL: not given
    config_id     VARCHAR NOT NULL,  -- "observe model | user model" (PARE) or the agent's model (ARE)
    user_model    VARCHAR,
    observe_model VARCHAR,
    execute_model VARCHAR,
    agent         VARCHAR,           -- metadata.simulation.agent_id
    start_t       DOUBLE,            -- seconds (Unix time) of the first and last completed event
    end_t         DOUBLE,
    events        INTEGER NOT NULL,
    skip_reason   VARCHAR,           -- why PARE leaves the trace out (a RateLimitError), or NULL
    metadata      JSON,              -- the trace's own metadata, as read
    file_id       INTEGER NOT NULL
);

CREATE TABLE pare_events (
    run_id         VARCHAR NOT NULL,
    seq            INTEGER NOT NULL,  -- position in time order
    t              DOUBLE NOT NULL,   -- event_time (Unix seconds)
    event_type     VARCHAR NOT NULL,  -- ENV, USER, AGENT, …
    actor          VARCHAR NOT NULL,  -- env, user, observe, execute or agent
    app            VARCHAR,           -- app instance name
    app_class      VARCHAR,           -- its class (PAS… in older traces, PARE… in newer)
    function       VARCHAR,
    operation      VARCHAR,           -- READ or WRITE
    args           JSON,
    proactive_mode VARCHAR,           -- observe, execute or NULL
    turn           INTEGER,
    return_value   VARCHAR,
    exception      VARCHAR,
    file_id        INTEGER NOT NULL
);

CREATE TABLE decision_points (
    run_id            VARCHAR NOT NULL,
    sample_id         VARCHAR NOT NULL,  -- PARE's: <scenario>_run_<n>_p<k>
    decision_class    VARCHAR NOT NULL,  -- accept, reject or gather_context
    final_decision    BOOLEAN NOT NULL,  -- accepted in the end
    proposal          VARCHAR,
    proposal_t        DOUBLE,
    decision_t        DOUBLE,
    input_messages    INTEGER,           -- the user model's input when shown the proposal
    context_calls     INTEGER,           -- the user's tool calls before deciding
    context_messages  INTEGER,           -- messages gathered before deciding (NULL for a direct decision)
    file_id           INTEGER NOT NULL
);
