-- gymlens warehouse, schema version 1: the tables.
-- Every loaded row names the file it came from (file_id) so that any number
-- can be traced back to its input; src_line is the line where known.
-- Keys are enforced by ingest, not by constraints, so that a replacing
-- ingest can load the new rows before it removes the old ones.

CREATE TABLE meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

CREATE SEQUENCE ingest_id_seq START 1;
CREATE SEQUENCE file_id_seq START 1;

CREATE TABLE ingests (
    ingest_id   INTEGER PRIMARY KEY,
    started_at  TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ NOT NULL,
    tool        VARCHAR NOT NULL,
    options     JSON,
    files       INTEGER NOT NULL,
    records     BIGINT NOT NULL,
    rejected    BIGINT NOT NULL
);

CREATE TABLE ingested_files (
    file_id     INTEGER PRIMARY KEY,
    ingest_id   INTEGER NOT NULL,
    path        VARCHAR NOT NULL,
    sha256      VARCHAR NOT NULL,
    size_bytes  BIGINT NOT NULL,
    mtime       TIMESTAMPTZ,
    format      VARCHAR NOT NULL,
    ingested_at TIMESTAMPTZ NOT NULL,
    records     JSON NOT NULL,   -- counts by record type
    rejected    BIGINT NOT NULL
);

CREATE TABLE scenarios (
    scenario        VARCHAR NOT NULL,
    domain          VARCHAR,
    title           VARCHAR,
    days            INTEGER,
    ta_window_start TIMESTAMPTZ,
    ta_window_end   TIMESTAMPTZ,
    ta_urgent       VARCHAR,
    ta_deferrable   VARCHAR,
    spec            JSON NOT NULL,  -- the whole spec as read
    content_hash    BIGINT NOT NULL,  -- xxh3 of the canonical spec, as a signed integer
    extra           JSON,
    file_id         INTEGER NOT NULL,
    src_line        INTEGER
);

CREATE TABLE personas (
    scenario      VARCHAR NOT NULL,
    persona       VARCHAR NOT NULL,
    persona_group VARCHAR NOT NULL,
    label         VARCHAR
);

CREATE TABLE task_specs (
    scenario       VARCHAR NOT NULL,
    task           VARCHAR NOT NULL,
    ordinal        INTEGER NOT NULL,
    weight         DOUBLE NOT NULL,
    trigger        VARCHAR,
    after_approval VARCHAR NOT NULL,
    after_denial   VARCHAR,          -- NULL: the persona's expected depth
    rubric         JSON,
    extra          JSON
);

CREATE TABLE task_expected_depths (
    scenario VARCHAR NOT NULL,
    task     VARCHAR NOT NULL,
    persona  VARCHAR NOT NULL,
    depth    VARCHAR NOT NULL
);

CREATE TABLE scenario_tools (
    scenario    VARCHAR NOT NULL,
    tool        VARCHAR NOT NULL,
    depth_class VARCHAR NOT NULL
);

CREATE TABLE runs (
    run_id       VARCHAR NOT NULL,
    scenario     VARCHAR NOT NULL,
    persona      VARCHAR NOT NULL,
    rep          INTEGER NOT NULL,
    config_id    VARCHAR NOT NULL,  -- model | harness | effort
    config_key   VARCHAR NOT NULL,  -- the same as a path-safe slug
    model        VARCHAR NOT NULL,
    harness      VARCHAR NOT NULL,
    effort       VARCHAR NOT NULL,
    family       VARCHAR,
    size_b       DOUBLE,
    start_t      TIMESTAMPTZ,
    end_t        TIMESTAMPTZ,
    status       VARCHAR NOT NULL,
    meta         JSON,
    config_extra JSON,
    extra        JSON,
    content_hash BIGINT NOT NULL,   -- xxh3 sum over the run's run, event and task lines
    file_id      INTEGER NOT NULL,
    src_line     INTEGER
);

CREATE TABLE events (
    run_id           VARCHAR NOT NULL,
    seq              BIGINT NOT NULL,
    t                TIMESTAMPTZ NOT NULL,
    actor            VARCHAR NOT NULL,
    kind             VARCHAR NOT NULL,
    task             VARCHAR,
    text             VARCHAR,
    tool             VARCHAR,
    args             JSON,
    result           JSON,
    ok               BOOLEAN,
    depth            VARCHAR,
    actions          VARCHAR[],
    decision         VARCHAR,
    ref              BIGINT,
    visible          BOOLEAN NOT NULL,
    phase            VARCHAR,
    input_tokens     BIGINT,
    output_tokens    BIGINT,
    reasoning_tokens BIGINT,
    latency_ms       DOUBLE,
    cost_usd         DOUBLE,
    extra            JSON,
    file_id          INTEGER NOT NULL,
    src_line         INTEGER
);

CREATE TABLE task_outcomes (
    run_id           VARCHAR NOT NULL,
    task             VARCHAR NOT NULL,
    active           BOOLEAN NOT NULL,
    activated_at     TIMESTAMPTZ,
    final_seq        BIGINT,
    expected_depth   VARCHAR,
    chosen_depth     VARCHAR,
    rules_logged     BOOLEAN NOT NULL,
    rule_evidence    DOUBLE,
    rule_outputs     DOUBLE,
    rule_constraints DOUBLE,
    extra            JSON,
    file_id          INTEGER NOT NULL,
    src_line         INTEGER
);

CREATE TABLE judgments (
    run_id            VARCHAR NOT NULL,
    task              VARCHAR NOT NULL,  -- '' for run-level metrics (ta)
    metric            VARCHAR NOT NULL,
    judge             VARCHAR NOT NULL,
    prompt            VARCHAR NOT NULL,  -- '' when not given
    correctness       DOUBLE,
    grounding         DOUBLE,
    completeness      DOUBLE,
    artifact_quality  DOUBLE,
    ta_now            DOUBLE,
    ta_later          DOUBLE,
    ta_cq             DOUBLE,
    understandability DOUBLE,
    competence        DOUBLE,
    reliability       DOUBLE,
    attachment        DOUBLE,
    faith             DOUBLE,
    reasons           VARCHAR,
    evidence          JSON,
    extra             JSON,
    file_id           INTEGER NOT NULL,
    src_line          INTEGER
);

CREATE TABLE ratings (
    rater     VARCHAR NOT NULL,
    question  VARCHAR NOT NULL,
    value     DOUBLE NOT NULL,
    run_id    VARCHAR,
    task      VARCHAR,
    item      VARCHAR,
    day       INTEGER,
    condition VARCHAR,
    extra     JSON,
    file_id   INTEGER NOT NULL,
    src_line  INTEGER
);
