-- gymlens warehouse, schema version 2: views for the common shapes.

-- One row per run with its configuration, scenario, domain and persona.
CREATE VIEW run_view AS
SELECT r.run_id, r.config_id, r.config_key, r.model, r.family, r.size_b,
       r.harness, r.effort, r.scenario, s.domain, s.title AS scenario_title,
       r.persona, p.persona_group, p.label AS persona_label, r.rep, r.status,
       r.start_t, r.end_t
FROM runs r
LEFT JOIN scenarios s USING (scenario)
LEFT JOIN personas p ON p.scenario = r.scenario AND p.persona = r.persona;

-- One row per active task of a run, with its spec.
CREATE VIEW active_task_view AS
SELECT rv.*, o.task, ts.weight, ts.trigger, o.activated_at, o.final_seq,
       o.expected_depth, o.chosen_depth,
       o.rule_evidence, o.rule_outputs, o.rule_constraints, o.rules_logged
FROM task_outcomes o
JOIN run_view rv USING (run_id)
LEFT JOIN task_specs ts ON ts.scenario = rv.scenario AND ts.task = o.task
WHERE o.active;
