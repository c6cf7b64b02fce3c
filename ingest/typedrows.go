package ingest

import "github.com/gymlens/gymlens/ingest/rows"

// The typed rows live in the leaf package rows; these names keep the
// warehouse's own code as it reads.
type (
	RunRow         = rows.RunRow
	TaskRow        = rows.TaskRow
	TCJudgment     = rows.TCJudgment
	TRJJudgment    = rows.TRJJudgment
	TAJudgment     = rows.TAJudgment
	CustomJudgment = rows.CustomJudgment
	PAREResultRow  = rows.PAREResultRow
	PARERun        = rows.PARERun
	PAREEvent      = rows.PAREEvent
	PAREDecision   = rows.PAREDecision
	PAREEventText  = rows.PAREEventText
	PARETexts      = rows.PARETexts
	PAREReportRow  = rows.PAREReportRow
	JudgeRun       = rows.JudgeRun
	JudgeEvent     = rows.JudgeEvent
	JudgeTask      = rows.JudgeTask
	JudgeCall      = rows.JudgeCall
	JudgeVersion   = rows.JudgeVersion
	ScoreTask      = rows.ScoreTask
	ScoreEvent     = rows.ScoreEvent
	TaskScore      = rows.TaskScore
	ScenarioSpec   = rows.ScenarioSpec
	TaskSpecRow    = rows.TaskSpecRow
	InputFile      = rows.InputFile
	Steps          = rows.Steps
	IngestStep     = rows.IngestStep
	ScoreStep      = rows.ScoreStep
	JudgeStep      = rows.JudgeStep
	RatingRow      = rows.RatingRow
	PARESampleRow  = rows.PARESampleRow
)
