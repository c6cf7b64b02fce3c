package rows

import (
	"strconv"
	"strings"
)

// InspectKeyPrefix begins the key under which the judge stores its
// answers about an Inspect sample (InspectSampleKey).
const InspectKeyPrefix = "inspect:"

// InspectSampleKey is the key of one Inspect sample at one epoch of one
// evaluation, where the judge's tables name a run (judge_calls.run_id,
// judgments.run_id; their task is ""): "inspect:EVAL:EPOCH:SAMPLE", the
// evaluation id with "%" and ":" escaped as %25 and %3A, the sample id as
// it is (it comes last, so it may hold ":"). The evaluation gives the task
// and the configuration; a Proactivity-Gym run id never starts with
// "inspect:" in a warehouse that holds Inspect judgments, as the judge
// checks.
func InspectSampleKey(evalID, sampleID string, epoch int) string {
	return InspectKeyPrefix + escapeEval.Replace(evalID) + ":" + strconv.Itoa(epoch) + ":" + sampleID
}

var (
	escapeEval   = strings.NewReplacer("%", "%25", ":", "%3A")
	unescapeEval = strings.NewReplacer("%3A", ":", "%25", "%")
)

// ParseInspectSampleKey reads a key InspectSampleKey wrote; ok is false
// for any other text.
func ParseInspectSampleKey(key string) (evalID, sampleID string, epoch int, ok bool) {
	rest, found := strings.CutPrefix(key, InspectKeyPrefix)
	if !found {
		return "", "", 0, false
	}
	ev, rest, found := strings.Cut(rest, ":")
	if !found {
		return "", "", 0, false
	}
	ep, sample, found := strings.Cut(rest, ":")
	n, err := strconv.Atoi(ep)
	if !found || err != nil || strconv.Itoa(n) != ep {
		return "", "", 0, false
	}
	return unescapeEval.Replace(ev), sample, n, true
}

// InspectJudgment is one judge's latest judgment of an Inspect sample at
// an epoch on a user rubric: the scores of its fields.
type InspectJudgment struct {
	EvalID, SampleID string
	Epoch            int
	Judge, Metric    string // custom.NAME
	Scores           map[string]float64
}

// InspectRating is one human rating of an Inspect sample at an epoch, as
// a ratings file gives it: the task, sample id and epoch, and the
// configuration (or evaluation) when the file names it.
type InspectRating struct {
	Task, SampleID  string
	Epoch           int
	Config, EvalID  string // "" when the file leaves them out
	Rater, Question string
	Value           float64
	File            string
	Line            int
}

// InspectSampleRef names one sample at one epoch of one evaluation.
type InspectSampleRef struct {
	EvalID, SampleID string
	Epoch            int
}

// InspectRaters is what agreement on Inspect samples reads: the
// evaluations and their scores, the judges' judgments and the human
// ratings of the samples.
type InspectRaters struct {
	Evals     []InspectEval
	Samples   []InspectSampleRef
	Scores    []InspectScore
	Judgments []InspectJudgment
	Ratings   []InspectRating
}
