package analysis

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

type selfRefs struct {
	Cases []struct {
		Name          string
		Groups, Other [][]float64
		ICC           float64 `json:"icc"`
		NoiseShare    float64 `json:"noise_share"`
		MSD, Noise    float64
	}
}

// ICC(1,1) and the noise decomposition against scipy's one-way ANOVA and
// numpy (testdata/make_self_refs.py), balanced and not.
func TestSelfAgreementReferences(t *testing.T) {
	b, err := os.ReadFile("testdata/self_refs.json")
	if err != nil {
		t.Fatal(err)
	}
	var refs selfRefs
	if err := json.Unmarshal(b, &refs); err != nil {
		t.Fatal(err)
	}
	if len(refs.Cases) != 3 {
		t.Fatalf("%d cases", len(refs.Cases))
	}
	for _, c := range refs.Cases {
		if got := ICC1(c.Groups, nil); math.Abs(got-c.ICC) > 1e-12 {
			t.Errorf("%s: ICC %v, scipy %v", c.Name, got, c.ICC)
		}
		msd, noise, share := NoiseDecomposition(c.Groups, c.Other)
		if math.Abs(msd-c.MSD) > 1e-9*c.MSD || math.Abs(noise-c.Noise) > 1e-9*c.Noise || math.Abs(share-c.NoiseShare) > 1e-12 {
			t.Errorf("%s: msd %v noise %v share %v, numpy %v %v %v", c.Name, msd, noise, share, c.MSD, c.Noise, c.NoiseShare)
		}
		// Weights are multiplicities: an item weighted 2 is the item twice.
		w := make([]float64, len(c.Groups))
		var twice [][]float64
		for i := range w {
			w[i] = float64(i % 3)
			for range int(w[i]) {
				twice = append(twice, c.Groups[i])
			}
		}
		if a, b := ICC1(c.Groups, w), ICC1(twice, nil); math.Abs(a-b) > 1e-12 {
			t.Errorf("%s: weighted ICC %v, repeated %v", c.Name, a, b)
		}
	}
}

// A judge asked twice whose TA label flips on a known set of items: the
// flip rate is that share, α the closed form of nominal α for it, and TC
// scores with no within-item variance have ICC 1.
func TestCompareSelf(t *testing.T) {
	var items []rows.RepeatItem
	flipped := 0
	for i := range 40 {
		now := 1.0
		scores := []map[string]float64{{"ta_now": 1, "ta_later": 1}, {"ta_now": now, "ta_later": 1}}
		if i%5 == 0 {
			scores[1]["ta_now"] = 0
			flipped++
		}
		items = append(items, rows.RepeatItem{RunID: "r" + string(rune('a'+i%26)) + string(rune('a'+i/26)), Metric: "ta", Judge: "j", Seeds: []int64{1, 2}, Scores: scores})
		items = append(items, rows.RepeatItem{RunID: "r", Task: string(rune('a' + i)), Metric: "tc", Judge: "j", Seeds: []int64{1, 2},
			Scores: []map[string]float64{{"correctness": float64(i) / 40}, {"correctness": float64(i) / 40}}})
	}
	s, err := CompareSelf("j", items, nil, BootstrapOptions{Resamples: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]SelfScore{}
	for _, x := range s.Scores {
		got[x.Score] = x
	}
	now := got["TA.now"]
	N, F := 40.0, float64(flipped)
	if now.Scale != ScaleBinary || now.Items != 40 || now.FlipRate.Value != F/N || math.Abs(now.Alpha.Value-(1-(2*N-1)/(2*N-F))) > 1e-12 {
		t.Errorf("TA.now: %+v, want flip rate %v and α %v", now, F/N, 1-(2*N-1)/(2*N-F))
	}
	if l := got["TA.later"]; l.FlipRate.Value != 0 {
		t.Errorf("TA.later never flips: %+v", l)
	}
	if c := got["TC.correctness"]; c.Scale != ScaleInterval || c.ICC.Value != 1 || c.SDWithin != 0 || c.Alpha.Value != 1 {
		t.Errorf("TC.correctness: %+v", c)
	}
	if _, err := CompareSelf("other", items, nil, BootstrapOptions{Resamples: 50}); err == nil {
		t.Error("a judge never asked twice passed")
	}
}
