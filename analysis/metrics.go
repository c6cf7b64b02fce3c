package analysis

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// Metric names: the four 3T metrics, then their parts. Scales are the
// paper's: TC and its parts 0–100, TA, TR-D and TA's parts in percent,
// TR-J and its constructs 1–5.
var (
	MainMetrics = []string{"TC", "TA", "TR-D", "TR-J"}
	Components  = []string{"TC.evidence", "TC.outputs", "TC.constraints", "TC.semantics", "TC.completion",
		"TC.correctness", "TC.grounding", "TC.completeness", "TC.artifact_quality",
		"TA.now", "TA.later", "TA.cq",
		"TRJ.understandability", "TRJ.competence", "TRJ.reliability", "TRJ.attachment", "TRJ.faith"}
	AllMetrics = append(append([]string(nil), MainMetrics...), Components...)
)

// metric positions in AllMetrics.
const (
	mTC = iota
	mTA
	mTRD
	mTRJ
	mEvidence
	mOutputs
	mConstraints
	mSemantics
	mCompletion
	mCorrectness
	mGrounding
	mCompleteness
	mArtifact
	mNow
	mLater
	mCQ
	mTRJ0      // five constructs follow
	numMetrics = mTRJ0 + 5
)

// MetricIndex returns the position of a metric name, or -1.
func MetricIndex(name string) int {
	for i, m := range AllMetrics {
		if m == name {
			return i
		}
	}
	for i, m := range CustomMetrics() {
		if m == name {
			return len(AllMetrics) + i
		}
	}
	return -1
}

// Missing counts what a run lacked, by kind.
type Missing struct {
	TasksWithoutTC    int // active tasks with no TC judgment (TC from rules alone)
	TasksWithoutTRJ   int // active tasks with no TR-J judgment (left out of TR-J)
	TasksWithoutDepth int // active tasks whose depths were not logged (left out of TR-D)
	NoTAWindow        bool
	NoTAJudgment      bool // a TA window but no judgment (left out of TA)
	NoActiveTasks     bool
}

// TaskTC is a task's TC in [0, 1]: the mean of its applicable components,
// the rule scores that apply, then semantics = mean(correctness,
// grounding) and completion = mean(completeness, artifact quality), each
// averaged over the judges (judge alone when not empty). NaN when the task
// has no component.
func TaskTC(t *rows.TaskRow, judge string) float64 {
	var comps []float64
	for i := 0; i < 3; i++ {
		if t.RuleSet[i] {
			comps = append(comps, t.Rules[i])
		}
	}
	if c, g, cm, aq, ok := judgedTC(t, judge); ok {
		comps = append(comps, (c+g)/2, (cm+aq)/2)
	}
	if len(comps) == 0 {
		return math.NaN()
	}
	return stat.Mean(comps)
}

// judgedTC is a task's four judged TC diagnostics averaged over the
// judges (judge alone when not empty); ok is false without a judgment.
func judgedTC(t *rows.TaskRow, judge string) (c, g, cm, aq float64, ok bool) {
	var nj float64
	for _, j := range t.TC {
		if judge == "" || j.Judge == judge {
			c, g, cm, aq, nj = c+j.Correctness, g+j.Grounding, cm+j.Completeness, aq+j.ArtifactQ, nj+1
		}
	}
	if nj == 0 {
		return 0, 0, 0, 0, false
	}
	return c / nj, g / nj, cm / nj, aq / nj, true
}

// RunValues computes every metric of one run, as design.md defines them:
//
//	TC_{r,t} = mean of the applicable components (the rule scores that
//	           apply, semantics = mean(correctness, grounding) and
//	           completion = mean(completeness, artifact quality), both
//	           averaged over judges); TC_r = Σ v_t TC_{r,t} / Σ v_t;
//	TA_r     = mean over judges of 1[now ∧ later];
//	TR-D_r   = mean over active tasks of 1[chosen = expected depth];
//	TR-J_r   = mean over tasks with judgments of the mean over judges and
//	           constructs.
//
// judge, when not empty, uses that judge's judgments alone. A value that
// cannot be had is NaN, and Missing says why.
func RunValues(r *rows.RunRow, judge string) ([]float64, Missing) {
	v := make([]float64, numMetrics)
	for i := range v {
		v[i] = math.NaN()
	}
	var miss Missing
	if len(r.Tasks) == 0 {
		miss.NoActiveTasks = true
	}
	// Weighted sums over tasks, per TC part, and plain sums for TR-D, TR-J.
	var tcSum, tcW float64
	partSum := make([]float64, numMetrics)
	partW := make([]float64, numMetrics)
	add := func(m int, x, w float64) {
		if !math.IsNaN(x) {
			partSum[m] += float64(w * x)
			partW[m] += w
		}
	}
	var trdSum, trdN, trjSum, trjN float64
	for ti := range r.Tasks {
		t := &r.Tasks[ti]
		for i := 0; i < 3; i++ {
			if t.RuleSet[i] {
				add(mEvidence+i, t.Rules[i], t.Weight)
			}
		}
		if c, g, cm, aq, ok := judgedTC(t, judge); ok {
			sem, compl := (c+g)/2, (cm+aq)/2
			add(mSemantics, sem, t.Weight)
			add(mCompletion, compl, t.Weight)
			add(mCorrectness, c, t.Weight)
			add(mGrounding, g, t.Weight)
			add(mCompleteness, cm, t.Weight)
			add(mArtifact, aq, t.Weight)
		} else {
			miss.TasksWithoutTC++
		}
		if x := TaskTC(t, judge); !math.IsNaN(x) {
			tcSum += float64(t.Weight * x)
			tcW += t.Weight
		}
		if t.Expected != "" && t.Chosen != "" {
			if t.Expected == t.Chosen {
				trdSum++
			}
			trdN++
		} else {
			miss.TasksWithoutDepth++
		}
		var cons [5]float64
		var nt float64
		for _, j := range t.TRJ {
			if judge == "" || j.Judge == judge {
				for k := range cons {
					cons[k] += j.Scores[k]
				}
				nt++
			}
		}
		if nt > 0 {
			var all float64
			for k := range cons {
				cons[k] /= nt
				all += cons[k]
				add(mTRJ0+k, cons[k], 1)
			}
			trjSum += all / 5
			trjN++
		} else {
			miss.TasksWithoutTRJ++
		}
	}
	if tcW > 0 {
		v[mTC] = 100 * tcSum / tcW
	}
	for _, m := range []int{mEvidence, mOutputs, mConstraints, mSemantics, mCompletion, mCorrectness, mGrounding, mCompleteness, mArtifact} {
		if partW[m] > 0 {
			v[m] = 100 * partSum[m] / partW[m]
		}
	}
	for k := 0; k < 5; k++ {
		if partW[mTRJ0+k] > 0 {
			v[mTRJ0+k] = partSum[mTRJ0+k] / partW[mTRJ0+k]
		}
	}
	if trdN > 0 {
		v[mTRD] = 100 * trdSum / trdN
	}
	if trjN > 0 {
		v[mTRJ] = trjSum / trjN
	}
	// TA: the labels of the scenario's decision window.
	if !r.HasTAWindow {
		miss.NoTAWindow = true
	} else {
		var both, now, later, cq, n, ncq float64
		for _, j := range r.TA {
			if judge != "" && j.Judge != judge {
				continue
			}
			both += j.BothShare()
			now, later, n = now+j.Now, later+j.Later, n+1
			if j.HasCQ {
				cq, ncq = cq+j.CQ, ncq+1
			}
		}
		if n == 0 {
			miss.NoTAJudgment = true
		} else {
			v[mTA], v[mNow], v[mLater] = 100*both/n, 100*now/n, 100*later/n
			if ncq > 0 {
				v[mCQ] = 100 * cq / ncq
			}
		}
	}
	return append(v, customRunValues(r, judge)...), miss
}

// Group is a set of runs that one estimate summarises.
type Group struct {
	Key  map[string]string // dimension → value
	Runs []int             // indexes into the runs
}

// GroupEstimate is one metric of one group, with its interval.
type GroupEstimate struct {
	Group  map[string]string
	Metric string
	NRuns  int // runs with a value of the metric
	Estimate
}

// Summarize estimates the metrics (by position in AllMetrics) of every
// group: the mean over its runs of the run values, with a cluster
// bootstrap over its scenarios. values[i] are run i's values (RunValues);
// scenario[i] its scenario. Warnings say what was missing.
func Summarize(groups []Group, values [][]float64, missing []Missing, scenario []string, metrics []int, opt BootstrapOptions) []GroupEstimate {
	return SummarizeNoisy(groups, values, missing, scenario, metrics, opt, nil)
}

// SummarizeNoisy is Summarize whose intervals also include the judges'
// noise (noise nil: as Summarize): a two-stage bootstrap, JudgeNoise.
func SummarizeNoisy(groups []Group, values [][]float64, missing []Missing, scenario []string, metrics []int, opt BootstrapOptions, noise *JudgeNoise) []GroupEstimate {
	var out []GroupEstimate
	for _, g := range groups {
		est, nruns, oneScenario := summarizeGroup(g, values, scenario, metrics, opt, noise)
		warn := groupWarnings(g, missing)
		for j, m := range metrics {
			e := est[j]
			e.Warnings, e.Kinds = slices.Clone(e.Warnings), slices.Clone(e.Kinds)
			for _, w := range warn[family(MetricName(m))] {
				e.Warn(0, w)
			}
			if oneScenario {
				e.Warn(CaveatOneCluster, "one scenario: its runs resampled as independent")
			}
			if nruns[j] == 0 {
				e.Warn(0, "no run has this metric")
			}
			out = append(out, GroupEstimate{Group: g.Key, Metric: MetricName(m), NRuns: nruns[j], Estimate: e})
		}
	}
	return out
}

// SummarizeNamed is Summarize for values whose columns are named by names
// (metrics of another benchmark, such as PARE's), without the 3T
// metrics' missing-data warnings.
func SummarizeNamed(groups []Group, values [][]float64, scenario []string, names []string, opt BootstrapOptions) []GroupEstimate {
	cols := make([]int, len(names))
	for j := range cols {
		cols[j] = j
	}
	var out []GroupEstimate
	for _, g := range groups {
		est, nruns, oneScenario := summarizeGroup(g, values, scenario, cols, opt, nil)
		for j, name := range names {
			e := est[j]
			if oneScenario {
				e.Warn(CaveatOneCluster, "one scenario: its runs resampled as independent")
			}
			if nruns[j] == 0 {
				e.Warn(0, "no run has this metric")
			}
			out = append(out, GroupEstimate{Group: g.Key, Metric: name, NRuns: nruns[j], Estimate: e})
		}
	}
	return out
}

// summarizeGroup estimates the mean over a group's runs of each column
// (positions in values' rows), with a cluster bootstrap over the group's
// scenarios — over its runs when it has one scenario only.
func summarizeGroup(g Group, values [][]float64, scenario []string, cols []int, opt BootstrapOptions, noise *JudgeNoise) ([]Estimate, []int, bool) {
	// Clusters: the scenarios of the group, in order of appearance. A
	// group within one scenario (a per-scenario breakdown) has nothing
	// to resample but its runs, which are then taken as independent.
	cl := map[string]int{}
	for _, i := range g.Runs {
		if _, ok := cl[scenario[i]]; !ok {
			cl[scenario[i]] = len(cl)
		}
	}
	clusterOf := func(i int) int { return cl[scenario[i]] }
	oneScenario := len(cl) == 1 && len(g.Runs) > 1
	if oneScenario {
		pos := map[int]int{}
		for k, i := range g.Runs {
			pos[i] = k
		}
		clusterOf = func(i int) int { return pos[i] }
		cl = make(map[string]int, len(g.Runs))
		for k := range g.Runs {
			cl[fmt.Sprint(k)] = k
		}
	}
	k := len(cols)
	sum := make([]float64, len(cl)*k)
	cnt := make([]float64, len(cl)*k)
	nruns := make([]int, k)
	for _, i := range g.Runs {
		c := clusterOf(i)
		for j, m := range cols {
			if x := values[i][m]; !math.IsNaN(x) {
				sum[c*k+j] += x
				cnt[c*k+j]++
				nruns[j]++
			}
		}
	}
	if noise != nil {
		if sums := noise.noisySums(g, values, clusterOf, cols, sum); sums != nil {
			est := summarizeNoisy(len(cl), k, sum, cnt, sums, noise.seed, opt)
			for j := range est {
				est[j].Warn(0, fmt.Sprintf("interval includes the judges' noise: the repeated judgments of %d runs redrawn in each resample", noise.runsIn(g)))
			}
			return est, nruns, oneScenario
		}
	}
	statFn := clusterMeans(sum, cnt, k)
	if opt.TwoLevel && !oneScenario {
		members := make([][]int, len(cl))
		for _, i := range g.Runs {
			members[clusterOf(i)] = append(members[clusterOf(i)], i)
		}
		// The estimate (and a jackknife) as the one-level bootstrap's, to
		// the last digit; the resamples draw runs within the scenarios too.
		tl := TwoLevelMeans(members, values, cols, opt.Seed)
		est, _ := stat.ClusterBootstrapIndexed(len(cl), k, func(b int, w, res []float64) {
			if b < 0 {
				statFn(w, res)
			} else {
				tl(b, w, res)
			}
		}, opt)
		for j := range est {
			est[j].Warn(0, "two-level bootstrap: scenarios, then the runs within each scenario drawn")
		}
		return est, nruns, oneScenario
	}
	return stat.ClusterBootstrap(len(cl), k, statFn, opt), nruns, oneScenario
}

// clusterMeans is the statistic of k weighted means from per-cluster sums
// and counts (cluster c, column j at c*k+j): Σ w_c sum / Σ w_c count, NaN
// where no run counts.
func clusterMeans(sum, cnt []float64, k int) stat.Statistics {
	return func(w, res []float64) {
		for j := range res {
			var s, n float64
			for c, wc := range w {
				s += float64(wc * sum[c*k+j])
				n += float64(wc * cnt[c*k+j])
			}
			if n == 0 {
				res[j] = math.NaN()
			} else {
				res[j] = s / n
			}
		}
	}
}

// family is the metric family whose missing data concerns a metric.
func family(metric string) string {
	switch {
	case strings.HasPrefix(metric, CustomPrefix):
		return "custom" // a rubric's judgments: none of the 3T's gaps apply
	case metric[:2] == "TC":
		return "TC"
	case metric[:2] == "TA":
		return "TA"
	case metric == "TR-D":
		return "TRD"
	}
	return "TRJ"
}

// groupWarnings words what the group's runs lacked, by metric family.
func groupWarnings(g Group, missing []Missing) map[string][]string {
	var noTC, noTRJ, noDepth, noWindow, noTA, noTasks int
	for _, i := range g.Runs {
		m := missing[i]
		noTC += m.TasksWithoutTC
		noTRJ += m.TasksWithoutTRJ
		noDepth += m.TasksWithoutDepth
		if m.NoTAWindow {
			noWindow++
		}
		if m.NoTAJudgment {
			noTA++
		}
		if m.NoActiveTasks {
			noTasks++
		}
	}
	w := map[string][]string{}
	if noTC > 0 {
		w["TC"] = append(w["TC"], fmt.Sprintf("%d active tasks without TC judgments: scored on their rules alone", noTC))
	}
	if noTasks > 0 {
		for _, f := range []string{"TC", "TRD", "TRJ"} {
			w[f] = append(w[f], fmt.Sprintf("%d runs without active tasks: left out", noTasks))
		}
	}
	if noTRJ > 0 {
		w["TRJ"] = append(w["TRJ"], fmt.Sprintf("%d active tasks without TR-J judgments: left out of TR-J", noTRJ))
	}
	if noDepth > 0 {
		w["TRD"] = append(w["TRD"], fmt.Sprintf("%d active tasks without logged depths: left out of TR-D", noDepth))
	}
	if noWindow > 0 {
		w["TA"] = append(w["TA"], fmt.Sprintf("%d runs whose scenario has no TA window: left out", noWindow))
	}
	if noTA > 0 {
		w["TA"] = append(w["TA"], fmt.Sprintf("%d runs without TA judgments: left out", noTA))
	}
	return w
}
