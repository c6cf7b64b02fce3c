package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// --by meta.FIELD splits a configuration × task by a metadata field;
// --cluster meta.FIELD resamples that field's values within the task:
// the mean stays the mean over samples, the interval widens with fewer,
// larger clusters, and a sample without the field is an error naming it.
func TestInspectMeansByAndClusterMeta(t *testing.T) {
	d := &rows.InspectData{Evals: []rows.InspectEval{{EvalID: "e", Task: "t", ConfigID: "m | solver"}}}
	meta := []rows.InspectSampleMeta{}
	for i, v := range []float64{1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0} {
		id := string(rune('a' + i))
		d.Scores = append(d.Scores, rows.InspectScore{EvalID: "e", SampleID: id, Epoch: 1, Scorer: "match", Metric: "inspect.match", Value: v, Valid: true})
		level := "easy"
		if i%2 == 1 {
			level = "hard"
		}
		meta = append(meta, rows.InspectSampleMeta{EvalID: "e", SampleID: id, Values: []string{level, string(rune('p' + i/3))}})
	}
	opt := DefaultBootstrap
	opt.Resamples = 2000
	// By level: easy are samples a c e g i k (1 0 0 1 1 1), hard b d f h j l (1 1 0 1 0 0).
	by, err := InspectMeansWith(d, InspectMeansOptions{By: []string{"level"}, Meta: onlyFirst(meta)}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(by) != 2 || by[0].Groups[0] != "easy" || by[1].Groups[0] != "hard" || math.Abs(by[0].Value-4.0/6) > 1e-12 || math.Abs(by[1].Value-0.5) > 1e-12 || by[0].Samples != 6 {
		t.Fatalf("by level: %+v", by)
	}
	plain, err := InspectMeans(d, "", opt)
	if err != nil {
		t.Fatal(err)
	}
	clustered, err := InspectMeansWith(d, InspectMeansOptions{Cluster: "group", Meta: onlySecond(meta)}, opt)
	if err != nil {
		t.Fatal(err)
	}
	p, c := plain[0], clustered[0]
	if p.Clusters != 12 || c.Clusters != 4 || c.Samples != 12 || math.Abs(c.Value-p.Value) > 1e-12 || math.Abs(p.Value-7.0/12) > 1e-12 {
		t.Errorf("plain %+v, clustered %+v", p, c)
	}
	// The four groups' means are 2/3, 2/3, 2/3 and 1/3: the clusters vary
	// less than the samples do, and there are fewer of them.
	if !(c.Hi-c.Lo > 0) || c.Hi-c.Lo == p.Hi-p.Lo {
		t.Errorf("the clustered interval [%v, %v] against the samples' [%v, %v]", c.Lo, c.Hi, p.Lo, p.Hi)
	}
	meta[5].Values[1] = rows.Absent
	if _, err := InspectMeansWith(d, InspectMeansOptions{Cluster: "group", Meta: onlySecond(meta)}, opt); err == nil || !strings.Contains(err.Error(), "sample f of e (task t) has no group") {
		t.Errorf("a sample without the cluster field: %v", err)
	}
}

func onlyFirst(ms []rows.InspectSampleMeta) []rows.InspectSampleMeta {
	out := make([]rows.InspectSampleMeta, len(ms))
	for i, m := range ms {
		out[i] = rows.InspectSampleMeta{EvalID: m.EvalID, SampleID: m.SampleID, Values: m.Values[:1]}
	}
	return out
}

func onlySecond(ms []rows.InspectSampleMeta) []rows.InspectSampleMeta {
	out := make([]rows.InspectSampleMeta, len(ms))
	for i, m := range ms {
		out[i] = rows.InspectSampleMeta{EvalID: m.EvalID, SampleID: m.SampleID, Values: m.Values[1:]}
	}
	return out
}

func TestInspectMetaFields(t *testing.T) {
	fields, cl, err := InspectMetaFields([]string{"config", "task", "meta.level", "meta.level", "meta.source"}, "meta.group")
	if err != nil || strings.Join(fields, ",") != "level,source" || cl != "group" {
		t.Errorf("%v %q %v", fields, cl, err)
	}
	for _, c := range []struct {
		by      []string
		cluster string
		want    string
	}{
		{[]string{"harness"}, "", `--by with --source inspect: "harness" is not config, task or meta.FIELD`},
		{[]string{"meta."}, "", `"meta." is not meta.FIELD`},
		{[]string{`meta.a"b`}, "", `is not meta.FIELD`},
		{nil, "level", `--cluster with --source inspect: "level" is not meta.FIELD`},
		{nil, "meta.x\ny", `is not meta.FIELD`},
	} {
		if _, _, err := InspectMetaFields(c.by, c.cluster); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %q: %v, want %q", c.by, c.cluster, err, c.want)
		}
	}
}

// compare --source inspect pairs two configurations by sample within a
// task and scorer: each sample's epochs averaged, the samples one of them
// lacks left out and counted, the per-sample correlation beside it.
func TestCompareInspectPairsBySample(t *testing.T) {
	d := &rows.InspectData{Evals: []rows.InspectEval{
		{EvalID: "a1", Task: "t", ConfigID: "A"}, {EvalID: "b1", Task: "t", ConfigID: "B"}, {EvalID: "c1", Task: "u", ConfigID: "A"},
	}}
	add := func(eval, sample string, epoch int, v float64) {
		d.Scores = append(d.Scores, rows.InspectScore{EvalID: eval, SampleID: sample, Epoch: epoch, Metric: "inspect.match", Value: v, Valid: true})
	}
	// A: 0, 1, 0, 1 (and a fifth sample B lacks); B: 0, 1, ½ + ½ = 1, 1.
	for i, v := range []float64{0, 1, 0, 1, 1} {
		add("a1", string(rune('p'+i)), 1, v)
	}
	add("b1", "p", 1, 0)
	add("b1", "q", 1, 1)
	add("b1", "r", 1, 1)
	add("b1", "r", 2, 1)
	add("b1", "s", 1, 1)
	add("b1", "s", 2, 1)
	add("c1", "p", 1, 1) // task u: B has none, no comparison
	opt := DefaultBootstrap
	opt.Resamples = 1000
	res, err := CompareInspect(d, []string{"A", "B"}, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 {
		t.Fatalf("%d comparisons: %+v", len(res), res)
	}
	c := res[0]
	if c.Metric != "inspect.match (t)" || c.MeanA != 0.5 || c.MeanB != 0.75 || math.Abs(c.Value-0.25) > 1e-12 || c.Clusters != 4 || c.NA != 4 {
		t.Errorf("%+v", c)
	}
	// Pearson of (0, 1, 0, 1) and (0, 1, 1, 1): 0.5 / √0.75.
	if c.R == nil || math.Abs(*c.R-0.5/math.Sqrt(0.75)) > 1e-12 {
		t.Errorf("r = %v", c.R)
	}
	if !strings.Contains(strings.Join(c.Warnings, "; "), "1 samples scored by some of the configurations compared only: left out") {
		t.Errorf("warnings %v", c.Warnings)
	}
	if (c.P < 0.05) != (c.Lo > 0 || c.Hi < 0) {
		t.Errorf("p %v and the interval [%v, %v] disagree", c.P, c.Lo, c.Hi)
	}
	if _, err := CompareInspect(d, []string{"A", "C"}, opt); err == nil || !strings.Contains(err.Error(), `no Inspect runs of configuration "C"; configurations: A; B`) {
		t.Errorf("an unknown configuration: %v", err)
	}
}
