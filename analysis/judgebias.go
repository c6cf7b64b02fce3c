package analysis

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// Families maps model and judge names, spelt as the warehouse spells
// them, to their families (agent models by their model name, judges by
// their judge name). It is read from a file the user writes
// (ReadFamilies): a family is never guessed from a name.
type Families map[string]string

// ReadFamilies reads a families file: CSV with the header name,family and
// one row per model or judge name. file names it in errors.
func ReadFamilies(r io.Reader, file string) (Families, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty: expected the header name,family", file)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	if len(head) != 2 || strings.TrimSpace(strings.TrimPrefix(head[0], "\ufeff")) != "name" || strings.TrimSpace(head[1]) != "family" {
		return nil, fmt.Errorf("%s:1: expected the header name,family, found %q", file, strings.Join(head, ","))
	}
	f := Families{}
	at := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", file, err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != 2 {
			return nil, fmt.Errorf("%s:%d: expected 2 fields (name,family), found %d", file, line, len(rec))
		}
		name, fam := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
		switch {
		case name == "":
			return nil, fmt.Errorf("%s:%d: field name: empty", file, line)
		case fam == "":
			return nil, fmt.Errorf("%s:%d: field family: empty for %q", file, line, name)
		}
		if l, ok := at[name]; ok {
			return nil, fmt.Errorf("%s:%d: %q is listed again (first on line %d)", file, line, name, l)
		}
		at[name] = line
		f[name] = fam
	}
	if len(f) == 0 {
		return nil, fmt.Errorf("%s: no row after the header name,family", file)
	}
	return f, nil
}

// of is name's family, or an error naming the name the file lacks.
func (f Families) of(what, name string) (string, error) {
	if fam, ok := f[name]; ok {
		return fam, nil
	}
	return "", fmt.Errorf("--families: %s %q has no row in the families file (add the line %q)", what, name, name+",FAMILY")
}

// BiasScores are the judged scores whose bias is measured: a task's TC
// diagnostics (their mean, 0–100) and TR-J (1–5), and a run's TA label
// (now ∧ later, 0–1).
var BiasScores = []string{"TC.diagnostics", "TRJ", "TA"}

// ScoreItemKind is the judge item a bias score is judged on: tc, trj or
// ta (the kinds ItemLengths are given for).
func ScoreItemKind(score string) string {
	switch {
	case strings.HasPrefix(score, "TC"):
		return "tc"
	case strings.HasPrefix(score, "TRJ"):
		return "trj"
	}
	return "ta"
}

// ItemLengths gives the length in characters of the item a judge read:
// kind tc, the records credited to the task up to its final turn; trj,
// the records the user saw up to the task's final turn; ta (task ""), the
// records of the decision window. ok is false when it is not known.
type ItemLengths func(runID, kind, task string) (chars float64, ok bool)

// biasData is one score's judged items: judge k's score of item i is
// v[i*len(judges)+k] (NaN: not judged).
type biasData struct {
	score        string
	judges       []string
	v            []float64
	cluster, run []int
	task         []int    // -1 for a run-level score
	taskName     []string // "" for a run-level score
	agentFam     []string
	clusters     int
}

func (d *biasData) n() int { return len(d.cluster) }

func (d *biasData) val(i, k int) float64 { return d.v[i*len(d.judges)+k] }

// gatherBias reads each bias score's items judged by at least two judges.
func gatherBias(runs RunSet, judges []string, fam Families) ([]*biasData, error) {
	scen := Index{}
	var out []*biasData
	for _, score := range BiasScores {
		d := &biasData{score: score, judges: judges}
		row := make([]float64, len(judges))
		add := func(ri, ti int, r *rows.RunRow, af string) {
			name := ""
			if ti >= 0 {
				name = r.Tasks[ti].Task
			}
			seen := 0
			for _, x := range row {
				if !math.IsNaN(x) {
					seen++
				}
			}
			if seen < 2 {
				return
			}
			d.v = append(d.v, row...)
			d.cluster, d.run, d.task, d.agentFam = append(d.cluster, scen.Of(r.Scenario)), append(d.run, ri), append(d.task, ti), append(d.agentFam, af)
			d.taskName = append(d.taskName, name)
		}
		for ri := range runs.Len() {
			r := runs.Run(ri)
			af := ""
			if fam != nil {
				var err error
				if af, err = fam.of("agent model", r.Model); err != nil {
					return nil, err
				}
			}
			if score == "TA" {
				for k, j := range judges {
					row[k] = math.NaN()
					if x, ok := RunLabel(r, score, j); ok {
						row[k] = x
					}
				}
				add(ri, -1, r, af)
				continue
			}
			for ti := range r.Tasks {
				for k, j := range judges {
					row[k] = math.NaN()
					if x, ok := TaskScore(&r.Tasks[ti], score, j); ok {
						row[k] = x
					}
				}
				add(ri, ti, r, af)
			}
		}
		out = append(out, d)
	}
	for _, d := range out {
		d.clusters = len(scen)
	}
	return out, nil
}

// SelfPreference is a judge's preference for agents of its own family on
// one score.
type SelfPreference struct {
	Judge, Family, Score string
	NIn, NOut            int     // items judged by it and another judge, of agents of its family, of the others
	In, Out              float64 // mean (judge − the other judges' mean) on them
	// Estimate is the difference in differences In − Out, with its
	// cluster-robust t interval (slopeInterval): the judge's general
	// leniency cancels.
	Estimate
	P float64 // the interval inverted
}

// LengthBias is how a judge's score moves with the length of the item
// against a reference: the slope of (judge − reference) on the item's
// length, per 1,000 characters.
type LengthBias struct {
	Judge, Reference, Score string // Reference: "humans", or another judge
	N                       int
	Estimate
	P float64
}

// JudgeBias is what MeasureJudgeBias finds.
type JudgeBias struct {
	Judges         []string
	Family         map[string]string // judge → family
	SelfPreference []SelfPreference
	Length         []LengthBias
	Notes          []string
}

// MeasureJudgeBias measures each judge's self-preference on every bias
// score and, when lengths is not nil, its length bias: against the human
// ratings where an item has them (the questions QuestionScore maps to
// the score), otherwise against each other judge. Every agent model and
// judge must have a family in fam; with fam nil, self-preference is not
// measured (a note says so). Scenarios are the clusters of the intervals
// (slopeInterval).
//
// Self-preference of judge J of family F on a score: over the items J and
// at least one other judge scored, d_i = s_J(i) − mean of the other
// judges' s(i); SP = mean(d_i | agent of family F) − mean(d_i | other
// agents). Length: the least-squares slope of d_i on L_i/1000, with d_i =
// s_J(i) − human mean (or − s_K(i)).
func MeasureJudgeBias(runs RunSet, fam Families, lengths ItemLengths, ratings iter.Seq[*rows.RatingRow], opt BootstrapOptions) (*JudgeBias, error) {
	opt = opt.WithDefaults()
	judges := JudgesOf(runs)
	if len(judges) < 2 {
		return nil, NoDataf("judge bias needs two judges or more; the runs selected have %d (%s)", len(judges), strings.Join(judges, ", "))
	}
	jb := &JudgeBias{Judges: judges, Family: map[string]string{}}
	if fam == nil {
		jb.Notes = append(jb.Notes, "self-preference not measured: it needs the families of the agent models and judges (--families FILE, a CSV name,family)")
		if lengths == nil {
			return jb, nil
		}
		data, err := gatherBias(runs, judges, nil)
		if err != nil {
			return nil, err
		}
		jb.measureLength(runs, data, lengths, ratings, opt)
		return jb, nil
	}
	agentFams := map[string]bool{}
	for i := range runs.Len() {
		f, err := fam.of("agent model", runs.Run(i).Model)
		if err != nil {
			return nil, err
		}
		agentFams[f] = true
	}
	shared := map[string]bool{}
	for _, j := range judges {
		f, err := fam.of("judge", j)
		if err != nil {
			return nil, err
		}
		jb.Family[j] = f
		if agentFams[f] {
			shared[f] = true
		}
	}
	data, err := gatherBias(runs, judges, fam)
	if err != nil {
		return nil, err
	}
	if len(shared) < 2 {
		jf := make([]string, len(judges))
		for k, j := range judges {
			jf[k] = j + ": " + jb.Family[j]
		}
		jb.Notes = append(jb.Notes, fmt.Sprintf("self-preference not measured: it needs two judge families or more that are also agent families; "+
			"the judges' are %s, the agents' %s", strings.Join(jf, ", "), strings.Join(sortedKeys(agentFams), ", ")))
	} else {
		for _, d := range data {
			if d.n() == 0 {
				continue
			}
			for k, j := range judges {
				if !agentFams[jb.Family[j]] {
					continue
				}
				jb.SelfPreference = append(jb.SelfPreference, selfPreference(d, k, jb.Family[j], opt))
			}
		}
		for _, j := range judges {
			if !agentFams[jb.Family[j]] {
				jb.Notes = append(jb.Notes, fmt.Sprintf("%s (family %s): no agent of its family, so no self-preference to measure", j, jb.Family[j]))
			}
		}
	}
	if lengths != nil {
		jb.measureLength(runs, data, lengths, ratings, opt)
	}
	return jb, nil
}

// measureLength adds every judge's length bias on data.
func (jb *JudgeBias) measureLength(runs RunSet, data []*biasData, lengths ItemLengths, ratings iter.Seq[*rows.RatingRow], opt BootstrapOptions) {
	human := humanItems(runs, ratings)
	for _, d := range data {
		if d.n() == 0 {
			continue
		}
		jb.Length = append(jb.Length, lengthBias(runs, d, lengths, human[d.score], opt)...)
	}
}

// selfPreference is judge k's difference in differences on d: the slope
// of d_i on 1{agent of the judge's family}, which is In − Out.
func selfPreference(d *biasData, k int, family string, opt BootstrapOptions) SelfPreference {
	sp := SelfPreference{Judge: d.judges[k], Family: family, Score: d.score}
	var x, y []float64
	var cl []int
	var sumIn, sumOut float64
	for i := range d.n() {
		diff, ok := leaveOneDiff(d, i, k)
		if !ok {
			continue
		}
		own := 0.0
		if d.agentFam[i] == family {
			own = 1
			sumIn += diff
			sp.NIn++
		} else {
			sumOut += diff
			sp.NOut++
		}
		x, y, cl = append(x, own), append(y, diff), append(cl, d.cluster[i])
	}
	sp.Estimate, sp.P = slopeInterval(x, y, cl, d.clusters, opt)
	sp.In, sp.Out = math.NaN(), math.NaN()
	if sp.NIn > 0 {
		sp.In = sumIn / float64(sp.NIn)
	}
	if sp.NOut > 0 {
		sp.Out = sumOut / float64(sp.NOut)
	}
	switch {
	case sp.NIn == 0:
		sp.Warn(0, "no item of an agent of the judge's family")
	case sp.NOut == 0:
		sp.Warn(0, "no item of an agent of another family")
	}
	return sp
}

// leaveOneDiff is judge k's score of item i less the mean of the other
// judges' scores of it.
func leaveOneDiff(d *biasData, i, k int) (float64, bool) {
	x := d.val(i, k)
	if math.IsNaN(x) {
		return 0, false
	}
	var s, n float64
	for q := range d.judges {
		if y := d.val(i, q); q != k && !math.IsNaN(y) {
			s += y
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return x - s/n, true
}

// humanItems are, per bias score, the mean human rating of each rated
// item (run, task), on the score's scale.
func humanItems(runs RunSet, ratings iter.Seq[*rows.RatingRow]) map[string]map[[2]int]float64 {
	out := map[string]map[[2]int]float64{}
	if ratings == nil {
		return out
	}
	runByID := map[string]int{}
	for i := range runs.Len() {
		runByID[RunIDOf(runs, i)] = i
	}
	items := map[string]map[[2]int]*ratedItem{}
	for g := range ratings {
		score, scale, isTask := QuestionScore(g.Question)
		if g.RunID == "" || !slices.Contains(BiasScores, score) {
			continue
		}
		ri, ok := runByID[g.RunID]
		if !ok {
			continue
		}
		ti := -1
		if isTask {
			r := runs.Run(ri)
			for k := range r.Tasks {
				if r.Tasks[k].Task == g.Task {
					ti = k
				}
			}
			if ti < 0 {
				continue
			}
		}
		if items[score] == nil {
			items[score] = map[[2]int]*ratedItem{}
		}
		key := [2]int{ri, ti}
		it := items[score][key]
		if it == nil {
			it = &ratedItem{run: int32(ri), task: int32(ti)}
			items[score][key] = it
		}
		it.add(g.Rater, g.Value*scale)
	}
	for score, m := range items {
		out[score] = map[[2]int]float64{}
		for k, it := range m {
			out[score][k] = it.humanMean()
		}
	}
	return out
}

// lengthBias is every judge's length slope on d: against the humans when
// some item has a human rating, else against each later judge.
func lengthBias(runs RunSet, d *biasData, lengths ItemLengths, human map[[2]int]float64, opt BootstrapOptions) []LengthBias {
	kind := ScoreItemKind(d.score)
	L := make([]float64, d.n())
	for i := range d.n() {
		L[i] = math.NaN()
		if x, ok := lengths(RunIDOf(runs, d.run[i]), kind, d.taskName[i]); ok {
			L[i] = x / 1000
		}
	}
	var out []LengthBias
	for k, j := range d.judges {
		if len(human) > 0 {
			var x, y []float64
			var cl []int
			for i := range d.n() {
				h, ok := human[[2]int{d.run[i], d.task[i]}]
				if v := d.val(i, k); ok && !math.IsNaN(v) && !math.IsNaN(L[i]) {
					x, y, cl = append(x, L[i]), append(y, v-h), append(cl, d.cluster[i])
				}
			}
			out = append(out, slopeBias(j, "humans", d.score, x, y, cl, d.clusters, opt))
			continue
		}
		for q := k + 1; q < len(d.judges); q++ {
			var x, y []float64
			var cl []int
			for i := range d.n() {
				a, b := d.val(i, k), d.val(i, q)
				if !math.IsNaN(a) && !math.IsNaN(b) && !math.IsNaN(L[i]) {
					x, y, cl = append(x, L[i]), append(y, a-b), append(cl, d.cluster[i])
				}
			}
			out = append(out, slopeBias(j, d.judges[q], d.score, x, y, cl, d.clusters, opt))
		}
	}
	return out
}

// slopeBias is the least-squares slope of y on x with its interval
// (slopeInterval).
func slopeBias(judge, ref, score string, x, y []float64, cluster []int, clusters int, opt BootstrapOptions) LengthBias {
	lb := LengthBias{Judge: judge, Reference: ref, Score: score, N: len(x)}
	if len(x) == 0 {
		o := opt.WithDefaults()
		lb.Estimate = Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Method: stat.ClusterRobustT, Level: o.Level}
		lb.P = math.NaN()
		lb.Warn(0, "no item with a length and both scores")
		return lb
	}
	lb.Estimate, lb.P = slopeInterval(x, y, cluster, clusters, opt)
	if math.IsNaN(lb.Value) {
		lb.Warn(0, "the items' lengths do not vary: no slope")
	}
	return lb
}

// slopeInterval is the least-squares slope of y on x, b = Σ(x − x̄)(y −
// ȳ) / Σ(x − x̄)², with its cluster-robust t interval at opt's level and
// the p-value that inverts it (stat.ClusterSlope.Interval). The other
// options (method, resamples, seed) do not apply: the expanded percentile
// bootstrap interval of the slope, the same correction read off noisy
// replicates, rejected a true 0 in 5.1–5.2% of null datasets at α = 0.05,
// this one in 4.8–5.0% (docs/statistics.md, TestJudgeBiasNullSize).
func slopeInterval(x, y []float64, cluster []int, clusters int, opt BootstrapOptions) (Estimate, float64) {
	return stat.NewClusterSlope(x, y, cluster, clusters).Interval(opt.WithDefaults().Level)
}
