package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
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
	var only rssOnly
	fl.Var(&only, "only", "run only the commands whose name begins with one of these comma-separated `TEXTS`, as whole words (and ingest, score and what they need); K=TEXTS for scale K alone (repeat, or separate with ;)")
	fl.Parse(args)
	ks, err := parseScales(*scales)
	if err != nil {
		return err
	}
	work := *dir
	if work == "" {
		d, err := os.MkdirTemp("", "gymlens-bench-rss-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		work = d
	}
	// Each scale's folder is removed before the next: the largest scale
	// must fit, checked before anything is written.
	if err := checkDisk(work, ks, freeBytes); err != nil {
		return err
	}
	bin := filepath.Join(work, "gymlens")
	if err := buildGymlens(bin); err != nil {
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
		{"serve (first start)", nil}, // rssServeStart
		{"lake: metrics --by model,harness", func(int, string) []string { return []string{"metrics", "--by", "model,harness"} }},
		{"lake: report", func(k int, d string) []string { return []string{"report", "--out", filepath.Join(d, "report-lake")} }},
		{"query (all events, CSV)", func(int, string) []string { return []string{"query", "-f", "csv", "SELECT * FROM events"} }},
	}
	// What --only picks, with what those commands need run first (the
	// report verify checks, the judge the self-agreement reads, the lake).
	needs := map[string]string{"verify (the report)": "report", "agree --self": "judge ta --repeats 2",
		"metrics --judge-noise": "judge ta --repeats 2", "lake: metrics --by model,harness": "export --format parquet",
		"lake: report": "export --format parquet"}
	// Each notebook of notebooks/, run as a user runs it.
	books, _ := filepath.Glob(filepath.Join("notebooks", "*.md"))
	for _, b := range books {
		commands = append(commands, struct {
			name string
			args func(k int, d string) []string
		}{"notebook run " + filepath.Base(b), func(k int, d string) []string {
			return []string{"notebook", "run", b, "--out", filepath.Join(d, "notebook")}
		}})
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	results := map[string]map[int]result{}
	for _, k := range ks {
		picked := rssPick(names, needs, only.texts(k))
		d := filepath.Join(work, fmt.Sprintf("scale%d", k))
		if err := os.RemoveAll(d); err != nil {
			return err
		}
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
			var r result
			if c.name == "serve (first start)" {
				r = rssServeStart(bin, at)
			} else {
				r = rssRun(bin, append([]string{"--db", at, "-q"}, c.args(k, d)...))
			}
			if results[c.name] == nil {
				results[c.name] = map[int]result{}
			}
			results[c.name][k] = r
			fmt.Fprintf(os.Stderr, "scale %d  %-32s %7.2f s  %5.0f MB\n", k, c.name, r.wall.Seconds(), mb(r.rss))
			if r.err != nil {
				fmt.Fprintf(os.Stderr, "  %v\n", r.err)
			}
			if c.name == "ingest" { // nothing after reads the logs
				os.RemoveAll(filepath.Join(d, "corpus"))
			}
		}
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	var rows []rssRow
	for _, c := range commands {
		if rs, ok := results[c.name]; ok {
			row := rssRow{name: c.name}
			for _, k := range ks {
				cell, ran := rs[k]
				cell.notRun = !ran
				row.at = append(row.at, cell)
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
	wall   time.Duration
	rss    int64
	err    error
	notRun bool // not picked at this scale (--only)
}

// rssRun runs gymlens with args and measures it.
func rssRun(bin string, args []string) rssCell {
	cmd := exec.Command(bin, args...)
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	cmd.Stdout = devnull
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	r := rssCell{wall: time.Since(t0)}
	if err != nil {
		r.err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if cmd.ProcessState != nil {
		r.rss = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	}
	return r
}

// rssServeStart measures gymlens serve's first start on db: the time from
// the process's start to its first page (the overview) answered, and the
// process's peak RSS once it is stopped (an interrupt, as Ctrl-C) right
// after. The first page of a warehouse just scored packs the run pages.
func rssServeStart(bin, db string) rssCell {
	cmd := exec.Command(bin, "--db", db, "-q", "serve", "--addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return rssCell{err: err}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return rssCell{err: err}
	}
	var r rssCell
	page := func() error {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			return fmt.Errorf("serve printed no address: %v", err)
		}
		f := strings.Fields(strings.TrimPrefix(line, "gymlens serve: "))
		if len(f) == 0 {
			return fmt.Errorf("serve printed %q", line)
		}
		res, err := http.Get(f[0])
		if err != nil {
			return err
		}
		defer res.Body.Close()
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			return err
		}
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("the first page: %s", res.Status)
		}
		return nil
	}
	err = page()
	r.wall = time.Since(t0)
	cmd.Process.Signal(os.Interrupt)
	if werr := cmd.Wait(); err == nil && werr != nil {
		err = werr
	}
	if err != nil {
		r.err = fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if cmd.ProcessState != nil {
		r.rss = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	}
	return r
}

// rssOnly is --only: the texts of the commands to run at every scale,
// and those of each scale that has its own list (K=TEXT,TEXT).
type rssOnly struct {
	all []string
	at  map[int][]string
}

func (o *rssOnly) String() string { return "" }

// Set reads one --only: TEXT,TEXT or K=TEXT,TEXT, or several separated
// by ";".
func (o *rssOnly) Set(v string) error {
	for _, part := range strings.Split(v, ";") {
		scale, list, per := strings.Cut(part, "=")
		texts := strings.Split(list, ",")
		if !per {
			texts = strings.Split(scale, ",")
		}
		if slices.Contains(texts, "") {
			return fmt.Errorf("--only %q: an empty command text", part)
		}
		if !per {
			o.all = append(o.all, texts...)
			continue
		}
		k, err := strconv.Atoi(scale)
		if err != nil || k < 1 {
			return fmt.Errorf("--only %q: expected SCALE=TEXT,TEXT, SCALE a whole number ≥ 1", part)
		}
		if o.at == nil {
			o.at = map[int][]string{}
		}
		o.at[k] = append(o.at[k], texts...)
	}
	return nil
}

// texts are the texts picking the commands of scale k (nil: every
// command).
func (o *rssOnly) texts(k int) []string {
	if t, ok := o.at[k]; ok {
		return t
	}
	return o.all
}

// rssPick is the commands of names to run given the texts of --only
// (nil: all): those whose name begins with one, as whole words ("report"
// picks `report` alone, "lake" both `lake: …`, "metrics --by" `metrics
// --by model,harness` but not `metrics --judge-noise`), what each needs
// run first, and ingest and score, which every other command reads.
func rssPick(names []string, needs map[string]string, texts []string) map[string]bool {
	begins := func(name, text string) bool {
		if !strings.HasPrefix(name, text) {
			return false
		}
		rest := name[len(text):]
		return rest == "" || rest[0] == ' ' || rest[0] == ':'
	}
	picked := map[string]bool{}
	for _, n := range names {
		if texts == nil || slices.ContainsFunc(texts, func(o string) bool { return begins(n, o) }) {
			picked[n] = true
			if x := needs[n]; x != "" {
				picked[x] = true
			}
		}
	}
	picked["ingest"], picked["score"] = true, true
	return picked
}

// rssDiskPerScale is the disk one unit of --scale takes at most while the
// rss command measures it: the sample's logs (133 MB a unit at --scale
// 300: 40 GB), the ingest's staging files beside the warehouse until its
// commit (more than 57 MB a unit: 17 GB at 300 before the judgments'
// were written), the warehouse with the viewer's packs (about 18 MB),
// the lake (5 MB), the report, DuckDB's spill files, and a margin. The
// logs are removed after the ingest; the scale's folder before the next
// scale.
const rssDiskPerScale = 240e6

// rssDiskNeed is the free disk scale k needs (bytes).
func rssDiskNeed(k int) int64 { return int64(k) * rssDiskPerScale }

// checkDisk refuses scales whose largest does not fit in dir's free disk
// (free tells it), naming what it needs and what there is.
func checkDisk(dir string, ks []int, free func(string) (int64, error)) error {
	have, err := free(dir)
	if err != nil {
		return fmt.Errorf("the free disk of %s: %w", dir, err)
	}
	k := slices.Max(ks)
	if need := rssDiskNeed(k); need > have {
		return fmt.Errorf("--scale %d needs about %s free in %s (its logs, warehouse, lake and report; each scale's folder is removed before the next), and %s are: free some or give --dir on another disk",
			k, gb(need), dir, gb(have))
	}
	return nil
}

// freeBytes is the disk free to an unprivileged user in dir.
func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// gb is n bytes in GB, one decimal.
func gb(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }

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
			if c.notRun {
				fmt.Fprintf(w, " not run | |")
				continue
			}
			if c.err != nil {
				fmt.Fprintf(w, " failed: %s | |", strings.ReplaceAll(c.err.Error(), "|", "/"))
				continue
			}
			fmt.Fprintf(w, " %.0f MB | %.1f s |", mb(c.rss), c.wall.Seconds())
		}
		for i := 1; i < len(r.at); i++ {
			a, b := r.at[i-1], r.at[i]
			if a.err != nil || b.err != nil || a.notRun || b.notRun || a.wall <= 0 {
				fmt.Fprintf(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %.1f× |", b.wall.Seconds()/a.wall.Seconds())
		}
		fmt.Fprintln(w)
	}
}
