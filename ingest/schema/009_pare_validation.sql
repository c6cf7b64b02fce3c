-- gymlens warehouse, schema version 9: the verdict a PARE or Meta-ARE
-- trace records about its own run (metadata.annotation.validation_decision,
-- Valid or Invalid) and whether the run raised (metadata.definition
-- has_exception), so that a trace without a result row has a success too.
ALTER TABLE pare_runs ADD COLUMN validation VARCHAR;
ALTER TABLE pare_runs ADD COLUMN has_exception BOOLEAN;
