package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/serve"
)

// sampleServer serves a sample warehouse of four configurations (200
// resamples) on a test server; it returns the server and the warehouse.
func sampleServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	_, db := sampleWarehouse(t, 6, 4, true)
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	s, err := serve.New(context.Background(), w, serve.Options{Name: "gymlens.duckdb", Bootstrap: opt})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, db
}

// On the sample warehouse a reader goes from a cell of the main table to
// the runs behind it, and from them to a run's trajectory, in two clicks;
// the JSON says the same; a public address without a token is refused.
func TestServeOnTheSample(t *testing.T) {
	t.Parallel()
	srv, db := sampleServer(t)
	fetch := func(path string) string {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		buf := make([]byte, 1<<16)
		for {
			n, err := res.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b.String())
		}
		return b.String()
	}
	link := regexp.MustCompile(`<a href="(/runs\?[^"]*)"`)
	// Click 1: the TC of the first configuration.
	m := link.FindStringSubmatch(fetch("/"))
	if m == nil {
		t.Fatal("no link in the overview")
	}
	runsPage := html.UnescapeString(m[1])
	// Click 2: the first (highest TC) run.
	body := fetch(runsPage)
	m = regexp.MustCompile(`<a href="(/runs/[^"]+)">`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no run in %s", runsPage)
	}
	run := fetch(html.UnescapeString(m[1]))
	if !strings.Contains(run, "Trajectory") || strings.Count(run, `class="event`) < 10 || !strings.Contains(run, "<h2>Tasks</h2>") {
		t.Errorf("the run page shows no trajectory:\n%.2000s", run)
	}
	// The runs of the cell are those of its configuration, by TC.
	u, _ := neturl.Parse(runsPage)
	var list serve.RunList
	if err := json.Unmarshal([]byte(fetch("/api/runs?"+u.RawQuery)), &list); err != nil {
		t.Fatal(err)
	}
	if list.Total != 90 || len(list.Runs) != 50 || *list.Runs[0].Metrics["TC"] < *list.Runs[49].Metrics["TC"] {
		t.Errorf("the cell's runs: %d, %d shown", list.Total, len(list.Runs))
	}
	// A search of the trajectories' text narrows the runs.
	var found serve.RunList
	json.Unmarshal([]byte(fetch("/api/runs?q=seminar&limit=500")), &found)
	if found.Total == 0 || found.Total >= 360 {
		t.Errorf("search: %d of 360 runs", found.Total)
	}
	if code, _, stderr := gymlens(t, "--db", db, "serve", "--addr", "0.0.0.0:0"); code != 2 || !strings.Contains(stderr, "--token") {
		t.Errorf("public address without a token: exit %d %s", code, stderr)
	}
}

// In real Chromium: the overview, a click on a cell, the runs behind it,
// a click on a run, a click to compare it with another configuration —
// and a script in the search box that does not run. With
// $GYMLENS_SCREENSHOTS set, each page is saved there as PNG (how
// docs/serve/ was made). Without Chromium it skips.
func TestServeInBrowser(t *testing.T) {
	t.Parallel()
	ctx, consoleProblems := openBrowser(t, "the viewer's browser test", chromedp.WindowSize(1280, 900))
	srv, _ := sampleServer(t)
	shots := os.Getenv("GYMLENS_SCREENSHOTS")
	shot := func(name string) {
		if shots == "" {
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()) // the window, not the whole page
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(shots, 0o755)
		os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
	}
	var heading, url string
	// step follows the first link matching sel, as a click does, and
	// waits for the page it leads to.
	step := func(name, sel string) {
		t.Helper()
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).href`, sel)))
		if err != nil {
			t.Fatalf("%s: no link %s: %v", name, sel, err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(href), chromedp.WaitReady("h1")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if heading, err = chromedp.Run(ctx, chromedp.Text("h1")); err != nil {
			t.Fatal(err)
		}
		url, _ = chromedp.Run(ctx, chromedp.Location())
		shot(name)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitReady("table.overview")); err != nil {
		t.Fatal(err)
	}
	shot("overview")
	step("runs", "table.overview td.num a")
	if heading != "Runs" || !strings.Contains(url, "sort=TC") {
		t.Errorf("the cell led to %q at %s", heading, url)
	}
	step("run", "tbody td a")
	if !strings.Contains(url, "/runs/") || !strings.Contains(heading, "/") {
		t.Errorf("the run link led to %q at %s", heading, url)
	}
	step("compare", `a[href^="/compare"]`)
	if heading != "Two runs side by side" {
		t.Errorf("compare: %q at %s", heading, url)
	}
	// A script in the search box is shown, not run (and CSP has nothing
	// to block: no console error).
	payload := `"><img src=x onerror="document.title='pwned'"><script>document.title='pwned'</script>`
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/runs?q="+neturl.QueryEscape(payload)), chromedp.WaitReady("h1"),
		chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil {
		t.Fatal(err)
	}
	if title == "pwned" {
		t.Error("the search box's script ran")
	}
	for _, p := range consoleProblems() {
		t.Error(p)
	}
}

// PARE's own traces (the fixtures, as PARE wrote them) are listed on
// /pare, each with its events and as many decision points as the
// warehouse holds for it.
func TestServePARETraces(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", pareFixtures); code != 0 {
		t.Fatal(stderr)
	}
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	runs, err := w.LoadPARERuns(context.Background())
	if err != nil || len(runs) != 3 {
		t.Fatalf("%d PARE runs, %v", len(runs), err)
	}
	s, err := serve.New(context.Background(), w, serve.Options{Name: "w.duckdb"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	read := func(path string) string {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var b strings.Builder
		io.Copy(&b, res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b.String())
		}
		return b.String()
	}
	list := read("/pare")
	for _, r := range runs {
		if !strings.Contains(list, html.EscapeString(r.RunID)) {
			t.Errorf("/pare lacks %s", r.RunID)
		}
		page := read("/pare/" + neturl.PathEscape(r.RunID))
		if got := strings.Count(page, "</td><td>yes</td>") + strings.Count(page, "</td><td>no</td>"); got != len(r.Decisions) {
			t.Errorf("%s: %d decision points shown, %d in the warehouse", r.RunID, got, len(r.Decisions))
		}
		_, events, _ := strings.Cut(page, "<h2>Events</h2>")
		if rowsShown := strings.Count(events, "<tr>") - 1; rowsShown != len(r.Events) {
			t.Errorf("%s: %d events shown, %d in the warehouse", r.RunID, rowsShown, len(r.Events))
		}
	}
	// In Chromium at 1,400 px, the list and every run's page fit the
	// window's width (their model ids, Bedrock ARNs among them, shown
	// short).
	t.Run("width", func(t *testing.T) {
		ctx, _ := openBrowser(t, "the PARE pages' width test", chromedp.WindowSize(1400, 900))
		for _, path := range append([]string{"/pare"}, "/pare/"+neturl.PathEscape(runs[0].RunID), "/pare/"+neturl.PathEscape(runs[1].RunID), "/pare/"+neturl.PathEscape(runs[2].RunID)) {
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+path), chromedp.WaitReady("h1")); err != nil {
				t.Fatal(err)
			}
			// A table wider than its box scrolls inside it (.wrap): how
			// far the widest does, and how wide the page is.
			over, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`Math.max(0, ...[...document.querySelectorAll('.wrap')].map(e => e.scrollWidth - e.clientWidth))`))
			w, err2 := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.documentElement.scrollWidth`))
			if err != nil || err2 != nil || over > 1 || w > 1400 {
				t.Errorf("%s at 1,400 px: a table %v px wider than its box, the page %v px wide (%v, %v)", path, over, w, err, err2)
			}
		}
	})
}

// In real Chromium, a warehouse whose scenario, model, event text, judge
// reasons and citations carry script and an onerror image: the overview,
// the runs, a run page, a comparison and an annotation item show them as
// text; no script element or injected image is in the DOM, the title is
// unchanged, and the console has no error. Without Chromium it skips.
func TestServePayloadInBrowser(t *testing.T) {
	t.Parallel()
	ctx, consoleProblems := openBrowser(t, "the viewer's payload test", chromedp.WindowSize(1100, 900))
	const js = `<script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">`
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	dir := t.TempDir()
	sc := `{"type":"scenario","scenario":` + q("sc "+js) + `,"personas":{"reviewer":{"group":"S"}},"tasks":[{"id":` + q("t "+js) + `,"expected_depth":{"reviewer":"suggest"}}]}`
	var lines strings.Builder
	for i, model := range []string{"m " + js, "plain"} {
		id := fmt.Sprintf("r%d", i)
		fmt.Fprintf(&lines, `{"type":"run","run_id":"%s","scenario":%s,"persona":"reviewer","rep":1,"config":{"model":%s,"harness":"CC"}}`+"\n", id, q("sc "+js), q(model))
		fmt.Fprintf(&lines, `{"type":"event","run_id":"%s","seq":1,"t":"2026-03-02T09:00:00Z","actor":"user","kind":"message","text":%s,"task":%s}`+"\n", id, q("hello "+js), q("t "+js))
		fmt.Fprintf(&lines, `{"type":"event","run_id":"%s","seq":2,"t":"2026-03-02T09:05:00Z","actor":"agent","kind":"tool_call","tool":"search","args":{"q":%s},"task":%s}`+"\n", id, q(js), q("t "+js))
		fmt.Fprintf(&lines, `{"type":"task","run_id":"%s","task":%s,"active":true,"final_seq":2}`+"\n", id, q("t "+js))
		fmt.Fprintf(&lines, `{"type":"judgment","run_id":"%s","task":%s,"metric":"tc","judge":%s,"scores":{"correctness":0.5,"grounding":0.5,"completeness":0.5,"artifact_quality":0.5},"reasons":%s,"evidence":[{"seq":1,"quote":%s}]}`+"\n",
			id, q("t "+js), q("j "+js), q("because "+js), q(js))
	}
	os.WriteFile(filepath.Join(dir, "s.json"), []byte(sc), 0o644)
	os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte(lines.String()), 0o644)
	db := filepath.Join(t.TempDir(), "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", dir); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := gymlens(t, "--db", db, "-q", "annotate", "sample", "-n", "2", "--queue", "q", "--questions", "tc"); code != 0 {
		t.Fatal(stderr)
	}
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	opt := analysis.DefaultBootstrap
	opt.Resamples = 100
	s, err := serve.New(context.Background(), w, serve.Options{Name: "w.duckdb", Bootstrap: opt})
	if err != nil {
		t.Fatal(err)
	}
	srv := newLocalServer(t, s)
	for _, path := range []string{"/", "/runs", "/runs?q=" + neturl.QueryEscape(js), "/runs/r0", "/compare?a=r0&b=r1", "/annotate", "/annotate/q?annotator=x", "/annotate/q/items/1", "/annotate/q/status"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv+path), chromedp.WaitReady("h1"), chromedp.Sleep(100*time.Millisecond)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		title, _ := chromedp.Run(ctx, chromedp.Title())
		scripts, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('script').length + document.querySelectorAll('img[src="x"]').length`))
		text, _ := chromedp.Run(ctx, chromedp.Text("body"))
		if title == "pwned" || scripts != 0 {
			t.Errorf("%s: title %q, %d injected elements", path, title, scripts)
		}
		if path == "/runs/r0" && (!strings.Contains(text, "hello <script>") || !strings.Contains(text, "because <script>")) {
			t.Errorf("the run page does not show the payload as text:\n%.1500s", text)
		}
	}
	for _, p := range consoleProblems() {
		t.Error(p)
	}
}

// A token shorter than 16 characters and an --allowed-hosts entry that
// is not a host are mistakes in the call (exit 2, naming the rule), told
// before the warehouse is opened.
func TestServeFlagsRefused(t *testing.T) {
	db := filepath.Join(t.TempDir(), "none.duckdb")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--token", "x"}, []string{"--token has 1 characters", "at least 16", "--token auto"}},
		{[]string{"--token", "123456789012345", "--addr", "0.0.0.0:0"}, []string{"at least 16"}},
		{[]string{"--allowed-hosts", "http://viewer.example.org"}, []string{`--allowed-hosts "http://viewer.example.org"`}},
		{[]string{"--allowed-hosts", "ok.example", "--allowed-hosts", "*.example.org"}, []string{`--allowed-hosts "*.example.org"`}},
	} {
		code, stdout, stderr := gymlens(t, append([]string{"--db", db, "serve"}, c.args...)...)
		if code != 2 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q", c.args, code, stdout)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, stderr)
			}
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a refused serve made the warehouse")
	}
}

// --token auto makes a token of 128 bits, printed once, in the link on
// stdout and nowhere else; the viewer takes it (Bearer in any case) and
// refuses requests without it, and a Host that is not its own even with
// it.
func TestServeTokenAuto(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests a sample warehouse and serves it")
	}
	db := unratedWarehouse(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"gymlens", "--db", db, "-q", "serve", "--addr", "127.0.0.1:0", "--token", "auto", "--read-only", "--resamples", "200"}, pw, &stderr)
		pw.Close()
	}()
	out := bufio.NewReader(pr)
	line, err := out.ReadString('\n')
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	m := regexp.MustCompile(`^gymlens serve: (http://127\.0\.0\.1:(\d+)/)\?token=([A-Z2-7]{26}) \(Ctrl-C stops\)\n$`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the link: %q", line)
	}
	base, port, token := m[1], m[2], m[3]
	ask := func(host, auth string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+"api/runs?limit=1", nil)
		if host != "" {
			req.Host = host
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	for _, c := range []struct {
		host, auth string
		code       int
	}{
		{"", "", 401},
		{"", "Bearer " + token[:25], 401},
		{"", "bearer " + token, 200},
		{"localhost:" + port, "Bearer " + token, 200},
		{"evil.example:" + port, "Bearer " + token, 403},
		{"localhost.evil.example:" + port, "Bearer " + token, 403},
	} {
		if got := ask(c.host, c.auth); got != c.code {
			t.Errorf("Host %q, Authorization %q: %d, not %d", c.host, c.auth, got, c.code)
		}
	}
	cancel()
	rest, _ := io.ReadAll(out)
	if c := <-code; c != 0 {
		t.Errorf("exit %d: %s", c, stderr.String())
	}
	if strings.Contains(string(rest), token) || strings.Contains(stderr.String(), token) {
		t.Errorf("the token written again: stdout %q, stderr %q", rest, stderr.String())
	}
}
