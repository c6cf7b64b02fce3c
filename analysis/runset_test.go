package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// packedTestRuns are runs as the warehouse gives them: judges on a
// scale of a few points, some tasks with no judgment or no rules, runs
// with no task, user-rubric judgments, NaN; and, with wide, so many
// distinct values and names that the codes widen to two and four bytes.
func packedTestRuns(seed uint64, n int, wide bool) []rows.RunRow {
	rng := rand.New(rand.NewPCG(seed, 7))
	val := func() float64 {
		if wide {
			return rng.Float64()
		}
		return float64(rng.IntN(5)) / 4
	}
	judges := []string{"judge-a", "judge-b", "judge-c"}
	var runs []rows.RunRow
	for i := range n {
		r := rows.RunRow{RunID: fmt.Sprintf("run-%05d", i), ConfigID: fmt.Sprintf("c%d", i%4), Scenario: fmt.Sprintf("s%d", i%6),
			TA: []rows.TAJudgment{{Judge: "judge-a", Now: 1, Later: float64(i % 2)}}}
		for k := range rng.IntN(5) {
			t := rows.TaskRow{Task: fmt.Sprintf("task-%d", k), Weight: float64(1 + rng.IntN(3)), Expected: "d1", Chosen: "d2"}
			if wide {
				t.Task = fmt.Sprintf("task-%d-%d", i, k)
			}
			for c := range t.Rules {
				if rng.IntN(3) > 0 {
					t.Rules[c], t.RuleSet[c] = val(), true
				}
			}
			if rng.IntN(10) == 0 {
				t.Rules[0] = math.NaN()
			}
			for _, j := range judges[:rng.IntN(4)] {
				t.TC = append(t.TC, rows.TCJudgment{Judge: j, Correctness: val(), Grounding: val(), Completeness: val(), ArtifactQ: val()})
			}
			for _, j := range judges[:rng.IntN(3)] {
				t.TRJ = append(t.TRJ, rows.TRJJudgment{Judge: j, Scores: [5]float64{val(), val(), val(), val(), 1 + val()}})
			}
			if rng.IntN(20) == 0 {
				t.Custom = []rows.CustomJudgment{{Metric: "custom.tone", Judge: "judge-a", Scores: map[string]float64{"tone": val()}}}
			}
			r.Tasks = append(r.Tasks, t)
		}
		runs = append(runs, r)
	}
	return runs
}

// sameRun reports how a and b differ, comparing numbers by their bits
// (NaN included).
func sameRun(a, b *rows.RunRow) string {
	var bits func(x reflect.Value) any
	bits = func(x reflect.Value) any {
		switch x.Kind() {
		case reflect.Float64:
			return math.Float64bits(x.Float())
		case reflect.Slice, reflect.Array:
			var out []any
			for i := range x.Len() {
				out = append(out, bits(x.Index(i)))
			}
			return out
		case reflect.Struct:
			var out []any
			for i := range x.NumField() {
				out = append(out, bits(x.Field(i)))
			}
			return out
		case reflect.Map:
			return fmt.Sprint(x.Interface())
		}
		return x.Interface()
	}
	if ga, gb := fmt.Sprint(bits(reflect.ValueOf(*a))), fmt.Sprint(bits(reflect.ValueOf(*b))); ga != gb {
		return fmt.Sprintf("\n got %s\nwant %s", ga, gb)
	}
	return ""
}

// Every run decodes to the run added, to the bit, in any order of
// reading, whether the codes fit a byte or had to widen.
func TestPackedRunsDecodeWhatWasAdded(t *testing.T) {
	for _, c := range []struct {
		n    int
		wide bool
	}{{300, false}, {9000, true}} {
		runs := packedTestRuns(3, c.n, c.wide)
		p := NewPackedRuns()
		for _, r := range runs {
			p.Add(r)
		}
		if p.Len() != len(runs) {
			t.Fatalf("%d runs packed, want %d", p.Len(), len(runs))
		}
		wid := p.nums.wid
		if !c.wide && wid > 1 || c.wide && wid != 4 || c.wide && p.name.wid != 2 {
			t.Fatalf("wide %v: values' codes %d bytes, names' %d", c.wide, wid, p.name.wid)
		}
		order := rand.New(rand.NewPCG(1, 2)).Perm(len(runs))
		for _, i := range append(order, order[:5]...) {
			if d := sameRun(p.Run(i), &runs[i]); d != "" {
				t.Fatalf("wide %v: run %d:%s", c.wide, i, d)
			}
		}
		for i := range runs {
			if p.Runs[i].Tasks != nil {
				t.Fatalf("packed run %d keeps its tasks as rows", i)
			}
		}
	}
}

// The agreement of two judges and with humans are the same, to the
// bit, from the packed runs as from the rows.
func TestAgreementOfPackedRuns(t *testing.T) {
	runs := packedTestRuns(5, 400, false)
	p := NewPackedRuns()
	for _, r := range runs {
		p.Add(r)
	}
	opt := BootstrapOptions{Resamples: 300, Seed: 9, Level: 0.95}
	a, err := CompareJudges(runs, []string{"judge-a", "judge-b"}, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := CompareJudgesOf(p, []string{"judge-a", "judge-b"}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if fa, fb := fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b); fa != fb {
		t.Fatalf("judge agreement differs:\n%s\n%s", fa, fb)
	}
	var ratings []rows.RatingRow
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < len(runs); i += 3 {
		for _, task := range runs[i].Tasks {
			for _, rater := range []string{"r1", "r2", "r3"} {
				ratings = append(ratings, rows.RatingRow{Rater: rater, Question: "tc", Value: float64(1 + rng.IntN(5)), RunID: runs[i].RunID, Task: task.Task},
					rows.RatingRow{Rater: rater, Question: "trust", Value: float64(1 + rng.IntN(5)), RunID: runs[i].RunID, Task: task.Task})
			}
		}
		if len(runs[i].Tasks) > 0 && i%9 == 0 { // a rater rating an item again
			ratings = append(ratings, rows.RatingRow{Rater: "r2", Question: "tc", Value: 2, RunID: runs[i].RunID, Task: runs[i].Tasks[0].Task})
		}
		ratings = append(ratings, rows.RatingRow{Rater: "r1", Question: "ta", Value: float64(rng.IntN(2)), RunID: runs[i].RunID, File: "items.csv", Line: i + 2},
			rows.RatingRow{Rater: "p1", Question: "trust", Value: 3.5, Day: 1 + i%3, Condition: "AAM", File: "study.csv", Line: i << (i % 40)})
	}
	var pr PackedRatings
	for i := range ratings {
		pr.Add(&ratings[i])
	}
	if back := pr.Where(nil); fmt.Sprintf("%#v", back) != fmt.Sprintf("%#v", ratings) {
		t.Fatal("the packed ratings are not the ratings added")
	}
	for _, judge := range []string{"", "judge-b"} {
		o := HumanOptions{Judge: judge, Reliability: true, Bootstrap: opt}
		ha, err := CompareHumans(runs, ratings, o)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := CompareHumansOf(p, pr.All(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(ha.VsHumans) == 0 || len(ha.Conflation) == 0 || len(ha.Notes) == 0 {
			t.Fatalf("judge %q: the test compares nothing: %d statistics, %d of conflation", judge, len(ha.VsHumans), len(ha.Conflation))
		}
		if fa, fb := fmt.Sprintf("%#v", ha), fmt.Sprintf("%#v", hb); fa != fb {
			t.Fatalf("judge %q: human agreement differs:\n%s\n%s", judge, fa, fb)
		}
	}
	if _, err := CompareHumansOf(p, pr.All(), HumanOptions{Judge: "nobody", Bootstrap: opt}); err == nil {
		t.Fatal("an unknown judge is accepted")
	}
}

// Spearman's ρ from the polynomials equals ranking the reweighted sample
// when no two values tie too (a row of G per item).
func TestSpearmanByClusterPolynomialsNoTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	n, C := 400, 6
	x, y, cl := make([]float64, n), make([]float64, n), make([]int, n)
	for i := range x {
		x[i], cl[i] = rng.NormFloat64(), rng.IntN(C)
		y[i] = x[i] + rng.NormFloat64()
	}
	fast := newSpearman(x, y, cl, C)
	slow := &spearman{x: x, y: y, cluster: cl, C: C, ox: sortedOrder(x), oy: sortedOrder(y)}
	for range 20 {
		w := clusterWeights(rng, C)
		closeTo(t, "rho", fast.rho(w), slow.rho(w), 1e-10)
	}
}
