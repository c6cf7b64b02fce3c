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
