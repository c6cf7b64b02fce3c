package main

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/serve"
)

// On the sample warehouse a reader goes from a cell of the main table to
// the runs behind it, and from them to a run's trajectory, in two clicks;
// the JSON says the same; a public address without a token is refused.
func TestServeOnTheSample(t *testing.T) {
	_, db := sampleWarehouse(t, 6, 4, true)
	w, err := ingest.Open(context.Background(), db, ingest.OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	s, err := serve.New(context.Background(), w, serve.Options{Name: db, Bootstrap: opt})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
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
	if !strings.Contains(run, "Trajectory") || strings.Count(run, `class="event`) < 10 || !strings.Contains(run, "Tasks (active)") {
		t.Errorf("the run page shows no trajectory:\n%.2000s", run)
	}
	// The runs of the cell are those of its configuration, by TC.
	u, _ := url.Parse(runsPage)
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
