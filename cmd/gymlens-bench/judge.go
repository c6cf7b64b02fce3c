package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/openaitest"
	"github.com/gymlens/gymlens/judge"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchJudge measures the judge against the in-process server: 2,000
// judgments at concurrency 32 with 100 ms of simulated latency, against the
// ideal 2,000/32 × 0.1 s; the client's CPU time per request; and a rerun
// with everything cached.
func benchJudge(args []string) error {
	fl := flag.NewFlagSet("judge", flag.ExitOnError)
	n := fl.Int("judgments", 2000, "judgments to ask for")
	conc := fl.Int("concurrency", 32, "requests in flight")
	latency := fl.Duration("latency", 100*time.Millisecond, "simulated latency per request")
	scale := fl.Int("scale", 2, "sample scale for the cached rerun (two judges × TC and TR-J: about 118,000 judgments per unit of scale)")
	rerun := fl.Bool("rerun", true, "also measure the cached rerun")
	fl.Parse(args)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gymlens-bench-judge-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	open := func(name string, sc int) (*ingest.Warehouse, error) {
		return sampleWarehouse(ctx, dir, name, sc, "scenarios", "runs")
	}
	w, err := open("small", 1)
	if err != nil {
		return err
	}
	// The server runs in a child process, so that this process's CPU time
	// is the client's (with building the items and saving the answers).
	urls, stop, err := childServers(*latency, 1)
	if err != nil {
		return err
	}
	defer stop()
	ep, _ := judge.ParseEndpoint("bench=fake@"+urls[0], func(string) string { return "" })
	opt := judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{ep}, Limit: *n,
		Client: judge.ClientOptions{Concurrency: *conc}}
	cpu0, t0 := cpuTime(), time.Now()
	reps, err := judge.Run(ctx, w, opt)
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	w.Close()
	if err != nil {
		return err
	}
	ideal := time.Duration(float64(*n) / float64(*conc) * float64(*latency))
	fmt.Printf("%d judgments at concurrency %d, %v simulated latency: %.2f s; ideal %.2f s; ratio %.3f\n",
		reps[0].Sent, *conc, *latency, wall.Seconds(), ideal.Seconds(), wall.Seconds()/ideal.Seconds())
	fmt.Printf("client CPU per request (building items, sending, checking, saving answers): %.3f ms\n",
		float64(cpu.Microseconds())/1000/float64(reps[0].Requests))
	if !*rerun {
		return nil
	}
	srv := openaitest.New()
	defer srv.Close()

	// The cached rerun: fill the cache at no latency, then ask again.
	big, err := open("big", *scale)
	if err != nil {
		return err
	}
	defer big.Close()
	ep1, _ := judge.ParseEndpoint("bench1=fake1@"+srv.URL+"/v1", func(string) string { return "" })
	ep2, _ := judge.ParseEndpoint("bench2=fake2@"+srv.URL+"/v1", func(string) string { return "" })
	fill := judge.RunOptions{Metrics: []string{judge.TC, judge.TRJ}, Judges: []judge.Endpoint{ep1, ep2}, Client: judge.ClientOptions{Concurrency: 8}}
	t0 = time.Now()
	reps, err = judge.Run(ctx, big, fill)
	if err != nil {
		return err
	}
	total := 0
	for _, r := range reps {
		total += r.Sent
	}
	fmt.Printf("filled the cache with %d judgments in %.1f s\n", total, time.Since(t0).Seconds())
	before := srv.Count()
	if path := os.Getenv("GYMLENS_RERUN_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	t0 = time.Now()
	reps, err = judge.Run(ctx, big, fill)
	if err != nil {
		return err
	}
	cached := 0
	for _, r := range reps {
		cached += r.Cached
	}
	fmt.Printf("rerun with nothing changed: %d cached judgments, %d requests, %.2f s\n", cached, srv.Count()-before, time.Since(t0).Seconds())
	return nil
}

// childServers starts count in-process OpenAI-compatible servers in a
// child process (so that this process's CPU time is the client's) and
// returns their base URLs and how to stop them.
func childServers(latency time.Duration, count int) ([]string, func(), error) {
	child := exec.Command(os.Args[0], "child", "openai-server", latency.String(), fmt.Sprint(count))
	child.Stderr = os.Stderr
	stdin, _ := child.StdinPipe()
	stdout, _ := child.StdoutPipe()
	if err := child.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() { stdin.Close(); child.Wait() }
	urls := make([]string, count)
	for i := range urls {
		if _, err := fmt.Fscanln(stdout, &urls[i]); err != nil {
			stop()
			return nil, nil, fmt.Errorf("starting the servers: %w", err)
		}
		urls[i] += "/v1"
	}
	return urls, stop, nil
}

// serveOpenAI is the child that serves the fake endpoint (count of them,
// each printed on a line) until its standard input closes.
func serveOpenAI(latency string, count int) error {
	d, err := time.ParseDuration(latency)
	if err != nil {
		return err
	}
	for range count {
		srv := openaitest.New()
		srv.Latency, srv.Forget = d, true // a long run's prompts are not kept
		defer srv.Close()
		fmt.Println(srv.URL)
	}
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// benchJudgePool measures a judge over a pool of servers against one
// server at the same per-server concurrency and latency: the throughput
// ratio (the judge issue asks ≥ 3.6 for four) and the client's CPU time per
// request for each.
func benchJudgePool(args []string) error {
	fl := flag.NewFlagSet("judge-pool", flag.ExitOnError)
	n := fl.Int("judgments", 2000, "judgments to ask for, each time")
	conc := fl.Int("concurrency", 8, "requests in flight per server")
	latency := fl.Duration("latency", 100*time.Millisecond, "simulated latency per request")
	servers := fl.Int("servers", 4, "servers in the pool")
	fl.Parse(args)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gymlens-bench-pool-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w, err := sampleWarehouse(ctx, dir, "small", 1, "scenarios", "runs")
	if err != nil {
		return err
	}
	defer w.Close()
	urls, stop, err := childServers(*latency, *servers)
	if err != nil {
		return err
	}
	defer stop()
	// Each run under its own model name, so that the second is not served
	// from the first one's cache.
	one := func(model string, pool []string) (time.Duration, float64, error) {
		ep, err := judge.ParseEndpoint("bench="+model+"@"+strings.Join(pool, ","), func(string) string { return "" })
		if err != nil {
			return 0, 0, err
		}
		cpu0, t0 := cpuTime(), time.Now()
		reps, err := judge.Run(ctx, w, judge.RunOptions{Metrics: []string{judge.TC}, Judges: []judge.Endpoint{ep}, Limit: *n,
			Client: judge.ClientOptions{Concurrency: *conc}})
		wall, cpu := time.Since(t0), cpuTime()-cpu0
		if err != nil {
			return 0, 0, err
		}
		return wall, float64(cpu.Microseconds()) / 1000 / float64(reps[0].Requests), nil
	}
	w1, c1, err := one("fake-one", urls[:1])
	if err != nil {
		return err
	}
	wn, cn, err := one("fake-pool", urls)
	if err != nil {
		return err
	}
	fmt.Printf("%d judgments, %d in flight per server, %v simulated latency\n", *n, *conc, *latency)
	fmt.Printf("one server: %.2f s (%.0f requests/s), client CPU %.3f ms per request\n", w1.Seconds(), float64(*n)/w1.Seconds(), c1)
	fmt.Printf("a pool of %d: %.2f s (%.0f requests/s), client CPU %.3f ms per request\n", *servers, wn.Seconds(), float64(*n)/wn.Seconds(), cn)
	fmt.Printf("throughput ratio: %.2f × one server\n", w1.Seconds()/wn.Seconds())
	return nil
}

// benchJudgeBatch measures gymlens judge export-batch and import-batch on
// --items items (TC and TR-J of the sample at --scale, --items/2 each), each
// a gymlens process of its own: wall time and peak resident memory. The
// output file answering the export is made between the two, untimed.
func benchJudgeBatch(args []string) error {
	fl := flag.NewFlagSet("judge-batch", flag.ExitOnError)
	items := fl.Int("items", 100000, "items to export and import (half TC, half TR-J)")
	scale := fl.Int("scale", 2, "sample scale (about 33,000 TC and as many TR-J items per unit)")
	fl.Parse(args)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gymlens-bench-batch-")
	if err != nil {
		return err
	}
	if keep := os.Getenv("GYMLENS_BATCH_DIR"); keep != "" {
		dir = keep // keep the files, to profile the commands again
	} else {
		defer os.RemoveAll(dir)
	}
	bin := dir + "/gymlens"
	if err := buildGymlens(bin); err != nil {
		return err
	}
	w, err := sampleWarehouse(ctx, dir, "w", *scale, "scenarios", "runs")
	if err != nil {
		return err
	}
	db := w.Path
	w.Close()
	flags := []string{"--metric", "tc,trj", "--judge", "bench=judge-model@http://127.0.0.1:9/v1", "--limit", fmt.Sprint(*items / 2)}
	run := func(args ...string) (time.Duration, int64, error) {
		cmd := exec.Command(bin, append([]string{"--db", db, "-q"}, args...)...)
		cmd.Stderr = os.Stderr
		if p := os.Getenv("GYMLENS_BATCH_PROFILE"); p != "" {
			cmd.Env = append(os.Environ(), "GYMLENS_CPUPROFILE="+p+"."+args[1])
		}
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, 0, fmt.Errorf("gymlens %s: %w", strings.Join(args, " "), err)
		}
		return time.Since(t0), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024, nil
	}
	in, out := dir+"/in.jsonl", dir+"/out.jsonl"
	te, re, err := run(append([]string{"judge", "export-batch", "--out", in}, flags...)...)
	if err != nil {
		return err
	}
	n, err := answerBatch(in, out)
	if err != nil {
		return err
	}
	ti, ri, err := run(append([]string{"judge", "import-batch", out}, flags...)...)
	if err != nil {
		return err
	}
	fmt.Printf("export-batch of %d requests: %.2f s, peak RSS %.0f MB\n", n, te.Seconds(), float64(re)/1e6)
	fmt.Printf("import-batch of %d answers: %.2f s, peak RSS %.0f MB\n", n, ti.Seconds(), float64(ri)/1e6)
	return nil
}

// answerBatch writes the in-process server's answers to a batch input as
// a batch output file, and returns the lines.
func answerBatch(in, out string) (int, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	g, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(g, 1<<20)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	n := 0
	for sc.Scan() {
		var req struct {
			CustomID string         `json:"custom_id"`
			Body     map[string]any `json:"body"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return 0, err
		}
		content, _ := json.Marshal(openaitest.Answer(req.Body))
		id, _ := json.Marshal(req.CustomID)
		fmt.Fprintf(bw, `{"id":"r%d","custom_id":%s,"response":{"status_code":200,"body":{"choices":[{"index":0,"message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":900,"completion_tokens":80}}},"error":null}`+"\n", n, id, content)
		n++
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return n, g.Close()
}
