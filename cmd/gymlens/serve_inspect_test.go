package main

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/serve"
)

// inspectPayload is what an agent could write into its transcript to
// run a script in the reader's browser.
const inspectPayload = `<script>document.title='pwned'</script><img src=x onerror="document.title='pwned'">`

// inspectServer serves a warehouse of Inspect's own logs: popularity
// under two configurations (log_streaming.eval: Llama, samples 1 and 2 ×
// 2 epochs; popularity_cancelled.json: gpt-4o-mini, samples 1 to 3), the
// deduplicated log with its message pool and tool calls, the log whose
// tool calls all failed, and a hostile copy of the popularity log whose
// transcript, score explanation and model hold inspectPayload.
func inspectServer(t *testing.T) *httptest.Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: ingests five Inspect logs into a new warehouse (some seconds)")
	}
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	for _, n := range []string{"log_streaming.eval", "popularity_cancelled.json", "log_message_deduplication.eval", "log_tool_call_error.json"} {
		b, err := os.ReadFile(filepath.Join(inspectFixtures, n))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(logs, n), b, 0o644)
	}
	// Edited as text: the reader knows a JSON log by its first keys.
	b, err := os.ReadFile(filepath.Join(inspectFixtures, "popularity_cancelled.json"))
	if err != nil {
		t.Fatal(err)
	}
	q := func(s string) string { j, _ := json.Marshal(s); return string(j) }
	hostile := strings.NewReplacer(`"eval_id": "VnKtvCqGnnegLQ7qSBFDzx"`, `"eval_id": "hostile"`, `"task": "popularity"`, `"task": "hostile"`,
		`"model": "openai/gpt-4o-mini"`, `"model": `+q("openai/"+inspectPayload), `"content": "Yes"`, `"content": `+q("Yes "+inspectPayload),
		`"explanation": "Yes"`, `"explanation": `+q("explained "+inspectPayload)).Replace(string(b))
	b = []byte(hostile)
	os.WriteFile(filepath.Join(logs, "hostile.json"), b, 0o644)
	db := filepath.Join(dir, "w.duckdb")
	if code, _, stderr := gymlens(t, "--db", db, "-q", "ingest", logs); code != 0 {
		t.Fatal(stderr)
	}
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	sv, err := serve.New(context.Background(), w, serve.Options{Name: "w.duckdb", Bootstrap: opt, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sv)
	t.Cleanup(srv.Close)
	return srv
}

// getPage fetches a viewer page, failing the test unless it answers code.
func getPage(t *testing.T, srv *httptest.Server, path string, code int) string {
	t.Helper()
	res, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if res.StatusCode != code {
		t.Fatalf("%s: %d, want %d: %.500s", path, res.StatusCode, code, b)
	}
	return string(b)
}

// inOrder says whether each of parts occurs in s after the one before.
func inOrder(s string, parts ...string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}

var hrefs = regexp.MustCompile(`href="([^"]+)"`)

// links are the page's links, unescaped, that begin with prefix.
func links(page, prefix string) []string {
	var out []string
	for _, m := range hrefs.FindAllStringSubmatch(page, -1) {
		if u := html.UnescapeString(m[1]); strings.HasPrefix(u, prefix) {
			out = append(out, u)
		}
	}
	return out
}

// The Inspect overview's cells lead to the samples behind them; the list
// narrows by task, configuration, scorer and epoch.
func TestServeInspectDrillDown(t *testing.T) {
	t.Parallel()
	srv := inspectServer(t)
	// A warehouse of Inspect samples alone opens on their overview.
	if home := getPage(t, srv, "/", 200); !strings.Contains(home, "<h1>Inspect evaluations</h1>") {
		t.Errorf("/ of a warehouse without runs:\n%.500s", home)
	}
	over := getPage(t, srv, "/inspect", 200)
	if !strings.Contains(over, "<h1>Inspect evaluations</h1>") || !strings.Contains(over, `>popularity</a></h2>`) {
		t.Fatalf("overview:\n%.3000s", over)
	}
	// The Llama row of popularity: its inspect.match cell, 0.750 (sample 1
	// scored 0 and 1, sample 2 1 and 1), over 2 samples.
	row := regexp.MustCompile(`<tr><td><a href="[^"]*">azureai/Meta-Llama[^<]*</a></td><td class="num"><a href="([^"]+)">([^<]+)</a>.*?n=(\d+)`).FindStringSubmatch(over)
	if row == nil || row[2] != "0.750" || row[3] != "2" {
		t.Fatalf("no Llama cell of 0.750 over 2 samples in:\n%.3000s", over)
	}
	cell := html.UnescapeString(row[1])
	if !strings.HasPrefix(cell, "/inspect/samples?") || !strings.Contains(cell, "metric=inspect.match") || !strings.Contains(cell, "task=popularity") {
		t.Errorf("the cell links to %s", cell)
	}
	list := getPage(t, srv, cell, 200)
	samples := links(list, "/inspect/sample?")
	if len(samples) != 4 || !strings.Contains(list, "4 samples × epochs of task popularity under azureai/Meta-Llama") ||
		strings.Contains(list, "gpt-4o-mini</td>") {
		t.Errorf("the Llama cell's samples (want 1 and 2 × epochs 1 and 2): %v\n%.3000s", samples, list)
	}
	for i, want := range []string{"id=1", "id=1", "id=2", "id=2"} {
		if i < len(samples) && !strings.Contains(samples[i], want) || i < len(samples) && !strings.Contains(samples[i], []string{"epoch=1", "epoch=2"}[i%2]) {
			t.Errorf("sample %d: %s, want %s", i, samples[i], want)
		}
	}
	// Every value of the table links to samples, and each such list is
	// not empty.
	for _, l := range links(over, "/inspect/samples") {
		if page := getPage(t, srv, l, 200); strings.Contains(page, "none shown") {
			t.Errorf("%s leads to no sample", l)
		}
	}
	// Narrowed by epoch and paged.
	p := getPage(t, srv, "/inspect/samples?task=popularity&epoch=2", 200)
	if n := len(links(p, "/inspect/sample?")); n != 2 || !strings.Contains(p, "2 samples × epochs of task popularity") {
		t.Errorf("epoch 2 of popularity: %d samples\n%.2000s", n, p)
	}
	p = getPage(t, srv, "/inspect/samples?task=popularity&limit=2", 200)
	if n := len(links(p, "/inspect/sample?")); n != 2 || len(links(p, "/inspect/samples?limit=2&offset=2&task=popularity")) != 1 {
		t.Errorf("a page of 2: %d samples, next %v", n, links(p, "/inspect/samples?"))
	}
	getPage(t, srv, "/inspect/samples?epoch=x", 400)
}

// A sample's page shows what a reader looks for first: the title, the
// transcript with each tool call followed by its result, the model calls
// with their tokens and time, the input expanded from the message pool,
// attachments resolved, the score's explanation; the agent's text is
// shown as text, never run.
func TestServeInspectSample(t *testing.T) {
	t.Parallel()
	srv := inspectServer(t)
	first := func(q string) string {
		t.Helper()
		ls := links(getPage(t, srv, "/inspect/samples?"+q, 200), "/inspect/sample?")
		if len(ls) == 0 {
			t.Fatalf("no sample for %s", q)
		}
		return ls[0]
	}
	// The deduplicated log: tool calls, results, the message pool.
	dedup := getPage(t, srv, first("task="+url.QueryEscape("inspect_test_utils/guess_number")), 200)
	if !strings.Contains(dedup, "<h1>Sample 0 · epoch 1</h1>") {
		t.Errorf("title:\n%.1000s", dedup)
	}
	if !inOrder(dedup, "<h2>Transcript</h2>", "Guess the number", "tool call hardcoded_0:", "<strong>bash</strong>", "{&#34;cmd&#34;:&#34;ls&#34;}",
		"answers call hardcoded_0", "bin\nboot", "tool call hardcoded_1:", "answers call hardcoded_1", "done", "<h2>Model calls</h2>") {
		t.Errorf("the transcript's tool calls and results, in order:\n%s", dedup)
	}
	if n := strings.Count(dedup, `<td><a href="#ev-`); n != 6 {
		t.Errorf("%d model calls in the table, want 6", n)
	}
	// Each model call's input comes from the pool: the last has 11
	// messages, the first user message among them.
	if !strings.Contains(dedup, "input: 11 messages (pool 0–10)") || !inOrder(dedup, "input: 11 messages", `<a href="#pool-0">pool #0</a>`, "Guess the number") ||
		!strings.Contains(dedup, "<h2>Message pool</h2>") {
		t.Errorf("the model calls' inputs are not expanded from the pool")
	}
	// Attachments resolved, tokens and time per call.
	llama := getPage(t, srv, first("task=popularity&config="+url.QueryEscape("azureai/Meta-Llama-3-1-405B-Instruct-jqf | system_message+generate | none")), 200)
	if !strings.Contains(llama, "only respond with exactly") || strings.Contains(llama, "attachment://") {
		t.Errorf("attachments not resolved:\n%s", llama)
	}
	if !inOrder(llama, "<h2>Model calls</h2>", `<td class="num">66</td><td class="num">1</td><td class="num">67</td>`) ||
		!strings.Contains(llama, "tokens 66 in, 1 out, 67 in all") {
		t.Errorf("the model call's tokens:\n%s", llama)
	}
	// The score's explanation, and an agent's script shown as text.
	hostile := getPage(t, srv, first("task=hostile"), 200)
	if !inOrder(hostile, "<h2>Scores</h2>", "inspect.match", "explained &lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;") {
		t.Errorf("the score's explanation:\n%s", hostile)
	}
	if strings.Contains(hostile, "<script") || strings.Contains(hostile, "<img") || !strings.Contains(hostile, "Yes &lt;script&gt;") {
		t.Errorf("the payload is not escaped:\n%s", hostile)
	}
	// The tool call whose every call failed shows its errors.
	tools := getPage(t, srv, first("config="+url.QueryEscape("... | ... | none")), 200)
	if !strings.Contains(tools, "tool error: parsing: ...") || !strings.Contains(tools, "output_limit: The tool output limit of 10 MiB was exceeded.") {
		t.Errorf("tool errors:\n%.4000s", tools)
	}
	getPage(t, srv, "/inspect/sample?eval=nope&id=1&epoch=1", 404)
	getPage(t, srv, "/inspect/sample?eval=nope&id=1&epoch=0", 400)
	// A request naming another host is refused before the page is read.
	req, _ := http.NewRequest("GET", srv.URL+"/inspect/sample?eval=hostile&id=1&epoch=1", nil)
	req.Host = "attacker.example"
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Errorf("another Host: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

// The same sample under two configurations, side by side: both
// configurations, both scores and their difference, both transcripts.
func TestServeInspectCompare(t *testing.T) {
	t.Parallel()
	srv := inspectServer(t)
	ls := links(getPage(t, srv, "/inspect/samples?task=popularity&id=1&epoch=1", 200), "/inspect/sample?")
	if len(ls) != 2 {
		t.Fatalf("sample 1 at epoch 1 of popularity: %v", ls)
	}
	page := getPage(t, srv, ls[0], 200)
	cmp := links(page, "/inspect/compare?")
	if len(cmp) != 1 {
		t.Fatalf("compare links on %s: %v", ls[0], cmp)
	}
	c := getPage(t, srv, cmp[0], 200)
	if !strings.Contains(c, "<h1>Two Inspect samples side by side</h1>") {
		t.Fatalf("compare:\n%.2000s", c)
	}
	// Llama said No (I, 0) and gpt-4o-mini Yes (C, 1) to sample 1.
	if !inOrder(c, "azureai/Meta-Llama", "openai/gpt-4o-mini", "inspect.match", `<td class="num">0 (I)</td><td class="num">1 (C)</td><td class="num">&#43;1</td>`) {
		t.Errorf("the configurations and scores side by side:\n%s", c)
	}
	if !inOrder(c, "<h2>Transcripts</h2>", `<div class="text">No</div>`, `<div class="text">Yes</div>`) {
		t.Errorf("the two transcripts:\n%s", c)
	}
	getPage(t, srv, "/inspect/compare?eval_a=x&id_a=1&epoch_a=1", 400)
}

// In real Chromium: the Inspect overview, a click on a cell, the samples
// behind it, a click on a sample, a click to compare it with the other
// configuration; and the hostile sample, whose script and onerror image
// are shown as text (no script element or injected image in the DOM,
// the title unchanged, no console error). With $GYMLENS_SCREENSHOTS set,
// each page is saved there as PNG (docs/serve/inspect-*.png). Without
// Chromium it skips.
func TestServeInspectInBrowser(t *testing.T) {
	t.Parallel()
	ctx, consoleProblems := openBrowser(t, "the Inspect pages' browser test", chromedp.WindowSize(1280, 900))
	srv := inspectServer(t)
	shots := os.Getenv("GYMLENS_SCREENSHOTS")
	shot := func(name string) {
		if shots == "" || strings.HasPrefix(name, "-") { // "-NAME": a step not pictured
			return
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(shots, 0o755)
		os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
	}
	var heading, at string
	visit := func(name, href string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(href), chromedp.WaitReady("h1")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var err error
		if heading, err = chromedp.Run(ctx, chromedp.Text("h1")); err != nil {
			t.Fatal(err)
		}
		at, _ = chromedp.Run(ctx, chromedp.Location())
		shot(name)
	}
	step := func(name, sel string) {
		t.Helper()
		href, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).href`, sel)))
		if err != nil {
			t.Fatalf("%s: no link %s: %v", name, sel, err)
		}
		visit(name, href)
	}
	visit("inspect-overview", srv.URL+"/inspect")
	if heading != "Inspect evaluations" {
		t.Fatalf("overview: %q", heading)
	}
	step("inspect-samples", `table.inspect td.num a[href*="Llama"]`)
	if heading != "Inspect samples" || !strings.Contains(at, "metric=inspect.match") {
		t.Errorf("the cell led to %q at %s", heading, at)
	}
	step("inspect-sample", `table.samples tbody a`)
	if heading != "Sample 1 · epoch 1" {
		t.Errorf("the sample link led to %q at %s", heading, at)
	}
	step("inspect-compare", `a[href^="/inspect/compare"]`)
	if heading != "Two Inspect samples side by side" {
		t.Errorf("compare: %q at %s", heading, at)
	}
	// The tool calls of the deduplicated log, for the picture of a
	// transcript with tools.
	visit("-tools", srv.URL+"/inspect/samples?task="+url.QueryEscape("inspect_test_utils/guess_number"))
	step("-transcript", `table.samples tbody a`)
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(".toolcall")); err != nil {
		t.Fatalf("no tool call on the page: %v", err)
	}
	shot("inspect-transcript")
	visit("-hostile-list", srv.URL+"/inspect/samples?task=hostile")
	step("-hostile", `table.samples tbody a`)
	type dom struct {
		Title           string
		Scripts, Images int
		Shown           bool
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[dom](`({Title: document.title, Scripts: document.scripts.length, Images: document.images.length,
		Shown: document.body.innerText.includes("<script>document.title='pwned'</script>")})`))
	if err != nil {
		t.Fatal(err)
	}
	if got.Title == "pwned" || got.Scripts != 0 || got.Images != 0 || !got.Shown {
		t.Errorf("the hostile sample in Chromium: %+v", got)
	}
	for _, p := range consoleProblems() {
		t.Error(p)
	}
}
