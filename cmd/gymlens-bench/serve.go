package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// benchServe measures the viewer as a user meets it: `gymlens serve` as a
// process on the sample corpus at each scale, the first page from the
// process's start, then, once the runs are packed behind the pages, pages
// fetched over loopback — a run page, /runs with a selection and a sort,
// 100 page loads at once — and the server's peak resident memory
// (docs/benchmarks.md).
func benchServe(args []string) error {
	fl := flag.NewFlagSet("serve", flag.ExitOnError)
	scales := fl.String("scales", "1,10", "sample corpus scales, comma-separated")
	db := fl.String("db", "", "measure this warehouse instead (a --scale 100 one takes long to build); --scales then only labels it")
	fl.Parse(args)
	ks, err := parseScales(*scales)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "gymlens-bench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := filepath.Join(work, "gymlens")
	if err := buildGymlens(bin); err != nil {
		return err
	}
	fmt.Println("| scale | runs | first page, from the start | packed, from the start | run page, median | run page, p95 | /runs, median | /runs, p95 | 100 at once, pages seen: p95 | 100 at once, pages not seen: p95 | server peak RSS |")
	fmt.Println("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	if *db != "" {
		return serveDB(bin, *db, ks[0])
	}
	for _, k := range ks {
		if err := serveScale(bin, work, k); err != nil {
			return err
		}
	}
	return nil
}

func serveScale(bin, work string, k int) error {
	d := filepath.Join(work, fmt.Sprintf("scale%d", k))
	db := filepath.Join(d, "w.duckdb")
	if out, err := exec.Command(bin, "sample", "--out", filepath.Join(d, "corpus"), "--scale", strconv.Itoa(k)).CombinedOutput(); err != nil {
		return fmt.Errorf("sample: %v\n%s", err, out)
	}
	if out, err := exec.Command(bin, "--db", db, "-q", "ingest", filepath.Join(d, "corpus")).CombinedOutput(); err != nil {
		return fmt.Errorf("ingest: %v\n%s", err, out)
	}
	os.RemoveAll(filepath.Join(d, "corpus"))
	return serveDB(bin, db, k)
}

// serveDB measures gymlens serve on warehouse db, labelled scale k.
func serveDB(bin, db string, k int) error {
	srv := exec.Command(bin, "--db", db, "serve", "--addr", "127.0.0.1:0")
	stdout, _ := srv.StdoutPipe()
	srv.Stderr = os.Stderr
	start := time.Now()
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { srv.Process.Signal(os.Interrupt); srv.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("serve: %v", err)
	}
	base := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(line, "gymlens serve: "))[0], "/")
	fetch := func(path string) (time.Duration, []byte, error) {
		t0 := time.Now()
		res, err := http.Get(base + path)
		if err != nil {
			return 0, nil, err
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			return 0, nil, fmt.Errorf("%s: %d %s", path, res.StatusCode, b)
		}
		return time.Since(t0), b, nil
	}
	_, page, err := fetch("/")
	if err != nil {
		return err
	}
	first := time.Since(start)
	// The run pages are measured packed: the packing goes on behind the
	// pages, and the overview speaks of it until it ends (polled a second
	// apart, at most an hour).
	for i := 0; strings.Contains(string(page), "Packing the run pages behind") && i < 3600; i++ {
		time.Sleep(time.Second)
		if _, page, err = fetch("/"); err != nil {
			return err
		}
	}
	packed := time.Since(start)
	_, b, err := fetch("/api/runs?limit=500")
	if err != nil {
		return err
	}
	var list struct {
		Total int
		Runs  []struct {
			RunID  string `json:"run_id"`
			Config string
		}
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	var runPages, runsPages, unseen []string
	for i := 0; i < 50; i++ {
		r := list.Runs[(i*37)%len(list.Runs)]
		runPages = append(runPages, "/runs/"+neturl.PathEscape(r.RunID))
		runsPages = append(runsPages, "/runs?where="+neturl.QueryEscape("config="+r.Config)+"&sort=TC&desc=1&q=")
		u := list.Runs[(i*37+11)%len(list.Runs)] // not among the run pages above
		unseen = append(unseen, "/runs/"+neturl.PathEscape(u.RunID), "/runs?where="+neturl.QueryEscape("persona_group=S")+"&sort=TR-D&offset="+strconv.Itoa(i))
	}
	runsPages[0] = "/runs?q=seminar&sort=TR-J"
	times := func(paths []string) ([]time.Duration, error) {
		var out []time.Duration
		for _, p := range paths {
			t, _, err := fetch(p)
			if err != nil {
				return nil, err
			}
			out = append(out, t)
		}
		slices.Sort(out)
		return out, nil
	}
	rt, err := times(runPages)
	if err != nil {
		return err
	}
	lt, err := times(runsPages)
	if err != nil {
		return err
	}
	// 100 page loads at once: runs pages and run pages alternately, first
	// of pages just seen, then of pages not seen before.
	burstOf := func(paths []string) ([]time.Duration, error) {
		var mu sync.Mutex
		var out []time.Duration
		var wg sync.WaitGroup
		var ferr error
		for _, p := range paths {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t, _, err := fetch(p)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					ferr = err
				}
				out = append(out, t)
			}()
		}
		wg.Wait()
		slices.Sort(out)
		return out, ferr
	}
	var seen []string
	for i := 0; i < 100; i++ {
		if i%2 == 0 {
			seen = append(seen, runPages[i/2])
		} else {
			seen = append(seen, runsPages[i/2])
		}
	}
	burst, err := burstOf(seen)
	if err != nil {
		return err
	}
	cold, err := burstOf(unseen)
	if err != nil {
		return err
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.Process.Pid))
	hwm := "?"
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			hwm = fmt.Sprintf("%.0f MB", kb*1024/1e6)
		}
	}
	ms := func(t time.Duration) string { return fmt.Sprintf("%.1f ms", float64(t.Microseconds())/1000) }
	p95 := func(ts []time.Duration) time.Duration { return ts[(len(ts)*95+99)/100-1] }
	fmt.Printf("| %d | %d | %s | %.1f s | %s | %s | %s | %s | %s | %s | %s |\n", k, list.Total, ms(first), packed.Seconds(), ms(rt[len(rt)/2]), ms(p95(rt)),
		ms(lt[len(lt)/2]), ms(p95(lt)), ms(p95(burst)), ms(p95(cold)), hwm)
	return nil
}
