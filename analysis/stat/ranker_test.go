package stat

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// midRanks are the ranks by their definition, O(n²): NaNs first, each in
// its own place in input order; every other value the NaNs, the values
// below it, and half of those tied with it (itself included) plus ½.
func midRanks(x []float64) []float64 {
	r := make([]float64, len(x))
	nan := 0
	for _, v := range x {
		if v != v {
			nan++
		}
	}
	seen := 0
	for i, v := range x {
		if v != v {
			seen++
			r[i] = float64(seen)
			continue
		}
		sv := SnapTie(v)
		below, tied := 0, 0
		for _, u := range x {
			if u != u {
				continue
			}
			switch su := SnapTie(u); {
			case su < sv:
				below++
			case su == sv:
				tied++
			}
		}
		r[i] = float64(nan+below) + float64(tied+1)/2
	}
	return r
}

// A Ranker gives the mid-ranks bit for bit, for short vectors (its
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
			want, got := midRanks(x), k.Ranks(x)
			if !slices.Equal(Ranks(x), got) {
				t.Fatalf("n %d: Ranks and a Ranker differ on %v", n, x)
			}
			if !slices.EqualFunc(want, got, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }) {
				t.Fatalf("n %d: Ranker %v, mid-ranks %v of %v", n, got, want, x)
			}
		}
	}
}
