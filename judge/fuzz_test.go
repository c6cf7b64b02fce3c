package judge

import (
	"math/rand/v2"
	"testing"

	"github.com/gymlens/gymlens/internal/mutate"
)

// Judge answers are untrusted text: whatever comes back parses to an
// answer with every score in range, or to an error, never a panic.
func answerTarget(t *testing.T, content string) {
	for _, metric := range []string{TC, TA, TRJ} {
		a, err := ParseAnswer(metric, content)
		if err != nil {
			continue
		}
		if a == nil {
			t.Fatalf("%s: no answer and no error", metric)
		}
		for k, v := range a.Scores {
			lo, hi := 0.0, 1.0
			if metric == TRJ {
				lo, hi = 1, 5
			}
			if v < lo || v > hi {
				t.Fatalf("%s: %s = %v out of range, accepted", metric, k, v)
			}
		}
	}
}

var answerSeeds = []string{
	`{"correctness": 0.9, "grounding": 0.8, "completeness": 0.7, "artifact_quality": 0.6, "reasons": "ok", "evidence": [{"seq": 2, "quote": "M27"}]}`,
	`{"now": 1, "later": 0, "cq": 0.5, "reasons": "r", "evidence": []}`,
	"```json\n" + `{"understandability": 4, "competence": 3, "reliability": 5, "attachment": 2, "faith": 1, "reasons": "", "evidence": []}` + "\n```",
}

func FuzzJudgeAnswer(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add(s)
	}
	f.Fuzz(answerTarget)
}

func TestAnswersOnMutatedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 600 seeded mutations beyond the fuzz corpus (the Fuzz target's seeds still run)")
	}
	r := rand.New(rand.NewPCG(19, 3))
	for i := range 600 {
		answerTarget(t, string(mutate.Bytes(r, []byte(answerSeeds[i%len(answerSeeds)]))))
	}
}
