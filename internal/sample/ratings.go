package sample

import (
	"encoding/csv"
	"fmt"
	"os"
	"strconv"
)

func writeCSV(path string, header []string, rows [][]string) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		f.Close()
		return 0, err
	}
	return int64(len(rows)), f.Close()
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// writeRatings writes the human ratings of tasks.
func writeRatings(path string, rs []ratingRow) (int64, error) {
	rows := make([][]string, len(rs))
	for i, r := range rs {
		rows[i] = []string{r.rater, r.question, num(r.value), r.runID, r.task}
	}
	return writeCSV(path, []string{"rater", "question", "value", "run_id", "task"}, rows)
}

// StudyConditions are the human study's conditions: one letter per
// checkpoint phase, A for an appropriate agent action, M for a misaligned one.
var StudyConditions = []string{"AAA", "MMM", "AMA", "MAM"}

// StudyDays are the checkpoint days of the human study.
var StudyDays = []int{2, 4, 7}

// writeStudy writes a small within-subject human study: 24 participants
// rate trust (1–7) and appropriateness (1–7) and say whether they would
// accept the agent's next proposal (0/1) at days 2, 4 and 7, under each
// condition. Appropriate phases raise trust, misaligned ones lower it more.
func writeStudy(path string, seed uint64) (int64, error) {
	r := rng(seed, 3)
	var rows [][]string
	for p := 1; p <= 24; p++ {
		rater := fmt.Sprintf("P%02d", p)
		base := 4 + r.NormFloat64()*0.6
		for _, cond := range StudyConditions {
			trust := base
			for k, day := range StudyDays {
				item := fmt.Sprintf("study/%s/%s", cond, rater)
				a := cond[k] == 'A'
				if a {
					trust += 0.6 + r.NormFloat64()*0.4
				} else {
					trust -= 0.9 + r.NormFloat64()*0.4
				}
				t := clamp(round(trust, 1), 1, 7)
				appr := clamp(round(map[bool]float64{true: 5.6, false: 2.6}[a]+r.NormFloat64()*0.9, 1), 1, 7)
				acc := b2f(r.Float64() < sigmoid((t-4)*1.2))
				for _, q := range []struct {
					name string
					v    float64
				}{{"trust", t}, {"appropriateness", appr}, {"acceptance", acc}} {
					rows = append(rows, []string{rater, q.name, num(q.v), item, strconv.Itoa(day), cond})
				}
			}
		}
	}
	return writeCSV(path, []string{"rater", "question", "value", "item", "day", "condition"}, rows)
}
