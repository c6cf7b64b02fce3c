package analysis

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Judge scores of one task or run, by name. TC scores are on the metrics'
// 0–100 scale; TR-J on 1–5; TA labels 0/1.
var (
	TaskScores = []string{"TC.semantics", "TC.completion", "TC.correctness", "TC.grounding", "TC.completeness",
		"TC.artifact_quality", "TRJ", "TRJ.understandability", "TRJ.competence", "TRJ.reliability", "TRJ.attachment", "TRJ.faith"}
	TALabels = []string{"TA", "TA.now", "TA.later"}
)

var trjConstructs = []string{"understandability", "competence", "reliability", "attachment", "faith"}

// TaskScore is a judge score of a task (judge "" averages the judges), and
// whether there is one.
func TaskScore(t *rows.TaskRow, score, judge string) (float64, bool) {
	if strings.HasPrefix(score, CustomPrefix) {
		return customScore(t.Custom, score, judge)
	}
	var sum float64
	var n int
	if strings.HasPrefix(score, "TC.") || score == "TC.diagnostics" {
		for _, j := range t.TC {
			if judge != "" && j.Judge != judge {
				continue
			}
			var v float64
			switch score {
			case "TC.semantics":
				v = (j.Correctness + j.Grounding) / 2
			case "TC.completion":
				v = (j.Completeness + j.ArtifactQ) / 2
			case "TC.diagnostics":
				v = (j.Correctness + j.Grounding + j.Completeness + j.ArtifactQ) / 4
			case "TC.correctness":
				v = j.Correctness
			case "TC.grounding":
				v = j.Grounding
			case "TC.completeness":
				v = j.Completeness
			case "TC.artifact_quality":
				v = j.ArtifactQ
			default:
				return math.NaN(), false
			}
			sum += float64(100 * v)
			n++
		}
	} else if score == "TRJ" || strings.HasPrefix(score, "TRJ.") {
		k := -1
		for i, c := range trjConstructs {
			if score == "TRJ."+c {
				k = i
			}
		}
		if score != "TRJ" && k < 0 {
			return math.NaN(), false
		}
		for _, j := range t.TRJ {
			if judge != "" && j.Judge != judge {
				continue
			}
			if k >= 0 {
				sum += j.Scores[k]
			} else {
				sum += (j.Scores[0] + j.Scores[1] + j.Scores[2] + j.Scores[3] + j.Scores[4]) / 5
			}
			n++
		}
	}
	if n == 0 {
		return math.NaN(), false
	}
	return sum / float64(n), true
}

// RunLabel is a judge's TA label of a run (TA: now ∧ later), averaged over
// the judges when judge is "".
func RunLabel(r *rows.RunRow, label, judge string) (float64, bool) {
	var sum float64
	var n int
	for _, j := range r.TA {
		if judge != "" && j.Judge != judge {
			continue
		}
		switch label {
		case "TA":
			sum += j.BothShare()
		case "TA.now":
			sum += j.Now
		case "TA.later":
			sum += j.Later
		case "TA.cq":
			if !j.HasCQ {
				continue
			}
			sum += j.CQ
		default:
			return math.NaN(), false
		}
		n++
	}
	if n == 0 {
		return math.NaN(), false
	}
	return sum / float64(n), true
}

// QuestionScore names the judge score a human rating question is
// compared with, and the factor that puts the rating on that score's
// scale; "" when the question has no judge counterpart. Questions:
// tc (the mean of the four TC diagnostics, rated in [0,1]), tc.<diagnostic>,
// trust (the TR-J mean, 1–5), trj.<construct>, ta, ta.now, ta.later.
func QuestionScore(question string) (score string, scale float64, task bool) {
	q := strings.ToLower(question)
	switch {
	case q == "tc":
		return "TC.diagnostics", 100, true
	case strings.HasPrefix(q, "tc."):
		return "TC." + q[3:], 100, true
	case q == "trust" || q == "trj":
		return "TRJ", 1, true
	case strings.HasPrefix(q, "trj."):
		return "TRJ." + q[4:], 1, true
	case q == "ta":
		return "TA", 1, false
	case q == "ta.now" || q == "ta.later":
		return "TA." + q[3:], 1, false
	}
	return "", 0, false
}

// Judges lists the judges with a judgment of any run, in name order.
func Judges(runs []rows.RunRow) []string { return JudgesOf(RunSlice(runs)) }

// JudgesOf is Judges of a RunSet.
func JudgesOf(runs RunSet) []string {
	seen := map[string]bool{}
	for i := range runs.Len() {
		AddJudges(seen, runs.Run(i))
	}
	return slices.Sorted(maps.Keys(seen))
}

// AddJudges marks in seen every judge with a judgment of r: what a reader
// that visits the runs one at a time collects for Judges.
func AddJudges(seen map[string]bool, r *rows.RunRow) {
	for _, j := range r.TA {
		seen[j.Judge] = true
	}
	for _, j := range r.Custom {
		seen[j.Judge] = true
	}
	for _, t := range r.Tasks {
		for _, j := range t.TC {
			seen[j.Judge] = true
		}
		for _, j := range t.Custom {
			seen[j.Judge] = true
		}
		for _, j := range t.TRJ {
			seen[j.Judge] = true
		}
	}
}

// CheckJudge is nil when judge is "" (the judges' average) or has a
// judgment of one of the runs (or is one of known, when given); otherwise
// an error that lists the judges there are, so that a misspelt name never
// passes for "no judgment".
func CheckJudge(runs []rows.RunRow, judge string, known ...string) error {
	if judge == "" {
		return nil
	}
	have := Judges(runs)
	if known != nil {
		have = known
	}
	if slices.Contains(have, judge) {
		return nil
	}
	if len(have) == 0 {
		return fmt.Errorf("--judge %q: the runs selected have no judgment by any judge", judge)
	}
	return fmt.Errorf("--judge %q: no judgment by this judge in the runs selected; the judges are: %s", judge, strings.Join(have, ", "))
}
