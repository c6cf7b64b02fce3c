package analysis

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// JudgeNoise makes the metrics' intervals include the judges' own noise:
// a two-stage bootstrap. Each resample draws the scenarios (the first
// stage, as always) and then, for every item a judge was asked several
// times (gymlens judge --repeats), as many of its answers with
// replacement, whose mean stands for the judgment in that resample; the
// runs' values are computed again from those judgments. The interval then
// covers asking the judge again as well as drawing other scenarios.
// Judgments asked once are fixed, as without it.
type JudgeNoise struct {
	draws int
	seed  uint64
	judge string
	runs  RunSet                      // as the values: index i is values[i]'s run
	reps  map[repKey]*rows.RepeatItem // items' answers, from the caller's slice
	noisy map[int]bool                // the runs with a repeated judgment
	// Progress, when not nil, is told how many draws are done so far
	// (a run's draws each count), from the goroutine that asked.
	Progress func(done int64)
	done     int64
}

type repKey struct{ run, task, metric, judge string }

// maxNoiseDraws caps the second stage's distinct draws per run (each
// draw is every noisy run's values computed again); each copy of a
// cluster in a resample picks one of them at random.
const maxNoiseDraws = 200

// NewJudgeNoise prepares the second stage for runs (with their tasks and
// judgments: a RunSet, so that they may be kept packed) from the judges'
// repeated answers (ingest's JudgeRepeats); judge, when not empty, is the
// one judge the metrics use. It returns nil when no judgment of the runs
// was asked again.
func NewJudgeNoise(runs RunSet, items []rows.RepeatItem, judge string, opt BootstrapOptions) *JudgeNoise {
	opt = opt.WithDefaults()
	n := &JudgeNoise{draws: min(opt.Resamples, maxNoiseDraws), seed: opt.Seed, judge: judge, runs: runs,
		reps: map[repKey]*rows.RepeatItem{}, noisy: map[int]bool{}}
	byRun := make(map[string]int, runs.Len())
	for i := range runs.Len() {
		byRun[RunIDOf(runs, i)] = i
	}
	for k := range items {
		it := &items[k]
		if len(it.Seeds) < 2 || (judge != "" && it.Judge != judge) {
			continue
		}
		i, ok := byRun[it.RunID]
		if !ok {
			continue
		}
		n.reps[repKey{it.RunID, it.Task, it.Metric, it.Judge}] = it
		n.noisy[i] = true
	}
	if len(n.noisy) == 0 {
		return nil
	}
	return n
}

// Runs is how many runs have a judgment asked again.
func (n *JudgeNoise) Runs() int { return len(n.noisy) }

// values are run rp's metric values in draw d (drawn's, with the run's
// plan).
func (n *JudgeNoise) values(rp *rows.RunRow, d int) []float64 {
	return n.drawn(rp, n.plan(rp), d)
}

// noisyAt is a judgment of a run that was asked again: where it sits
// (kind; the task's index; the judgment's index) and its answers.
type noisyAt struct {
	kind    uint8
	task, k int
	it      *rows.RepeatItem
}

// Where a repeated judgment sits in a run.
const (
	atTA = iota
	atRunCustom
	atTC
	atTRJ
	atTaskCustom
)

// plan lists run r's judgments that were asked again, in the order their
// answers are drawn: TA, the run's rubrics, then task by task its TC,
// TR-J and rubrics. A run's draws share it.
func (n *JudgeNoise) plan(r *rows.RunRow) []noisyAt {
	var p []noisyAt
	add := func(kind uint8, t, k int, task, metric, judge string) {
		if it := n.reps[repKey{r.RunID, task, metric, judge}]; it != nil {
			p = append(p, noisyAt{kind: kind, task: t, k: k, it: it})
		}
	}
	for k := range r.TA {
		add(atTA, -1, k, "", "ta", r.TA[k].Judge)
	}
	for k := range r.Custom {
		add(atRunCustom, -1, k, "", r.Custom[k].Metric, r.Custom[k].Judge)
	}
	for t := range r.Tasks {
		tk := &r.Tasks[t]
		for k := range tk.TC {
			add(atTC, t, k, tk.Task, "tc", tk.TC[k].Judge)
		}
		for k := range tk.TRJ {
			add(atTRJ, t, k, tk.Task, "trj", tk.TRJ[k].Judge)
		}
		for k := range tk.Custom {
			add(atTaskCustom, t, k, tk.Task, tk.Custom[k].Metric, tk.Custom[k].Judge)
		}
	}
	return p
}

// drawn are run rp's metric values in draw d (redraw).
func (n *JudgeNoise) drawn(rp *rows.RunRow, plan []noisyAt, d int) []float64 {
	r := n.redraw(rp, plan, d)
	v, _ := RunValues(&r, n.judge)
	return v
}

// redraw is run rp in draw d: each repeated judgment (plan) the mean of
// a resample of its answers, drawn from a generator seeded by (seed, d,
// the run), so that a draw is the same for every group. It only reads rp
// (a slice is copied before a value in it is changed), so that several
// goroutines may draw from one run at once.
func (n *JudgeNoise) redraw(rp *rows.RunRow, plan []noisyAt, d int) rows.RunRow {
	r := *rp
	h := fnv.New64a()
	h.Write([]byte(r.RunID))
	rng := rand.New(rand.NewPCG(n.seed^h.Sum64(), uint64(d)))
	var copied []bool // per task: its judgments copied
	own := func(t int) *rows.TaskRow {
		if copied == nil {
			r.Tasks = slices.Clone(r.Tasks)
			copied = make([]bool, len(r.Tasks))
		}
		tk := &r.Tasks[t]
		if !copied[t] {
			tk.TC, tk.TRJ, tk.Custom = slices.Clone(tk.TC), slices.Clone(tk.TRJ), slices.Clone(tk.Custom)
			copied[t] = true
		}
		return tk
	}
	ownTA, ownCustom := false, false
	for _, at := range plan {
		it := at.it
		mean, has, both := drawMean(it, rng)
		score := func(name string) float64 { // 0 when no answer drawn has it
			if k, ok := slices.BinarySearch(it.Names, name); ok && has[k] {
				return mean[k]
			}
			return 0
		}
		scores := func() map[string]float64 {
			m := map[string]float64{}
			for k, name := range it.Names {
				if has[k] {
					m[name] = mean[k]
				}
			}
			return m
		}
		switch at.kind {
		case atTA:
			if !ownTA {
				r.TA, ownTA = slices.Clone(r.TA), true
			}
			j := &r.TA[at.k]
			j.Now, j.Later, j.Both, j.HasBoth = score("ta_now"), score("ta_later"), both, true
			if k, ok := slices.BinarySearch(it.Names, "ta_cq"); ok && has[k] {
				j.CQ, j.HasCQ = mean[k], true
			}
		case atRunCustom:
			if !ownCustom {
				r.Custom, ownCustom = slices.Clone(r.Custom), true
			}
			r.Custom[at.k].Scores = scores()
		case atTC:
			j := &own(at.task).TC[at.k]
			j.Correctness, j.Grounding, j.Completeness, j.ArtifactQ = score("correctness"), score("grounding"), score("completeness"), score("artifact_quality")
		case atTRJ:
			j := &own(at.task).TRJ[at.k]
			for c, name := range trjConstructs {
				j.Scores[c] = score(name)
			}
		case atTaskCustom:
			own(at.task).Custom[at.k].Scores = scores()
		}
	}
	return r
}

// drawMean is the mean of a resample of it's answers (as many as it has,
// with replacement, from rng): each score's mean, and whether any answer
// drawn had it; and the share of the answers drawn with both TA labels 1.
// Each mean adds the answers in the order drawn, from 0.
func drawMean(it *rows.RepeatItem, rng *rand.Rand) (mean []float64, has []bool, both float64) {
	answers := len(it.Seeds)
	mean, has = make([]float64, len(it.Names)), make([]bool, len(it.Names))
	now, okNow := slices.BinarySearch(it.Names, "ta_now")
	later, okLater := slices.BinarySearch(it.Names, "ta_later")
	for range answers {
		a := it.Answer(rng.IntN(answers))
		for k, v := range a {
			if !math.IsNaN(v) {
				mean[k] += v
				has[k] = true
			}
		}
		if okNow && okLater && a[now] == 1 && a[later] == 1 {
			both++
		}
	}
	for k := range mean {
		mean[k] /= float64(answers)
	}
	return mean, has, both / float64(answers)
}

// noisySums are, for each draw, the group's per-cluster sums (cluster c,
// column j at c*k+j) with its noisy runs' values of that draw. The runs
// are decoded one at a time (a packed RunSet holds one decoded run), and
// the draws of each shared among the cores; every draw's sums add the
// runs in the group's order, so that they are the same to the bit however
// many cores there are.
func (n *JudgeNoise) noisySums(g Group, values [][]float64, clusterOf func(int) int, cols []int, base []float64) [][]float64 {
	k := len(cols)
	var mine []int
	for _, i := range g.Runs {
		if n.noisy[i] {
			mine = append(mine, i)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	out := make([][]float64, n.draws)
	for d := range out {
		out[d] = slices.Clone(base)
	}
	workers := min(runtime.GOMAXPROCS(0), n.draws)
	for _, i := range mine {
		r, c := n.runs.Run(i), clusterOf(i)
		plan := n.plan(r)
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for d := w; d < n.draws; d += workers {
					v, s := n.drawn(r, plan, d), out[d]
					for j, m := range cols {
						if x, b := v[m], values[i][m]; !math.IsNaN(x) && !math.IsNaN(b) {
							s[c*k+j] += x - b
						}
					}
				}
			})
		}
		wg.Wait()
		if n.Progress != nil {
			n.done += int64(n.draws)
			n.Progress(n.done)
		}
	}
	return out
}

// summarizeNoisy is summarizeGroup's bootstrap with the judges' noise:
// in resample b, each copy of a cluster drawn takes a draw of its own
// (drawn from a generator seeded by (seed, b)), as the second stage of a
// two-stage bootstrap redraws the items of every cluster copy
// independently; a cluster drawn twice with one draw would count the
// noise twice over.
func summarizeNoisy(clusters, k int, sum, cnt []float64, noisy [][]float64, seed uint64, opt BootstrapOptions) []Estimate {
	est, _ := stat.ClusterBootstrapIndexed(clusters, k, func(b int, w, res []float64) {
		var rng *rand.Rand
		if b >= 0 {
			rng = rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(b)))
		}
		for j := range res {
			res[j] = 0
		}
		var m []float64 = make([]float64, k)
		for c, wc := range w {
			for copy := 0; copy < int(wc); copy++ {
				s := sum
				if rng != nil {
					s = noisy[rng.IntN(len(noisy))]
				}
				for j := range res {
					res[j] += s[c*k+j]
					m[j] += cnt[c*k+j]
				}
			}
		}
		for j := range res {
			if m[j] == 0 {
				res[j] = math.NaN()
			} else {
				res[j] /= m[j]
			}
		}
	}, opt)
	return est
}

// runsIn is how many of the group's runs have a repeated judgment.
func (n *JudgeNoise) runsIn(g Group) int {
	c := 0
	for _, i := range g.Runs {
		if n.noisy[i] {
			c++
		}
	}
	return c
}

// TwoLevelMeans is the two-level bootstrap's statistic: the mean of each
// column over the runs of the clusters (members[c]: cluster c's runs),
// where in resample b every copy of a cluster drawn draws as many of its
// runs with replacement (a generator seeded by (seed, b)); the point
// estimate (b < 0) takes every run once.
func TwoLevelMeans(members [][]int, values [][]float64, cols []int, seed uint64) stat.IndexedStatistics {
	return func(b int, w, res []float64) {
		var rng *rand.Rand
		if b >= 0 {
			rng = rand.New(rand.NewPCG(seed^0x5851f42d4c957f2d, uint64(b)))
		}
		m := make([]float64, len(res))
		for j := range res {
			res[j] = 0
		}
		for c, wc := range w {
			runs := members[c]
			for copy := 0; copy < int(wc); copy++ {
				for k := range runs {
					i := runs[k]
					if rng != nil {
						i = runs[rng.IntN(len(runs))]
					}
					for j, col := range cols {
						if x := values[i][col]; !math.IsNaN(x) {
							res[j] += x
							m[j]++
						}
					}
				}
			}
		}
		for j := range res {
			if m[j] == 0 {
				res[j] = math.NaN()
			} else {
				res[j] /= m[j]
			}
		}
	}
}
