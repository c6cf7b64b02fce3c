package analysis

import (
	"math"
	"slices"

	"github.com/gymlens/gymlens/analysis/stat"
	"github.com/gymlens/gymlens/ingest/rows"
)

// Wilson is the Wilson score interval for k successes in n trials at the
// given level (Wilson 1927): NaN, NaN when n is 0.
func Wilson(k, n int, level float64) (lo, hi float64) {
	if n <= 0 {
		return math.NaN(), math.NaN()
	}
	z := stat.ZQuantile(level)
	nf, p := float64(n), float64(k)/float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return max(0, mid-half), min(1, mid+half)
}

// choose is C(n, k) as a float (exact for the sizes of benchmark runs).
func choose(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// PassAt is the unbiased estimator of pass@k from n runs with c
// successes (Chen et al. 2021): the chance that k runs drawn without
// replacement hold at least one success. NaN when n < k.
func PassAt(n, c, k int) float64 {
	if k < 1 || n < k {
		return math.NaN()
	}
	if n-c < k {
		return 1
	}
	return 1 - choose(n-c, k)/choose(n, k)
}

// PassHat is the unbiased estimator of pass^k (Yao et al. 2024, τ-bench):
// the chance that k runs drawn without replacement all succeed. NaN when
// n < k.
func PassHat(n, c, k int) float64 {
	if k < 1 || n < k {
		return math.NaN()
	}
	return choose(c, k) / choose(n, k)
}

// ReportStats recomputes, from result rows, the statistics PARE's
// combined_result.json and Meta-ARE's benchmark_stats.json give for a set
// of runs, as their report code defines them: success rate in percent
// over validated runs, its standard deviation and standard error across
// run numbers (runs without a run number are in no run-number group),
// Pass@k / Pass^k as counts and percents of scenarios, durations, and
// (PARE) the totals and rates of the stored counts. cluster groups
// scenarios for Pass@k (Meta-ARE counts a scenario per phase).
func ReportStats(rows []rows.PAREResultRow, cluster func(*rows.PAREResultRow) string) map[string]float64 {
	s := map[string]float64{}
	if len(rows) == 0 {
		return s
	}
	var validated, success, failed, exception, noValidation float64
	for _, r := range rows {
		if !math.IsNaN(r.Success) {
			validated++
		}
		switch r.Status {
		case "success":
			success++
		case "failed":
			failed++
		case "exception":
			exception++
		case "no_validation":
			noValidation++
		}
	}
	s["total_runs"] = float64(len(rows))
	s["validated_runs"], s["success_runs"], s["failed_runs"] = validated, success, failed
	s["exception_runs"], s["no_validation_runs"] = exception, noValidation

	// Run-number groups, in order.
	var runNos []int
	byRun := map[int][]int{}
	for i, r := range rows {
		if r.RunNumber < 0 {
			continue
		}
		if _, ok := byRun[r.RunNumber]; !ok {
			runNos = append(runNos, r.RunNumber)
		}
		byRun[r.RunNumber] = append(byRun[r.RunNumber], i)
	}
	slices.Sort(runNos)
	spread := func(vals []float64) (sd, sem float64) {
		if len(vals) < 2 {
			return 0, 0
		}
		sd = stat.SD(vals)
		return sd, sd / math.Sqrt(float64(len(vals)))
	}
	// Success rate over validated runs.
	if validated > 0 {
		var sum float64
		for _, r := range rows {
			if !math.IsNaN(r.Success) {
				sum += r.Success
			}
		}
		s["success_rate"] = 100 * sum / validated
		var perRun []float64
		for _, n := range runNos {
			var m, k float64
			for _, i := range byRun[n] {
				if !math.IsNaN(rows[i].Success) {
					m += rows[i].Success
					k++
				}
			}
			if k > 0 {
				perRun = append(perRun, 100*m/k)
			}
		}
		s["success_rate_std"], s["success_rate_sem"] = spread(perRun)
	} else {
		s["success_rate"], s["success_rate_std"], s["success_rate_sem"] = 0, 0, 0
	}
	// Pass@k and Pass^k over scenarios.
	scen := map[string]bool{}
	type sc struct{ sum, n, all float64 }
	per := map[string]*sc{}
	var order []string
	for i := range rows {
		c := cluster(&rows[i])
		scen[c] = true
		x := per[c]
		if x == nil {
			x = &sc{}
			per[c] = x
			order = append(order, c)
		}
		x.all++
		if !math.IsNaN(rows[i].Success) {
			x.sum += rows[i].Success
			x.n++
		}
	}
	var passAt, passAll float64
	kMax, kSame := 0.0, true
	for j, c := range order {
		x := per[c]
		if x.n > 0 && x.sum > 0 {
			passAt++
		}
		if x.n > 0 && x.sum == x.n {
			passAll++
		}
		if j > 0 && x.all != per[order[0]].all {
			kSame = false
		}
		kMax = max(kMax, x.all)
	}
	total := float64(len(scen))
	s["total_scenarios"] = total
	s["pass_at_k"], s["pass_k"] = passAt, passAll
	s["pass_at_k_percent"], s["pass_k_percent"] = 100*passAt/total, 100*passAll/total
	if kSame {
		s["k"] = per[order[0]].all
	} else {
		s["k"] = kMax
	}
	if validated == 0 {
		s["pass_at_k"], s["pass_k"], s["pass_at_k_percent"], s["pass_k_percent"], s["k"] = 0, 0, 0, 0, 1
	}
	// Durations.
	var durs []float64
	for _, r := range rows {
		if !math.IsNaN(r.RunDuration) {
			durs = append(durs, r.RunDuration)
		}
	}
	s["avg_run_duration"], s["avg_run_duration_std"] = 0, 0
	if len(durs) > 0 {
		s["avg_run_duration"] = stat.Mean(durs)
		if len(durs) > 1 {
			s["avg_run_duration_std"] = stat.SD(durs)
		}
	}
	var jobs []float64
	for _, r := range rows {
		if !math.IsNaN(r.JobDuration) {
			jobs = append(jobs, r.JobDuration)
		}
	}
	s["job_duration"] = 0
	if len(jobs) > 0 {
		s["job_duration"] = stat.Mean(jobs)
	}
	if rows[0].Source != "pare" {
		return s
	}
	// PARE's totals and rates of the stored counts.
	sum := func(idx []int, c int) float64 {
		var t float64
		for _, i := range idx {
			if v := rows[i].Counts[c]; !math.IsNaN(v) {
				t += v
			}
		}
		return t
	}
	all := make([]int, len(rows))
	for i := range all {
		all[i] = i
	}
	const prop, acc, read, write, turns = countProposals, countAcceptances, countReads, countWrites, countTurns
	s["total_proposals"], s["total_acceptances"], s["total_turns"] = sum(all, prop), sum(all, acc), sum(all, turns)
	s["total_read_only_actions"], s["total_write_actions"] = sum(all, read), sum(all, write)
	ratio := func(a, b float64) float64 {
		if b > 0 {
			return a / b
		}
		return 0
	}
	s["aggregate_proposal_rate"] = ratio(s["total_proposals"], s["total_turns"])
	s["aggregate_acceptance_rate"] = ratio(s["total_acceptances"], s["total_proposals"])
	n := float64(len(rows))
	s["avg_read_only_actions"], s["avg_write_actions"] = s["total_read_only_actions"]/n, s["total_write_actions"]/n
	var pr, ar, rd, wr []float64
	for _, no := range runNos {
		idx := byRun[no]
		if t := sum(idx, turns); t > 0 {
			pr = append(pr, sum(idx, prop)/t)
		}
		if p := sum(idx, prop); p > 0 {
			ar = append(ar, sum(idx, acc)/p)
		}
		rd = append(rd, sum(idx, read)/float64(len(idx)))
		wr = append(wr, sum(idx, write)/float64(len(idx)))
	}
	s["aggregate_proposal_rate_std"], s["aggregate_proposal_rate_sem"] = spread(pr)
	s["aggregate_acceptance_rate_std"], s["aggregate_acceptance_rate_sem"] = spread(ar)
	s["avg_read_only_actions_std"], s["avg_read_only_actions_sem"] = spread(rd)
	s["avg_write_actions_std"], s["avg_write_actions_sem"] = spread(wr)
	return s
}
