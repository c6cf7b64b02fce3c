// Command gymlens-bench measures gymlens against the figures its issues
// ask for and prints them. It is a benchmark, not a test: it asserts
// nothing and its numbers depend on the machine.
//
// Usage:
//
//	go run ./cmd/gymlens-bench ingest [--scale 10] [--big-scale 30] [--dir DIR] [--keep]
//
// ingest writes the sample corpus at --scale (and at --big-scale, for
// peak memory only), then, each in a child process so that peak memory is
// its own:
//
//   - gymlens ingest of the whole corpus, into a new warehouse;
//   - gymlens ingest of the trajectories alone (scenarios and run logs:
//     run, event and task lines), into another;
//   - DuckDB's own read_ndjson_auto loading the corpus's event lines
//     (extracted beforehand, outside the timing) into a table;
//   - gymlens ingest of the same files again (nothing to load);
//
// and prints wall times, the ratios, and peak resident memory.
//
//	GYMLENS_STAGING_ROUNDS=7 go test ./ingest -run '^$' -bench Staging -benchtime 1x | go run ./cmd/gymlens-bench staging
//
// staging summarizes BenchmarkStaging (ingest/staging_bench_test.go), whose
// arms hand the same validated events to DuckDB in turn, beside DuckDB's
// read_ndjson_auto of their lines: each run's wall and CPU seconds, each
// arm's medians, and the medians of the run-by-run ratios to the peer and
// of the table function to the staged read_csv.
package main

import (
	"bufio"
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/sample"
)

// usage lists every command: ingest and each of benches.
const usage = "usage: gymlens-bench help\n" +
	"       gymlens-bench ingest [--scale K] [--big-scale K] [--dir DIR] [--keep]\n" +
	"       gymlens-bench coverage [--datasets N] [--clusters K] [--runs N] [--resamples B] [--seed S]\n" +
	"       gymlens-bench size [--pairs N] [--scenarios K] [--resamples B] [--alpha A] [--seed S]   (compare's test: size, power at the MDE)\n" +
	"       gymlens-bench stats [--resamples B] [--python PATH]   (run from the repository's root)\n" +
	"       gymlens-bench judge [--judgments N] [--concurrency C] [--latency D] [--scale K]\n" +
	"       gymlens-bench judge-pool [--judgments N] [--concurrency C] [--latency D] [--servers K]\n" +
	"       gymlens-bench judge-batch [--items N] [--scale K]\n" +
	"       gymlens-bench agree [--items N] [--raters R] [--missing P] [--resamples B] [--python PATH]   (from the root)\n" +
	"       gymlens-bench agree-scale [--items N] [--items3 N] [--resamples B]   (from the root)\n" +
	"       gymlens-bench rss [--scales 1,10] [--only [K=]TEXT,TEXT] [--dir DIR]   (from the root; --only K=…: scale K alone)\n" +
	"       gymlens-bench serve [--scales 1,10] [--db W]   (from the root; --db: an existing warehouse, labelled by --scales)\n" +
	"       gymlens-bench mutate [--n 1000] [--seed S]\n" +
	"       gymlens-bench tour --out DIR [--bin GYMLENS]   (from the root: every command of the tour, outputs stored)\n" +
	"       gymlens-bench pare [--traces N]   (from the root)\n" +
	"       gymlens-bench openai-server [--addr 127.0.0.1:8000] [--latency D]   (a fake judge endpoint: valid, fixed answers; docs/judge.md)\n" +
	"       gymlens-bench inspect [--mb 256] [--chunked-mb M] [--ingest] [--evals N] [--dir DIR] [--keep]\n" +
	stagingUsage

// benches are the subcommands besides ingest, by name.
var benches = map[string]func(args []string) error{
	"judge": benchJudge, "judge-pool": benchJudgePool, "judge-batch": benchJudgeBatch, "stats": benchStats, "pare": benchPARE, "agree": benchAgree, "mutate": benchMutate,
	"rss": benchRSS, "serve": benchServe, "tour": benchTour, "agree-scale": benchAgreeScale, "coverage": benchCoverage,
	"size":          benchSize,
	"openai-server": benchOpenAIServer,
	"inspect":       benchInspect,
	"staging":       benchStaging,
}

func main() {
	if path := os.Getenv("GYMLENS_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	if len(os.Args) > 2 && os.Args[1] == "child" {
		if err := child(os.Args[2], os.Args[3:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) >= 2 {
		if bench, ok := benches[os.Args[1]]; ok {
			if os.Args[1] != "openai-server" { // a server, not a measurement
				header(os.Stdout, time.Now())
			}
			if err := bench(os.Args[2:]); err != nil {
				fmt.Fprintln(os.Stderr, "gymlens-bench:", err)
				pprof.StopCPUProfile()
				os.Exit(1)
			}
			return
		}
	}
	if len(os.Args) == 2 && (os.Args[1] == "help" || os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Println(usage)
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "ingest" {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	fl := flag.NewFlagSet("ingest", flag.ExitOnError)
	scale := fl.Int("scale", 10, "sample corpus scale for the timings")
	big := fl.Int("big-scale", 30, "a larger scale for peak memory only (0: skip)")
	dir := fl.String("dir", "", "work folder (default: a new one under $TMPDIR)")
	keep := fl.Bool("keep", false, "keep the work folder")
	fl.Parse(os.Args[2:])
	header(os.Stdout, time.Now())
	if err := benchIngest(*scale, *big, *dir, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "gymlens-bench:", err)
		os.Exit(1)
	}
}

// measure runs this program as a child doing one job and returns its wall
// time and peak resident memory.
func measure(job string, args ...string) (time.Duration, int64, error) {
	cmd := exec.Command(os.Args[0], append([]string{"child", job}, args...)...)
	cmd.Stderr = os.Stderr
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", job, err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if d, err := time.ParseDuration(strings.TrimSpace(string(out))); err == nil && d > 0 {
		wall = d // the job's own timing, without process start-up
	}
	return wall, ru.Maxrss * 1024, nil
}

func child(job string, args []string) error {
	if job == "openai-server" {
		count := 1
		if len(args) > 1 {
			count, _ = strconv.Atoi(args[1])
		}
		return serveOpenAI(args[0], count)
	}
	ctx := context.Background()
	t0 := time.Now()
	switch job {
	case "ingest":
		w, err := ingest.Open(ctx, args[0], ingest.OpenOptions{MemoryLimit: ingest.IngestMemoryLimit})
		if err != nil {
			return err
		}
		if _, err := w.Ingest(ctx, args[1:], ingest.IngestOptions{}); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	case "inspect-metrics":
		if err := inspectMetrics(args[0]); err != nil {
			return err
		}
	case "inspect-read":
		if err := readInspect(args[0]); err != nil {
			return err
		}
	case "duckdb":
		db, err := sql.Open("duckdb", args[0])
		if err != nil {
			return err
		}
		if _, err := db.Exec(`CREATE TABLE events AS SELECT * FROM read_ndjson_auto('` + args[1] + `/*.jsonl')`); err != nil {
			return err
		}
		if err := db.Close(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown job %q", job)
	}
	fmt.Println(time.Since(t0))
	return nil
}

func size(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return err
	})
	return n, err
}

// eventLines copies the event lines of the corpus's run logs to dst.
func eventLines(corpus, dst string) (int64, error) {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return 0, err
	}
	files, _ := filepath.Glob(filepath.Join(corpus, "runs", "*.jsonl"))
	var n int64
	for _, f := range files {
		in, err := os.Open(f)
		if err != nil {
			return 0, err
		}
		out, err := os.Create(filepath.Join(dst, filepath.Base(f)))
		if err != nil {
			return 0, err
		}
		w := bufio.NewWriterSize(out, 1<<20)
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), `{"type":"event"`) {
				w.Write(sc.Bytes())
				w.WriteByte('\n')
				n++
			}
		}
		w.Flush()
		out.Close()
		in.Close()
	}
	return n, nil
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func benchIngest(scale, big int, dir string, keep bool) error {
	var err error
	if dir == "" {
		if dir, err = os.MkdirTemp("", "gymlens-bench-"); err != nil {
			return err
		}
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	corpus := filepath.Join(dir, fmt.Sprintf("corpus-x%d", scale))
	fmt.Printf("writing the sample corpus at --scale %d to %s …\n", scale, corpus)
	st, err := sample.Write(corpus, sample.Options{Seed: 1, Scale: scale})
	if err != nil {
		return err
	}
	total, _ := size(corpus)
	records := int64(st.Runs) + st.Events + st.Tasks + st.Judgments + st.Ratings + int64(st.Scenarios)
	fmt.Printf("corpus: %.1f MB in %d files, %d records (%d runs, %d events, %d task records, %d judgments, %d ratings)\n",
		mb(total), st.Files, records, st.Runs, st.Events, st.Tasks, st.Judgments, st.Ratings)
	evDir := filepath.Join(dir, "event-lines")
	nev, err := eventLines(corpus, evDir)
	if err != nil {
		return err
	}
	evSize, _ := size(evDir)
	trajSize, _ := size(filepath.Join(corpus, "runs"))

	duck, duckRSS, err := measure("duckdb", filepath.Join(dir, "duck.duckdb"), evDir)
	if err != nil {
		return err
	}
	full, fullRSS, err := measure("ingest", filepath.Join(dir, "full.duckdb"), corpus)
	if err != nil {
		return err
	}
	again, _, err := measure("ingest", filepath.Join(dir, "full.duckdb"), corpus)
	if err != nil {
		return err
	}
	traj, trajRSS, err := measure("ingest", filepath.Join(dir, "traj.duckdb"), filepath.Join(corpus, "scenarios"), filepath.Join(corpus, "runs"))
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Printf("DuckDB read_ndjson_auto, %d event lines (%.1f MB):   %7.2f s   peak RSS %4.0f MB\n", nev, mb(evSize), duck.Seconds(), mb(duckRSS))
	fmt.Printf("gymlens ingest, trajectories (%.1f MB):             %7.2f s   peak RSS %4.0f MB   ratio to DuckDB %.2f\n", mb(trajSize), traj.Seconds(), mb(trajRSS), traj.Seconds()/duck.Seconds())
	fmt.Printf("gymlens ingest, whole corpus (%.1f MB):            %7.2f s   peak RSS %4.0f MB   ratio to DuckDB %.2f\n", mb(total), full.Seconds(), mb(fullRSS), full.Seconds()/duck.Seconds())
	fmt.Printf("gymlens ingest again, same files:                     %7.2f s   %.1f%% of the first ingest\n", again.Seconds(), 100*again.Seconds()/full.Seconds())
	if big > 0 {
		if !keep {
			os.RemoveAll(corpus)
			os.RemoveAll(evDir)
		}
		bigCorpus := filepath.Join(dir, fmt.Sprintf("corpus-x%d", big))
		fmt.Printf("\nwriting the sample corpus at --scale %d …\n", big)
		if _, err := sample.Write(bigCorpus, sample.Options{Seed: 1, Scale: big}); err != nil {
			return err
		}
		bigSize, _ := size(bigCorpus)
		t, rss, err := measure("ingest", filepath.Join(dir, "big.duckdb"), bigCorpus)
		if err != nil {
			return err
		}
		fmt.Printf("gymlens ingest, whole corpus at --scale %d (%.1f MB): %7.2f s   peak RSS %4.0f MB\n", big, mb(bigSize), t.Seconds(), mb(rss))
	}
	return nil
}
