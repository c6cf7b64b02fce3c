package ingest

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// repeatsByOneQuery is JudgeRepeats as first written, one query over
// every judge call: the reference the ranges must give, item for item.
func repeatsByOneQuery(t *testing.T, w *Warehouse, judge string) []rows.RepeatItem {
	var out []rows.RepeatItem
	var hashes []string
	var answers []map[string]float64
	finish := func() {
		if len(out) > 0 {
			out[len(out)-1].Names, out[len(out)-1].Values = rows.RepeatScores(answers)
			answers = nil
		}
	}
	err := w.scan(ctx, `WITH c AS (
			SELECT judge, metric, prompt, model, input_hash, params, min(run_id || chr(0) || task) AS item,
				min(scores::VARCHAR) AS scores, coalesce(TRY_CAST(json_extract(params, '$.seed') AS BIGINT), 0) AS seed
			FROM judge_calls WHERE status = 'valid' AND scores IS NOT NULL AND (? = '' OR judge = ?)
			GROUP BY judge, metric, prompt, model, input_hash, params),
		latest AS (SELECT judge, metric, max(prompt) AS prompt FROM c GROUP BY ALL),
		multi AS (SELECT judge, metric, prompt, model, input_hash FROM c GROUP BY ALL HAVING count(*) >= 2)
		SELECT c.judge, c.metric, c.input_hash, c.item, coalesce(r.scenario, ''), c.seed, c.scores
		FROM c JOIN multi USING (judge, metric, prompt, model, input_hash) JOIN latest USING (judge, metric, prompt)
		LEFT JOIN runs r ON r.run_id = split_part(c.item, chr(0), 1)
		ORDER BY c.judge, c.metric, c.item, c.input_hash, c.seed, c.params`, func(rs *sql.Rows) error {
		var judge, metric, hash, item, scen, sc string
		var seed int64
		if err := rs.Scan(&judge, &metric, &hash, &item, &scen, &seed, &sc); err != nil {
			return err
		}
		var s map[string]float64
		if err := json.Unmarshal([]byte(sc), &s); err != nil {
			return err
		}
		run, task, _ := strings.Cut(item, "\x00")
		if n := len(out); n == 0 || out[n-1].Judge != judge || out[n-1].Metric != metric || out[n-1].RunID != run || out[n-1].Task != task || hashes[n-1] != hash {
			finish()
			out = append(out, rows.RepeatItem{RunID: run, Task: task, Metric: metric, Judge: judge, Scenario: scen})
			hashes = append(hashes, hash)
		}
		it := &out[len(out)-1]
		it.Seeds, answers = append(it.Seeds, seed), append(answers, s)
		return nil
	}, judge, judge)
	if err != nil {
		t.Fatal(err)
	}
	finish()
	return out
}

// Judge calls of two judges on two metrics under two prompt versions,
// asked once to three times (seeds, and parameters without one), some
// invalid, some inputs shared by items of other runs (in other ranges),
// some of runs not in the warehouse: JudgeRepeats gives, whatever the
// size of its ranges of runs, what one query over them all gives.
func TestJudgeRepeatsByRangesAsOneQuery(t *testing.T) {
	db, _ := sampleCopy(t, sampleKind{seed: 5, configs: 1, runs: true}) // the scenarios and runs
	w, err := Open(ctx, db, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var items [][2]string
	if err := w.scan(ctx, `SELECT run_id, task FROM task_outcomes WHERE active ORDER BY run_id, task`, func(rs *sql.Rows) error {
		var it [2]string
		items = append(items, it)
		return rs.Scan(&items[len(items)-1][0], &items[len(items)-1][1])
	}); err != nil {
		t.Fatal(err)
	}
	items = items[:min(len(items), 400)]
	items = append(items, [2]string{"zz-not-a-run", "t"}, [2]string{"", "t"})
	rng := rand.New(rand.NewPCG(3, 4))
	names := map[string][]string{"tc": {"correctness", "grounding", "completeness"}, "ta": {"ta_now", "ta_later", "ta_cq"}}
	var calls []JudgeCall
	for i, it := range items {
		for _, judge := range []string{"j", "k"} {
			for _, metric := range []string{"tc", "ta"} {
				task := it[1]
				if metric == "ta" {
					task = ""
				}
				hash := fmt.Sprintf("%s/%s/%d", judge, metric, i)
				if i%9 == 4 { // the input of another item, three runs on
					hash = fmt.Sprintf("%s/%s/%d", judge, metric, (i+40)%len(items))
				}
				prompts := []string{metric + "/v2"}
				if i%4 == 0 {
					prompts = []string{metric + "/v1", metric + "/v2"}
				} else if i%7 == 0 {
					prompts = []string{metric + "/v1"}
				}
				for _, prompt := range prompts {
					for r := range 1 + rng.IntN(3) {
						params := fmt.Sprintf(`{"seed":%d}`, r+1)
						if i%11 == 0 && r == 1 {
							params = `{"temperature":0.7}`
						}
						scores := map[string]float64{}
						for _, n := range names[metric] {
							if rng.IntN(5) > 0 {
								scores[n] = float64(rng.IntN(3)) / 2
							}
						}
						calls = append(calls, JudgeCall{Model: "m", Params: params, Prompt: prompt, InputHash: hash, Judge: judge,
							RunID: it[0], Task: task, Metric: metric, Valid: rng.IntN(10) > 0, Scores: scores})
					}
				}
			}
		}
	}
	if err := w.SaveJudgeCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	defer func(n int) { repeatBatchRuns = n }(repeatBatchRuns)
	for _, judge := range []string{"", "k"} {
		want := repeatsByOneQuery(t, w, judge)
		if len(want) < 100 {
			t.Fatalf("judge %q: %d items asked again: too few to test", judge, len(want))
		}
		for _, n := range []int{1, 3, 50, 1 << 30} {
			repeatBatchRuns = n
			got, err := w.JudgeRepeats(ctx, judge)
			if err != nil {
				t.Fatal(err)
			}
			if g, x := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != x {
				t.Errorf("judge %q, ranges of %d runs: %d items, want %d", judge, n, len(got), len(want))
				for i := range min(len(got), len(want)) {
					if a, b := fmt.Sprintf("%#v", got[i]), fmt.Sprintf("%#v", want[i]); a != b {
						t.Fatalf("item %d:\n got %s\nwant %s", i, a, b)
					}
				}
			}
		}
	}
}
