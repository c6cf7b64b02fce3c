package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// JudgeAgreement is the agreement of two judges (A and B) on the same
// items: continuous task scores, the TA labels of runs, and the
// configurations' means.
type JudgeAgreement struct {
	A, B                              string
	Continuous, Binary, Configuration []AgreementStat
}

// CompareJudges computes the agreement of judges names[0] and names[1]
// on the runs given; with no names, of the only two judges there are.
// Scenarios are the resampling units.
func CompareJudges(runs []rows.RunRow, names []string, opt BootstrapOptions) (*JudgeAgreement, error) {
	return CompareJudgesOf(RunSlice(runs), names, opt)
}

// CompareJudgesOf is CompareJudges of a RunSet.
func CompareJudgesOf(runs RunSet, names []string, opt BootstrapOptions) (*JudgeAgreement, error) {
	have := JudgesOf(runs)
	asked := strings.Join(names, ",")
	if len(names) == 0 && len(have) == 2 {
		names = have
	}
	if len(names) != 2 || names[0] == names[1] {
		return nil, Optionf("--judges: expected two different judges A,B, found %q (judges: %s)", asked, strings.Join(have, ", "))
	}
	for _, n := range names {
		if !slices.Contains(have, n) {
			return nil, fmt.Errorf("--judges: no judgment by %q in the runs selected; judges found: %s", n, strings.Join(have, ", "))
		}
	}
	A, B := names[0], names[1]
	scen, conf := Index{}, Index{}
	var cont, bin, cfg []AgreementStat
	// continuous adds the agreement on a score: the configurations' means
	// apart from the items'.
	continuous := func(p Paired) {
		if len(p.A) == 0 {
			return
		}
		p.Clusters, p.Configs = len(scen), len(conf)
		for _, s := range ContinuousAgreement(p, AgreementOptions{ConfigLevel: true}, opt) {
			if s.Stat == StatConfigPearson || s.Stat == StatConfigSpearman {
				cfg = append(cfg, s)
			} else {
				cont = append(cont, s)
			}
		}
	}
	for _, score := range append(slices.Clone(TaskScores), CustomScores(true)...) {
		p := Paired{Score: score}
		for i := range runs.Len() {
			r := runs.Run(i)
			for k := range r.Tasks {
				a, okA := TaskScore(&r.Tasks[k], score, A)
				b, okB := TaskScore(&r.Tasks[k], score, B)
				if okA && okB {
					p.Add(a, b, scen.Of(r.Scenario), conf.Of(r.ConfigID))
				}
			}
		}
		continuous(p)
	}
	for _, label := range TALabels {
		p := Paired{Score: label}
		for i := range runs.Len() {
			r := runs.Run(i)
			a, okA := RunLabel(r, label, A)
			b, okB := RunLabel(r, label, B)
			if okA && okB {
				p.Add(a, b, scen.Of(r.Scenario), conf.Of(r.ConfigID))
			}
		}
		if len(p.A) == 0 {
			continue
		}
		p.Clusters, p.Configs = len(scen), len(conf)
		bin = append(bin, BinaryAgreement(p, opt)...)
		if label == "TA" {
			for _, s := range ContinuousAgreement(p, AgreementOptions{ConfigLevel: true}, opt) {
				if s.Stat == StatConfigPearson || s.Stat == StatConfigSpearman {
					cfg = append(cfg, s)
				}
			}
		}
	}
	for _, score := range CustomScores(false) {
		p := Paired{Score: score}
		for i := range runs.Len() {
			r := runs.Run(i)
			a, okA := customScore(r.Custom, score, A)
			b, okB := customScore(r.Custom, score, B)
			if okA && okB {
				p.Add(a, b, scen.Of(r.Scenario), conf.Of(r.ConfigID))
			}
		}
		continuous(p)
	}
	if len(cont)+len(bin) == 0 {
		return nil, fmt.Errorf("judges %s and %s judged no item in common", A, B)
	}
	return &JudgeAgreement{A: A, B: B, Continuous: cont, Binary: bin, Configuration: cfg}, nil
}
