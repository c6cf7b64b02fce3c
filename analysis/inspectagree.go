package analysis

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Kinds of rater of Inspect samples, in the order pairs list them.
const (
	RaterScorer = "scorer" // an Inspect scorer: inspect.SCORER[.KEY]
	RaterJudge  = "judge"  // a judge's rubric score: custom.NAME.FIELD (JUDGE)
	RaterHuman  = "human"  // the humans' mean rating on a question: human.QUESTION
)

// InspectRaterName names a judge's rubric score as a rater.
func InspectRaterName(judge, metric, field string) string {
	return metric + "." + field + " (" + judge + ")"
}

// InspectPair is the agreement of two raters of one task's Inspect
// samples, each sample at each epoch of each configuration an item and
// the samples the clusters: binary (every value of both 0 or 1: both
// rates, their difference, percent agreement, Cohen's κ) or continuous
// (both means, B − A, MAE, Pearson, Spearman, Kendall's τ-b), the
// statistics agree --judges gives.
type InspectPair struct {
	Task         string
	A, B         string // raters: A the earlier in scorer, judge, human order
	KindA, KindB string
	Binary       bool
	Stats        []AgreementStat
}

// InspectAgreement compares, within each task, every Inspect scorer with
// every judge's rubric score, judges with each other on the same score,
// and the humans' ratings (the mean of the raters of an item on a
// question, rater human.QUESTION) with every scorer and judge score, on
// the items both rated. A human rating names its sample by task, sample
// id and epoch, and by configuration (or evaluation) when the task was
// run by more than one: one that names no sample of the warehouse, or
// more than one, is an error naming its file, line and field. Notes say
// what was averaged or left out.
func InspectAgreement(d *rows.InspectRaters, opt BootstrapOptions) ([]InspectPair, []string, error) {
	type item struct {
		eval, sample string
		epoch        int
	}
	evals := map[string]rows.InspectEval{}
	for _, e := range d.Evals {
		evals[e.EvalID] = e
	}
	// The items of each task, and the clusters (samples) of each task.
	type place struct {
		task    string
		cluster int
	}
	items := map[item]place{}
	clusters := map[string]map[string]int{} // task → sample → cluster
	for _, s := range d.Samples {
		task := evals[s.EvalID].Task
		if clusters[task] == nil {
			clusters[task] = map[string]int{}
		}
		c, ok := clusters[task][s.SampleID]
		if !ok {
			c = len(clusters[task])
			clusters[task][s.SampleID] = c
		}
		items[item{s.EvalID, s.SampleID, s.Epoch}] = place{task, c}
	}
	values := map[string]map[item]float64{} // rater → item → value
	kinds := map[string]string{}
	set := func(rater, kind string, it item, v float64) {
		if values[rater] == nil {
			values[rater] = map[item]float64{}
			kinds[rater] = kind
		}
		values[rater][it] = v
	}
	unscored := 0
	for _, s := range d.Scores {
		if !s.Valid {
			unscored++
			continue
		}
		set(s.Metric, RaterScorer, item{s.EvalID, s.SampleID, s.Epoch}, s.Value)
	}
	gone := 0
	for _, j := range d.Judgments {
		if _, ok := items[item{j.EvalID, j.SampleID, j.Epoch}]; !ok {
			gone++
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(j.Scores)) {
			set(InspectRaterName(j.Judge, j.Metric, f), RaterJudge, item{j.EvalID, j.SampleID, j.Epoch}, j.Scores[f])
		}
	}
	// The humans: each rating found its sample, a rater's ratings of an
	// item on a question averaged, then the raters' means averaged.
	byTask := map[string][]rows.InspectEval{}
	for _, e := range d.Evals {
		byTask[e.Task] = append(byTask[e.Task], e)
	}
	type hkey struct {
		q, rater string
		it       item
	}
	type acc struct{ sum, n float64 }
	human := map[hkey]*acc{}
	var hkeys []hkey
	twice := 0
	for _, r := range d.Ratings {
		at := fmt.Sprintf("%s:%d", r.File, r.Line)
		var found []item
		for _, e := range byTask[r.Task] {
			if (r.Config != "" && e.ConfigID != r.Config) || (r.EvalID != "" && e.EvalID != r.EvalID) {
				continue
			}
			if _, ok := items[item{e.EvalID, r.SampleID, r.Epoch}]; ok {
				found = append(found, item{e.EvalID, r.SampleID, r.Epoch})
			}
		}
		switch {
		case len(found) == 0:
			field, what := "sample_id", fmt.Sprintf("no sample %q of task %q at epoch %d", r.SampleID, r.Task, r.Epoch)
			if r.Config != "" {
				field, what = "config", what+" run by configuration "+r.Config
			}
			if r.EvalID != "" {
				field, what = "eval", what+" in evaluation "+r.EvalID
			}
			return nil, nil, fmt.Errorf("%s: field %q: %s is in the warehouse", at, field, what)
		case len(found) > 1:
			var cs []string
			for _, f := range found {
				cs = append(cs, evals[f.eval].ConfigID+" (eval "+f.eval+")")
			}
			return nil, nil, fmt.Errorf("%s: field \"config\": sample %q of task %q at epoch %d was run %d times: %s; name the configuration rated in a config column (or the evaluation in an eval column)",
				at, r.SampleID, r.Task, r.Epoch, len(found), strings.Join(cs, "; "))
		}
		k := hkey{r.Question, r.Rater, found[0]}
		a := human[k]
		if a == nil {
			a = &acc{}
			human[k] = a
			hkeys = append(hkeys, k)
		} else {
			twice++
		}
		a.sum += r.Value
		a.n++
	}
	hmean := map[[2]any]*acc{} // (question, item) → the raters' means
	var hitems [][2]any
	for _, k := range hkeys {
		a := human[k]
		hk := [2]any{k.q, k.it}
		m := hmean[hk]
		if m == nil {
			m = &acc{}
			hmean[hk] = m
			hitems = append(hitems, hk)
		}
		m.sum += a.sum / a.n
		m.n++
	}
	for _, hk := range hitems {
		m := hmean[hk]
		set("human."+hk[0].(string), RaterHuman, hk[1].(item), m.sum/m.n)
	}
	var notes []string
	if unscored > 0 {
		notes = append(notes, fmt.Sprintf("%d score values have no number (value_to_float gives none) and are left out", unscored))
	}
	if gone > 0 {
		notes = append(notes, fmt.Sprintf("%d judgments are of samples the warehouse no longer holds (their logs ingested again without them) and are left out", gone))
	}
	if twice > 0 {
		notes = append(notes, fmt.Sprintf("%d ratings were of an item and question their rater had rated already: each rater's ratings of an item are averaged", twice))
	}
	// The raters in order: scorers, judges, humans, each by name.
	order := map[string]int{RaterScorer: 0, RaterJudge: 1, RaterHuman: 2}
	raters := slices.SortedFunc(maps.Keys(values), func(a, b string) int {
		return cmp.Or(cmp.Compare(order[kinds[a]], order[kinds[b]]), cmp.Compare(a, b))
	})
	paired := func(a, b string) bool {
		ka, kb := kinds[a], kinds[b]
		switch {
		case ka != kb:
			return true
		case ka == RaterJudge: // two judges on the same score
			return judgeScore(a) == judgeScore(b)
		}
		return false // scorers with each other, humans with each other: not what this compares
	}
	var out []InspectPair
	for _, task := range slices.Sorted(maps.Keys(clusters)) {
		for i, a := range raters {
			for _, b := range raters[i+1:] {
				if !paired(a, b) {
					continue
				}
				// The clusters are the samples this pair has items of,
				// numbered in the items' order.
				p := Paired{Score: task + ": " + a + " ~ " + b}
				renum := map[int]int{}
				its := slices.SortedFunc(maps.Keys(values[a]), func(x, y item) int {
					return cmp.Or(cmp.Compare(x.eval, y.eval), cmp.Compare(x.sample, y.sample), cmp.Compare(x.epoch, y.epoch))
				})
				binary := true
				for _, it := range its {
					pl, ok := items[it]
					vb, both := values[b][it]
					if !ok || !both || pl.task != task {
						continue
					}
					va := values[a][it]
					c, ok := renum[pl.cluster]
					if !ok {
						c = len(renum)
						renum[pl.cluster] = c
					}
					p.Add(va, vb, c, -1)
					binary = binary && (va == 0 || va == 1) && (vb == 0 || vb == 1)
				}
				if len(p.A) == 0 {
					continue
				}
				p.Clusters = len(renum)
				pair := InspectPair{Task: task, A: a, B: b, KindA: kinds[a], KindB: kinds[b], Binary: binary}
				if binary {
					pair.Stats = BinaryAgreement(p, opt)
				} else {
					pair.Stats = ContinuousAgreement(p, AgreementOptions{Kendall: true}, opt)
				}
				out = append(out, pair)
			}
		}
	}
	if len(out) == 0 {
		return nil, notes, NoDataf("no Inspect sample is rated by two of its scorers, judges and humans: judge the samples (gymlens judge --source inspect --prompt RUBRIC) or ingest ratings of them")
	}
	return out, notes, nil
}

// judgeScore is the score a judge rater names: its name without the
// judge.
func judgeScore(rater string) string {
	if i := strings.LastIndex(rater, " ("); i >= 0 {
		return rater[:i]
	}
	return rater
}
