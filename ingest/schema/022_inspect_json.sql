-- gymlens warehouse, schema version 22: the Inspect tables' JSON columns
-- hold the log's JSON itself. Schema 21's loader handed the appender the
-- JSON's text, which it stored as a JSON string of that text, so DuckDB's
-- JSON functions (and --by meta.FIELD) found nothing inside. Every value a
-- schema 21 warehouse holds there is such a string: it is unwrapped once.
-- The Inspect tables feed no run inputs:
-- keeps the run inputs
UPDATE inspect_evals SET
    model_args   = CAST(json_extract_string(model_args, '$') AS JSON),
    harness_args = CAST(json_extract_string(harness_args, '$') AS JSON),
    spec         = CAST(json_extract_string(spec, '$') AS JSON),
    plan         = CAST(json_extract_string(plan, '$') AS JSON),
    stats        = CAST(json_extract_string(stats, '$') AS JSON);
UPDATE inspect_samples SET
    metadata = CAST(json_extract_string(metadata, '$') AS JSON),
    input    = CAST(json_extract_string(input, '$') AS JSON),
    target   = CAST(json_extract_string(target, '$') AS JSON);
UPDATE inspect_scores SET raw = CAST(json_extract_string(raw, '$') AS JSON);
UPDATE inspect_items SET data = CAST(json_extract_string(data, '$') AS JSON);
UPDATE inspect_results SET params = CAST(json_extract_string(params, '$') AS JSON);
UPDATE inspect_reductions SET raw = CAST(json_extract_string(raw, '$') AS JSON);
