package stat

import (
	"math"
	"slices"
)

// Quantiles7 returns Quantile7(p, sort(x)) for each p of ps (ascending;
// otherwise x is sorted), ordering x only as far as those order
// statistics need, where sorting 10,000 replicates for every statistic of
// a report took a fifth of its time: on many values, one pass with
// sampled windows (quantilesByWindows); otherwise, or when the windows
// miss, a selection per quantile, O(n). x may be reordered; it must hold
// no NaN. The results are the sorted slice's values exactly.
func Quantiles7(x []float64, ps ...float64) []float64 {
	out := make([]float64, len(ps))
	n := len(x)
	if n == 0 {
		for i := range out {
			out[i] = math.NaN()
		}
		return out
	}
	if !slices.IsSorted(ps) {
		slices.Sort(x)
		for i, p := range ps {
			out[i] = Quantile7(p, x)
		}
		return out
	}
	if out, ok := quantilesByWindows(x, ps); ok {
		return out
	}
	// at returns the k-th smallest value (0-based). The ks asked for do
	// not decrease, so x[done:] holds every value not below the last one
	// placed (x[done-1]) and the next is selected among them alone; a k
	// below done is one placed before, untouched since.
	done := 0
	at := func(k int) float64 {
		if k >= done {
			selectNth(x[done:], k-done)
			done = k + 1
		}
		return x[k]
	}
	for i, p := range ps {
		switch {
		case math.IsNaN(p):
			out[i] = math.NaN()
		case p <= 0:
			out[i] = at(0)
		case p >= 1:
			out[i] = at(n - 1)
		default:
			h := float64(float64(n-1) * p)
			lo := math.Floor(h)
			k := int(lo)
			if k+1 >= n {
				out[i] = at(n - 1)
				continue
			}
			a := at(k)
			b := at(k + 1)
			out[i] = a + float64((h-lo)*(b-a))
		}
	}
	return out
}

// selectNth reorders x so that x[k] holds the value sorting would put
// there, with nothing smaller after it and nothing larger before it
// (Hoare's selection, pivot the median of three; a short or stubborn
// range is sorted instead, which bounds the worst case).
func selectNth(x []float64, k int) {
	lo, hi := 0, len(x)-1
	for round := 0; hi > lo; round++ {
		if hi-lo < 16 || round == 64 {
			slices.Sort(x[lo : hi+1])
			return
		}
		mid := lo + (hi-lo)/2
		if x[mid] < x[lo] {
			x[mid], x[lo] = x[lo], x[mid]
		}
		if x[hi] < x[lo] {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if x[hi] < x[mid] {
			x[hi], x[mid] = x[mid], x[hi]
		}
		pivot := x[mid]
		i, j := lo, hi
		for i <= j {
			for x[i] < pivot {
				i++
			}
			for x[j] > pivot {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// x[lo..j] ≤ pivot ≤ x[i..hi], and x[j+1..i-1] equal the pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// quantilesByWindows is Quantiles7 for at least windowMin values and
// levels strictly between 0 and 1, in one pass over x: a sorted sample of
// windowSample values of x brackets the two order statistics each level
// needs (k and k+1) with a window wide enough to hold them nearly always;
// the pass counts the values below each window and gathers those inside,
// and a selection among the gathered few finds them. When a window misses
// (it cannot, whatever the sample, go unnoticed: the counts show it), or
// gathers too much (many ties), it reports false and the caller selects
// over all of x. x is not reordered.
func quantilesByWindows(x []float64, ps []float64) ([]float64, bool) {
	n := len(x)
	if n < windowMin || len(ps) > 4 {
		return nil, false
	}
	for _, p := range ps {
		if !(p > 0 && p < 1) {
			return nil, false
		}
	}
	var sample [windowSample]float64
	step := n / windowSample
	for j := range sample {
		sample[j] = x[j*step+step/2]
	}
	slices.Sort(sample[:])
	type window struct {
		lo, hi   float64
		below    int
		k        int // the lower order statistic; k+1 is the upper
		h, floor float64
		got      []float64
		span     int // the values it should gather, with room to spare
	}
	var ws [4]window
	limit := n / 8
	for i, p := range ps {
		h := float64(float64(n-1) * p)
		lo := math.Floor(h)
		k := int(lo)
		// Where k falls among the sample, and a margin of four standard
		// deviations of a sample quantile's rank (plus two positions).
		q := float64(k) / float64(n)
		at := int(q * windowSample)
		margin := int(4*math.Sqrt(windowSample*q*(1-q))) + 2
		w := window{lo: math.Inf(-1), hi: math.Inf(1), k: k, h: h, floor: lo, span: min(limit, (2*margin+4)*n/windowSample)}
		if a := at - margin; a >= 0 {
			w.lo = sample[a]
		}
		if b := at + 1 + margin; b < windowSample {
			w.hi = sample[b]
		}
		ws[i] = w
	}
	wins := ws[:len(ps)]
	if len(wins) == 2 {
		// The percentile interval's case, its two windows in locals.
		lo1, hi1, lo2, hi2 := wins[0].lo, wins[0].hi, wins[1].lo, wins[1].hi
		var b1, b2 int
		g1, g2 := make([]float64, 0, wins[0].span), make([]float64, 0, wins[1].span)
		for _, v := range x {
			if v < lo1 {
				b1++
			} else if v <= hi1 {
				g1 = append(g1, v)
			}
			if v < lo2 {
				b2++
			} else if v <= hi2 {
				g2 = append(g2, v)
			}
		}
		if len(g1) > limit || len(g2) > limit {
			return nil, false
		}
		wins[0].below, wins[0].got, wins[1].below, wins[1].got = b1, g1, b2, g2
	} else {
		for _, v := range x {
			for i := range wins {
				w := &wins[i]
				if v < w.lo {
					w.below++
				} else if v <= w.hi {
					if len(w.got) == limit {
						return nil, false
					}
					w.got = append(w.got, v)
				}
			}
		}
	}
	out := make([]float64, len(ps))
	for i := range wins {
		w := &wins[i]
		j := w.k - w.below
		if j < 0 || j+1 >= len(w.got) {
			return nil, false
		}
		selectNth(w.got, j)
		a := w.got[j]
		b := slices.Min(w.got[j+1:])
		out[i] = a + float64((w.h-w.floor)*(b-a))
	}
	return out, true
}

// The windows' sample size, and the fewest values for which they pay.
const (
	windowSample = 256
	windowMin    = 4096
)
