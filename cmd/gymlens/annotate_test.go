package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/internal/sample"
	"github.com/gymlens/gymlens/serve"
)

// unratedWarehouse is a sample warehouse with judgments but without the
// corpus's human ratings, so that the only ratings are a queue's answers.
func unratedWarehouse(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := sample.Write(filepath.Join(dir, "c"), sample.Options{Seed: 6, Configs: 2}); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, "c", "ratings"))
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", filepath.Join(dir, "c")); code != 0 {
		t.Fatal(stderr)
	}
	return db
}

// humanN is, from `agree --human -f json`, the items compared on each
// question.
func humanN(t *testing.T, db string) map[string]float64 {
	t.Helper()
	code, out, stderr := gymlens(t, "--db", db, "agree", "--human", "-f", "json", "--resamples", "200")
	if code != 0 {
		t.Fatalf("agree --human: %s", stderr)
	}
	var doc map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	n := map[string]float64{}
	for _, r := range doc["judge_human"] {
		if r["statistic"] == "mean_a" {
			n[r["score"].(string)] = r["n"].(float64)
		}
	}
	return n
}

// In real Chromium, two annotators each do the practice item (one
// without a key: saving it goes on) and three items through the pages' forms; then the
// warehouse holds their answers and `agree --human` compares them with the
// judges. A queue's pages show nothing of the run that anchors. Without
// Chromium it skips. With $GYMLENS_SCREENSHOTS, the pages are saved.
func TestAnnotateInBrowser(t *testing.T) {
	t.Parallel()
	ctx, consoleProblems := openBrowser(t, "the annotation pages' browser test", chromedp.WindowSize(1100, 900))
	db := unratedWarehouse(t)
	if code, out, stderr := gymlens(t, "--db", db, "annotate", "sample", "-n", "4", "--queue", "pilot", "--tutorial", "1",
		"--questions", "trj.competence,tc", "--k", "2", "--seed", "3"); code != 0 || !strings.Contains(out, "3 items (1 practice)") {
		t.Fatalf("annotate sample --queue: %d %s %s", code, out, stderr)
	}
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	s, err := serve.New(context.Background(), w, serve.Options{Name: "w.duckdb", Bootstrap: opt, Histories: histories(w)})
	if err != nil {
		t.Fatal(err)
	}
	srv := newLocalServer(t, s)
	shots := os.Getenv("GYMLENS_SCREENSHOTS")
	shot := func(name string) {
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(shots, 0o755)
		os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
	}
	// submit clicks sel and waits for the page it leads to.
	submit := func(sel string) string {
		t.Helper()
		before, _ := chromedp.Run(ctx, chromedp.Location())
		if err := chromedp.Do(ctx, chromedp.Click(sel)); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
		for range 200 {
			if u, _ := chromedp.Run(ctx, chromedp.Location()); u != before {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := chromedp.Do(ctx, chromedp.WaitReady("h1")); err != nil {
			t.Fatal(err)
		}
		u, _ := chromedp.Run(ctx, chromedp.Location())
		return u
	}
	body := func() string {
		t.Helper()
		b, err := chromedp.Run(ctx, chromedp.Text("body"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, who := range []string{"alice", "bob"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv+"/annotate/pilot?annotator="), chromedp.WaitReady(`input[name="annotator"]`),
			chromedp.SendKeys(`input[name="annotator"]`, who)); err != nil {
			t.Fatal(err)
		}
		if who == "alice" {
			shot("annotate-name")
		}
		if u := submit(`button[type="submit"]`); !strings.HasSuffix(u, "/annotate/pilot/items/1") {
			t.Fatalf("%s starts at %s", who, u)
		}
		if !strings.Contains(body(), "practice item") {
			t.Errorf("item 1 is not shown as practice")
		}
		// The practice item (--tutorial: no key), then on to the next.
		chromedp.Do(ctx, chromedp.Click(`input[name="q:trj.competence"][value="4"]`), chromedp.Click(`input[name="q:tc"][value="0.75"]`))
		if !strings.Contains(body(), "Practice answers do not count") {
			t.Error("no practice note")
		}
		if who == "alice" {
			shot("annotate-practice")
		}
		if u := submit(`form.answers button`); !strings.HasSuffix(u, "/items/2") {
			t.Fatalf("after practice: %s", u)
		}
		for i, v := range []string{"5", "3", "2"} {
			page := body()
			for _, not := range []string{"claude", "gpt", "qwen", "_cc_", "_oc_", "judge"} {
				if strings.Contains(strings.ToLower(page), not) {
					t.Errorf("item %d shows %q, which anchors", i+2, not)
				}
			}
			tc := map[string]string{"alice": "1", "bob": "0.75"}[who]
			chromedp.Do(ctx, chromedp.Click(fmt.Sprintf(`input[name="q:trj.competence"][value=%q]`, v)), chromedp.Click(fmt.Sprintf(`input[name="q:tc"][value=%q]`, tc)))
			if who == "alice" && i == 0 {
				shot("annotate-item")
			}
			u := submit(`form.answers button`)
			if i < 2 && !strings.HasSuffix(u, fmt.Sprintf("/items/%d", i+3)) {
				t.Fatalf("%s after item %d: %s", who, i+2, u)
			}
		}
		if !strings.Contains(body(), "nothing is left for you") {
			t.Errorf("%s is not done: %s", who, body())
		}
	}
	// An edit: alice changes item 2 from 5 to 4.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv+"/annotate/pilot?annotator=alice")); err != nil {
		t.Fatal(err)
	}
	chromedp.Do(ctx, chromedp.Navigate(srv+"/annotate/pilot/items/2"), chromedp.WaitReady("form.answers"), chromedp.Click(`input[name="q:trj.competence"][value="4"]`))
	submit(`form.answers button`)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv+"/annotate/pilot/status"), chromedp.WaitReady("h1")); err != nil {
		t.Fatal(err)
	}
	status := body()
	shot("annotate-status")
	if !strings.Contains(status, "3 items (and 1 practice), each needing 2 annotators: 3 have them") || !strings.Contains(status, "Krippendorff") {
		t.Errorf("status:\n%s", status)
	}
	for _, p := range consoleProblems() {
		t.Error(p)
	}
	// A queue drawn in the page: the same draw as annotate sample.
	res, err := http.PostForm(srv+"/annotate", neturl.Values{"name": {"drawn"}, "source": {"sample"}, "n": {"6"}, "unit": {"task"},
		"by": {"scenario"}, "questions": {"trust"}, "tutorial": {"1"}, "seed": {"2"}, "k": {"1"}})
	if err != nil || res.StatusCode != 200 || !strings.HasSuffix(res.Request.URL.Path, "/annotate/drawn/status") {
		t.Fatalf("a queue made in the page: %v %v", err, res)
	}
	res.Body.Close()
	var drawn struct {
		Items []struct {
			RunID    string `json:"run_id"`
			Tutorial bool
		}
	}
	res, _ = http.Get(srv + "/api/annotate/drawn/items")
	json.NewDecoder(res.Body).Decode(&drawn)
	res.Body.Close()
	if len(drawn.Items) != 6 || !drawn.Items[0].Tutorial || drawn.Items[1].Tutorial {
		t.Errorf("the queue drawn in the page: %+v", drawn)
	}
	w.Close()
	n := humanN(t, db)
	if n["trj.competence ~ TRJ.competence"] != 3 || n["tc ~ TC.diagnostics"] != 3 {
		t.Errorf("agree --human compares %v, want the 3 items annotated", n)
	}
	// The export reads back as ratings: 2 annotators × 3 items × 2 questions.
	out := filepath.Join(t.TempDir(), "pilot.csv")
	if code, _, stderr := gymlens(t, "--db", db, "annotate", "export", "pilot", "--out", out); code != 0 {
		t.Fatal(stderr)
	}
	b, _ := os.ReadFile(out)
	if lines := strings.Count(string(b), "\n"); lines != 13 || !strings.Contains(string(b), "alice,trj.competence,4,") {
		t.Errorf("export: %d lines\n%s", lines, b)
	}
}

// newLocalServer serves h on a loopback port (as gymlens serve does) and
// returns its address.
func newLocalServer(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// Twenty annotators answering at once through gymlens serve (a process of
// its own) lose nothing while pages are read meanwhile; the answers
// survive kill -9 of the server.
func TestTwentyAnnotatorsAndAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a crowd of twenty annotators against gymlens serve, a process of its own, then kill -9")
	}
	t.Parallel()
	db := unratedWarehouse(t)
	if code, _, stderr := gymlens(t, "--db", db, "annotate", "sample", "-n", "5", "--queue", "q", "--questions", "trust,tc", "--k", "20"); code != 0 {
		t.Fatal(stderr)
	}
	cmd := exec.Command(os.Args[0], "--db", db, "serve", "--addr", "127.0.0.1:0", "--resamples", "200")
	cmd.Env = append(os.Environ(), "GYMLENS_TEST_CLI=1")
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v %s", err, stderr.String())
	}
	base := strings.TrimSuffix(strings.Fields(strings.TrimPrefix(line, "gymlens serve: "))[0], "/")
	res, err := http.Get(base + "/api/annotate/q/items")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []struct{ Item string } }
	json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if len(list.Items) != 5 {
		t.Fatalf("items: %+v", list)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 200)
	stop := make(chan struct{})
	reads := 0
	readerDone := make(chan struct{})
	go func() { // a reader meanwhile
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for _, p := range []string{"/runs", "/annotate/q/status", "/"} {
				r, err := http.Get(base + p)
				if err != nil || r.StatusCode != 200 {
					errs <- fmt.Sprintf("read %s: %v %v", p, err, r)
				}
				if r != nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
				}
				reads++
			}
		}
	}()
	for a := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, it := range list.Items {
				body, _ := json.Marshal(map[string]any{"item": it.Item, "annotator": fmt.Sprintf("ann%02d", a), "answers": map[string]any{"trust": 1 + (a+i)%5, "tc": []float64{0, 0.25, 0.5, 0.75, 1}[(a*i)%5]}})
				r, err := http.Post(base+"/api/annotate/q/answers", "application/json", bytes.NewReader(body))
				if err != nil {
					errs <- err.Error()
					return
				}
				if r.StatusCode != 200 {
					b, _ := io.ReadAll(r.Body)
					errs <- fmt.Sprintf("%d %s", r.StatusCode, b)
				}
				r.Body.Close()
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-readerDone
	cmd.Process.Kill() // kill -9, straight after the last answer was acknowledged
	cmd.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if reads == 0 {
		t.Error("no page was read while annotators wrote")
	}
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	answers, err := w.Answers(context.Background(), "q")
	w.Close()
	if err != nil || len(answers) != 20*5*2 {
		t.Fatalf("after kill -9: %d answers (want 200), %v", len(answers), err)
	}
	if n := humanN(t, db); n["trust ~ TRJ"] != 5 {
		t.Errorf("agree --human after the kill: %v", n)
	}
}
