package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
)

// stagingPeer is the arm every other is divided by: DuckDB's own reader.
const stagingPeer = "read_ndjson_auto"

// stagingPaths are the validation arm and the load arm of each way from
// the lines to the table: with the staged CSV (until issue 63) and with
// typed records (since).
var stagingPaths = [][2]string{{"validate", "read_csv"}, {"validate_typed", "typed_file"}}

// stagingBases are the arms the others are also divided by, with the arms
// divided: each load by the staged CSV, the typed validation by the CSV's.
var stagingBases = map[string][]string{
	"read_csv": {"table_function", "typed_file", "appender"},
	"validate": {"validate_typed"},
}

// stagingFigure is one run of one arm: wall and CPU seconds (CPU 0 when
// the benchmark reported none).
type stagingFigure struct{ wall, cpu float64 }

// stagingRuns are the figures of each arm, in the order the runs came, and
// the arms in the order they first came.
type stagingRuns struct {
	arms []string
	by   map[string][]stagingFigure
}

var stagingLine = regexp.MustCompile(`^BenchmarkStaging/([^\s#]+?)(?:#\d+)?(?:-\d+)?\s+\d+\s+([0-9.]+) ns/op(?:.*?\s([0-9.]+) cpu-ms/op)?`)

// parseStaging reads `go test -bench Staging` output: the k-th figure of
// each arm is run k.
func parseStaging(r io.Reader) (*stagingRuns, error) {
	runs := &stagingRuns{by: map[string][]stagingFigure{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := stagingLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		ns, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", sc.Text(), err)
		}
		var cpu float64
		if m[3] != "" {
			if cpu, err = strconv.ParseFloat(m[3], 64); err != nil {
				return nil, fmt.Errorf("%q: %v", sc.Text(), err)
			}
		}
		if _, ok := runs.by[m[1]]; !ok {
			runs.arms = append(runs.arms, m[1])
		}
		runs.by[m[1]] = append(runs.by[m[1]], stagingFigure{ns / 1e9, cpu / 1e3})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(runs.arms) == 0 {
		return nil, fmt.Errorf("no BenchmarkStaging lines in the input: pipe in `GYMLENS_STAGING_ROUNDS=7 go test ./ingest -run '^$' -bench Staging -benchtime 1x`")
	}
	if _, ok := runs.by[stagingPeer]; !ok {
		return nil, fmt.Errorf("no %s arm in the input: the ratios need it", stagingPeer)
	}
	n := len(runs.by[runs.arms[0]])
	for _, a := range runs.arms {
		if len(runs.by[a]) != n {
			return nil, fmt.Errorf("arm %s has %d runs, arm %s %d: every arm must run as often (-benchtime 1x)", a, len(runs.by[a]), runs.arms[0], n)
		}
	}
	return runs, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratios are num(k) / den(k) for every run k, of the wall times and of
// the CPU times (none when the benchmark reported none).
func (runs *stagingRuns) ratios(num, den func(k int) stagingFigure) (wall, cpu []float64) {
	for k := range runs.by[stagingPeer] {
		n, d := num(k), den(k)
		wall = append(wall, n.wall/d.wall)
		if d.cpu > 0 {
			cpu = append(cpu, n.cpu/d.cpu)
		}
	}
	return wall, cpu
}

func (runs *stagingRuns) arm(name string) func(int) stagingFigure {
	return func(k int) stagingFigure { return runs.by[name][k] }
}

func (runs *stagingRuns) sum(a, b string) func(int) stagingFigure {
	return func(k int) stagingFigure {
		x, y := runs.by[a][k], runs.by[b][k]
		return stagingFigure{x.wall + y.wall, x.cpu + y.cpu}
	}
}

// writeStaging prints every run's figures, each arm's medians, and the
// medians of the run-by-run ratios: of each arm and each way (stagingPaths)
// to the peer, and of the ways' arms to each other (stagingBases).
func writeStaging(w io.Writer, runs *stagingRuns) {
	n := len(runs.by[stagingPeer])
	fmt.Fprintf(w, "BenchmarkStaging: %d runs of each arm, alternating; wall s / CPU s (every thread of the process)\n\n", n)
	fmt.Fprintf(w, "%-8s", "run")
	for _, a := range runs.arms {
		fmt.Fprintf(w, " %17s", a)
	}
	fmt.Fprintln(w)
	cell := func(f stagingFigure) string { return fmt.Sprintf("%.3f / %.3f", f.wall, f.cpu) }
	for k := range n {
		fmt.Fprintf(w, "%-8d", k+1)
		for _, a := range runs.arms {
			fmt.Fprintf(w, " %17s", cell(runs.by[a][k]))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%-8s", "median")
	for _, a := range runs.arms {
		var wall, cpu []float64
		for _, f := range runs.by[a] {
			wall, cpu = append(wall, f.wall), append(cpu, f.cpu)
		}
		fmt.Fprintf(w, " %17s", cell(stagingFigure{median(wall), median(cpu)}))
	}
	fmt.Fprintf(w, "\n\nratios, the median of the %d runs' (range), wall; CPU:\n", n)
	line := func(label string, wall, cpu []float64) {
		fmt.Fprintf(w, "  %-46s %5.2f × (%.2f–%.2f)", label, median(wall), slices.Min(wall), slices.Max(wall))
		if len(cpu) == len(wall) {
			fmt.Fprintf(w, "; %5.2f × (%.2f–%.2f)", median(cpu), slices.Min(cpu), slices.Max(cpu))
		}
		fmt.Fprintln(w)
	}
	for _, a := range runs.arms {
		if a == stagingPeer {
			continue
		}
		wall, cpu := runs.ratios(runs.arm(a), runs.arm(stagingPeer))
		line(a+" ÷ "+stagingPeer, wall, cpu)
	}
	for _, p := range stagingPaths {
		if runs.by[p[0]] != nil && runs.by[p[1]] != nil {
			wall, cpu := runs.ratios(runs.sum(p[0], p[1]), runs.arm(stagingPeer))
			line(p[0]+" + "+p[1]+" ÷ "+stagingPeer, wall, cpu)
		}
	}
	for _, base := range []string{"read_csv", "validate"} {
		for _, a := range stagingBases[base] {
			if runs.by[base] != nil && runs.by[a] != nil {
				wall, cpu := runs.ratios(runs.arm(a), runs.arm(base))
				line(a+" ÷ "+base, wall, cpu)
			}
		}
	}
}

// benchStaging summarizes the output of `go test ./ingest -bench Staging`
// read from the files named, or from the standard input.
func benchStaging(args []string) error {
	fl := flag.NewFlagSet("staging", flag.ContinueOnError)
	if err := fl.Parse(args); err != nil {
		return err
	}
	var r io.Reader = os.Stdin
	if fl.NArg() > 0 {
		var rs []io.Reader
		for _, p := range fl.Args() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			rs = append(rs, f)
		}
		r = io.MultiReader(rs...)
	}
	runs, err := parseStaging(r)
	if err != nil {
		return err
	}
	writeStaging(os.Stdout, runs)
	return nil
}

// stagingUsage is the command's line in usage.
const stagingUsage = "       gymlens-bench staging [FILE...]   (reads go test -bench Staging output: see the package comment)"
