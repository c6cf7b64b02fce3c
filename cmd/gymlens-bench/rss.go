package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// benchRSS prints the peak resident memory and wall time of every gymlens
// command at two (or more) scales of the sample corpus, each command a
// process of its own, run as a user runs it: the table of docs/benchmarks.md.
func benchRSS(args []string) error {
	fl := flag.NewFlagSet("rss", flag.ExitOnError)
	scales := fl.String("scales", "1,10", "sample corpus scales, comma-separated")
	dir := fl.String("dir", "", "work folder (default: a new one under $TMPDIR, removed after)")
	only := fl.String("only", "", "run only the commands whose name holds one of these comma-separated texts (and validate, ingest, score and what they need)")
	fl.Parse(args)
	work := *dir
	if work == "" {
		d, err := os.MkdirTemp("", "gymlens-bench-rss-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	bin := filepath.Join(work, "gymlens")
	if err := buildGymlens(bin); err != nil {
		return err
	}
	ks, err := parseScales(*scales)
	if err != nil {
		return err
	}
	// A judge server for the judge's commands (latency 0: the client's
	// memory is measured, not the server's pace).
	urls, stopServers, err := childServers(0, 1)
	if err != nil {
		return err
	}
	defer stopServers()
	type result = rssCell
	commands := []struct {
		name string
		args func(k int, d string) []string
	}{
		// validate first: after the ingest every file would be known.
		{"validate", func(k int, d string) []string { return []string{"validate", filepath.Join(d, "corpus")} }},
		{"ingest", func(k int, d string) []string { return []string{"ingest", filepath.Join(d, "corpus")} }},
		{"score", func(int, string) []string { return []string{"score"} }},
		{"metrics --by model,harness", func(int, string) []string { return []string{"metrics", "--by", "model,harness"} }},
		{"compare --harness-switch CC,OC", func(int, string) []string { return []string{"compare", "--harness-switch", "CC,OC"} }},
		{"corr", func(int, string) []string { return []string{"corr"} }},
		{"variance", func(int, string) []string { return []string{"variance"} }},
		{"power --delta TC=3", func(int, string) []string { return []string{"power", "--delta", "TC=3"} }},
		{"rank --metric TC", func(int, string) []string { return []string{"rank", "--metric", "TC"} }},
		{"agree --judges", func(int, string) []string {
			return []string{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b"}
		}},
		{"agree --human", func(int, string) []string { return []string{"agree", "--human"} }},
		{"table main", func(int, string) []string { return []string{"table", "main", "--format", "latex"} }},
		{"report", func(k int, d string) []string { return []string{"report", "--out", filepath.Join(d, "report")} }},
		{"verify (the report)", func(k int, d string) []string { return []string{"verify", filepath.Join(d, "report")} }},
		{"judge --dry-run", func(int, string) []string {
			return []string{"judge", "--metric", "tc,ta,trj", "--judge", "x=m@http://127.0.0.1:9/v1", "--dry-run"}
		}},
		{"judge ta --repeats 2", func(int, string) []string {
			return []string{"judge", "--metric", "ta", "--repeats", "2", "--concurrency", "32", "--judge", "again=m@" + urls[0]}
		}},
		{"agree --self", func(int, string) []string { return []string{"agree", "--self", "again"} }},
		{"metrics --judge-noise", func(int, string) []string {
			return []string{"metrics", "--by", "model,harness", "--judge", "again", "--judge-noise"}
		}},
		{"annotate sample", func(k int, d string) []string {
			return []string{"annotate", "sample", "-n", "200", "--by", "scenario", "--out", filepath.Join(d, "sheet.csv")}
		}},
		{"export --format parquet", func(k int, d string) []string {
			return []string{"export", "--format", "parquet", "--out", filepath.Join(d, "export")}
		}},
		{"lake: metrics --by model,harness", func(int, string) []string { return []string{"metrics", "--by", "model,harness"} }},
		{"lake: report", func(k int, d string) []string { return []string{"report", "--out", filepath.Join(d, "report-lake")} }},
		{"query (all events, CSV)", func(int, string) []string { return []string{"query", "-f", "csv", "SELECT * FROM events"} }},
	}
	// What --only picks, with what those commands need run first (the
	// warehouse read and rescored, the report verify checks, the judge
	// the self-agreement reads, the lake).
	picked := map[string]bool{"validate": true, "ingest": true, "score": true}
	needs := map[string]string{"verify (the report)": "report", "agree --self": "judge ta --repeats 2",
		"metrics --judge-noise": "judge ta --repeats 2", "lake: metrics --by model,harness": "export --format parquet",
		"lake: report": "export --format parquet"}
	for _, c := range commands {
		if *only == "" || slices.ContainsFunc(strings.Split(*only, ","), func(o string) bool { return strings.Contains(c.name, o) }) {
			picked[c.name] = true
			if n := needs[c.name]; n != "" {
				picked[n] = true
			}
		}
	}
	results := map[string]map[int]result{}
	for _, k := range ks {
		d := filepath.Join(work, fmt.Sprintf("scale%d", k))
		os.MkdirAll(d, 0o755)
		db := filepath.Join(d, "w.duckdb")
		if out, err := exec.Command(bin, "sample", "--out", filepath.Join(d, "corpus"), "--scale", strconv.Itoa(k)).CombinedOutput(); err != nil {
			return fmt.Errorf("sample --scale %d: %v\n%s", k, err, out)
		}
		for _, c := range commands {
			if !picked[c.name] {
				continue
			}
			at := db
			if strings.HasPrefix(c.name, "lake: ") { // on the Parquet lake export wrote
				at = filepath.Join(d, "export")
			}
			cmd := exec.Command(bin, append([]string{"--db", at, "-q"}, c.args(k, d)...)...)
			devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			cmd.Stdout = devnull
			var stderr strings.Builder
			cmd.Stderr = &stderr
			t0 := time.Now()
			err := cmd.Run()
			wall := time.Since(t0)
			devnull.Close()
			if err != nil {
				err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
			}
			r := result{wall: wall, err: err}
			if cmd.ProcessState != nil {
				r.rss = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
			}
			if results[c.name] == nil {
				results[c.name] = map[int]result{}
			}
			results[c.name][k] = r
			fmt.Fprintf(os.Stderr, "scale %d  %-32s %7.2f s  %5.0f MB\n", k, c.name, wall.Seconds(), mb(r.rss))
		}
	}
	var rows []rssRow
	for _, c := range commands {
		if rs, ok := results[c.name]; ok {
			row := rssRow{name: c.name}
			for _, k := range ks {
				row.at = append(row.at, rssCell{wall: rs[k].wall, rss: rs[k].rss, err: rs[k].err})
			}
			rows = append(rows, row)
		}
	}
	rssTable(os.Stdout, ks, rows)
	return nil
}

// buildGymlens builds ./cmd/gymlens into bin (run from the repository's
// root).
func buildGymlens(bin string) error {
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/gymlens").CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/gymlens (run from the repository's root): %w\n%s", err, out)
	}
	return nil
}

// parseScales reads --scales: whole numbers ≥ 1, comma-separated.
func parseScales(list string) ([]int, error) {
	var ks []int
	for _, s := range strings.Split(list, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return nil, fmt.Errorf("--scales: %q", s)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// rssCell is one command's measurement at one scale.
type rssCell struct {
	wall time.Duration
	rss  int64
	err  error
}

// rssRow is one command's measurements, at each scale in order.
type rssRow struct {
	name string
	at   []rssCell
}

// rssTable writes the rss command's Markdown table: per command, its peak
// RSS and time at each scale, then for each pair of neighbouring scales
// the ratio of the times (the larger scale's over the smaller's), which
// the scale goals are stated in.
func rssTable(w io.Writer, ks []int, rows []rssRow) {
	fmt.Fprintf(w, "| command |")
	for _, k := range ks {
		fmt.Fprintf(w, " --scale %d: peak RSS | time |", k)
	}
	for i := 1; i < len(ks); i++ {
		fmt.Fprintf(w, " time, %d ÷ %d |", ks[i], ks[i-1])
	}
	fmt.Fprintf(w, "\n| --- |")
	for range ks {
		fmt.Fprintf(w, " ---: | ---: |")
	}
	for i := 1; i < len(ks); i++ {
		fmt.Fprintf(w, " ---: |")
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "| `%s` |", r.name)
		for _, c := range r.at {
			if c.err != nil {
				fmt.Fprintf(w, " failed: %s | |", strings.ReplaceAll(c.err.Error(), "|", "/"))
				continue
			}
			fmt.Fprintf(w, " %.0f MB | %.1f s |", mb(c.rss), c.wall.Seconds())
		}
		for i := 1; i < len(r.at); i++ {
			a, b := r.at[i-1], r.at[i]
			if a.err != nil || b.err != nil || a.wall <= 0 {
				fmt.Fprintf(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %.1f× |", b.wall.Seconds()/a.wall.Seconds())
		}
		fmt.Fprintln(w)
	}
}
