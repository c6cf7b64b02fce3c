package stat

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Units that repeat (a 1–5 scale, two to four raters) are summed once per
// distinct unit, times how often a resample draws them: α and every
// resample's α agree with the unit-by-unit sums to 1e-13 at each level,
// with no unit left out and none counted twice (a resample that draws
// one unit thrice).
func TestAlphaGroupsRepeatedUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	units := make([][]float64, 3000)
	for i := range units {
		base := 1 + r.IntN(5)
		for k := 0; k < 2+r.IntN(3); k++ {
			units[i] = append(units[i], float64(min(5, max(1, base+r.IntN(3)-1))))
		}
	}
	for _, level := range []string{Nominal, Ordinal, Interval, Ratio} {
		grouped, err := NewAlphaData(units, level)
		if err != nil {
			t.Fatal(err)
		}
		alphaGroups = false
		plain, _ := NewAlphaData(units, level)
		alphaGroups = true
		if grouped.pat == nil || len(grouped.units) > 100 || plain.pat != nil {
			t.Fatalf("%s: %d distinct units of %d, grouped %v", level, len(grouped.units), grouped.Pairable, grouped.pat != nil)
		}
		w := make([]float64, grouped.Pairable)
		for trial := 0; trial < 20; trial++ {
			clear(w)
			for range w {
				w[r.IntN(len(w))]++
			}
			if trial == 0 {
				clear(w)
				w[7] = 3
				w[11] = 1
			}
			for _, ww := range [][]float64{nil, w} {
				g, p := grouped.Alpha(ww), plain.Alpha(ww)
				if math.Abs(g-p) > 1e-13*math.Max(1, math.Abs(p)) || math.IsNaN(g) != math.IsNaN(p) {
					t.Fatalf("%s, trial %d: grouped α %v, unit by unit %v", level, trial, g, p)
				}
			}
		}
	}
}
