-- gymlens warehouse, schema version 7: PARE's annotation samples (one
-- decision point each, with the simulated user's decision and, for
-- tutorial samples, the correct one) and the human annotations of them.
CREATE TABLE pare_samples (
    sample_id           VARCHAR NOT NULL,
    scenario            VARCHAR,
    run_number          INTEGER,
    proactive_model     VARCHAR,
    user_model          VARCHAR,
    user_agent_decision VARCHAR NOT NULL,  -- the simulated user's: accept, reject or gather_context
    final_decision      BOOLEAN,
    tutorial            BOOLEAN,
    correct_decision    VARCHAR,           -- a human's answer key (tutorial samples)
    agent_proposal      VARCHAR,
    file_id             INTEGER NOT NULL
);

CREATE TABLE pare_annotations (
    annotation_id  VARCHAR,
    sample_id      VARCHAR NOT NULL,
    annotator      VARCHAR NOT NULL,
    human_decision VARCHAR NOT NULL,
    extra          JSON,               -- the file's other columns
    file_id        INTEGER NOT NULL,
    src_line       INTEGER
);
