package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A Ranker gives what Ranks gives, bit for bit, for short vectors (its
// insertion sort) and long ones, with ties, values equal to TiePrecision,
// and its buffers reused from a longer call to a shorter one.
func TestRankerIsRanks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var k Ranker
	for _, n := range []int{1, 2, 3, 26, 32, 33, 100, 7, 0} {
		for range 50 {
			x := make([]float64, n)
			for i := range x {
				x[i] = float64(rng.IntN(5)) / 4
				if rng.IntN(4) == 0 {
					x[i] += 1e-13 // a tie to TiePrecision
				}
				if rng.IntN(10) == 0 {
					x[i] = math.Inf(rng.IntN(3) - 1)
				}
				if rng.IntN(40) == 0 {
					x[i] = math.NaN() // Ranks puts NaNs first
				}
			}
			want, got := Ranks(x), k.Ranks(x)
			if !slices.EqualFunc(want, got, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
				t.Fatalf("n %d: Ranker %v, Ranks %v of %v", n, got, want, x)
			}
		}
	}
}
