package main

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// --only takes texts for every scale, and K=TEXT,TEXT for scale K alone,
// repeated or separated by ";": a scale with its own list runs just those
// (with ingest and score, which every other command reads, and what each
// needs first), the others the common list. A text picks the commands
// whose name begins with it as whole words.
func TestRSSOnlyPerScale(t *testing.T) {
	var o rssOnly
	for _, v := range []string{"metrics;300=ingest,score,metrics --by,rank,report", "100=serve"} {
		if err := o.Set(v); err != nil {
			t.Fatalf("Set(%q): %v", v, err)
		}
	}
	names := []string{"validate", "ingest", "score", "metrics --by model,harness", "rank --metric TC", "report", "verify (the report)",
		"metrics --judge-noise", "judge ta --repeats 2", "export --format parquet", "lake: metrics --by model,harness", "lake: report",
		"serve (first start)", "notebook run main-analyses.md"}
	needs := map[string]string{"verify (the report)": "report", "lake: report": "export --format parquet",
		"lake: metrics --by model,harness": "export --format parquet", "metrics --judge-noise": "judge ta --repeats 2"}
	pick := func(k int) []string {
		return slices.Sorted(maps.Keys(rssPick(names, needs, o.texts(k))))
	}
	for _, c := range []struct {
		k    int
		want []string
	}{
		{300, []string{"ingest", "metrics --by model,harness", "rank --metric TC", "report", "score"}},
		{100, []string{"ingest", "score", "serve (first start)"}},
		{10, []string{"ingest", "judge ta --repeats 2", "metrics --by model,harness", "metrics --judge-noise", "score"}},
	} {
		if got := pick(c.k); !slices.Equal(got, c.want) {
			t.Errorf("scale %d: picked %q, want %q", c.k, got, c.want)
		}
	}
	// No list at all: every command, validate included.
	var none rssOnly
	if got := rssPick(names, needs, none.texts(10)); len(got) != len(names) {
		t.Errorf("no --only: picked %d of %d commands", len(got), len(names))
	}
	// What a picked command needs comes with it.
	var lake rssOnly
	lake.Set("10=lake")
	if got := rssPick(names, needs, lake.texts(10)); !got["export --format parquet"] || !got["lake: metrics --by model,harness"] || got["report"] {
		t.Errorf("lake: report picked %v", got)
	}
	for _, bad := range []string{"x=metrics", "0=metrics", "300=", "10=a,,b"} {
		var o rssOnly
		if err := o.Set(bad); err == nil {
			t.Errorf("Set(%q): no error", bad)
		}
	}
}

// Before generating anything the rss command checks the work folder's free
// disk against what its largest scale needs, and refuses naming both
// figures; each scale's folder is removed before the next, so only the
// largest counts.
func TestRSSDiskCheck(t *testing.T) {
	free := func(n int64) func(string) (int64, error) {
		return func(string) (int64, error) { return n, nil }
	}
	need := rssDiskNeed(300)
	if need < 62e9 || need > 80e9 {
		t.Errorf("scale 300 needs %d bytes: not the 40 GB of logs, 17 GB or more of the ingest's staging and 3.6 GB of warehouse with a margin", need)
	}
	if rssDiskNeed(300) != 3*rssDiskNeed(100) || rssDiskNeed(10) >= rssDiskNeed(100) {
		t.Errorf("the need does not grow with the scale: %d, %d, %d", rssDiskNeed(10), rssDiskNeed(100), rssDiskNeed(300))
	}
	err := checkDisk("/w", []int{10, 100, 300}, free(need-1))
	if err == nil {
		t.Fatal("one byte short: no refusal")
	}
	for _, s := range []string{"--scale 300", "/w", gb(need), gb(need - 1)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not name %q", err, s)
		}
	}
	if err := checkDisk("/w", []int{300, 10}, free(need)); err != nil {
		t.Errorf("enough room refused: %v", err)
	}
	if err := checkDisk("/w", []int{10, 100}, free(need-1)); err != nil {
		t.Errorf("scales 10 and 100 refused with room for 300: %v", err)
	}
	if err := checkDisk("/w", []int{10}, func(string) (int64, error) { return 0, errors.New("statfs: no such file") }); err == nil || !strings.Contains(err.Error(), "/w") {
		t.Errorf("a folder whose free disk cannot be read: %v", err)
	}
}

// A command not run at a scale (--only) has no figures there, and no
// ratio beside it.
func TestRSSTableCommandNotRunAtAScale(t *testing.T) {
	var b strings.Builder
	rssTable(&b, []int{100, 300}, []rssRow{
		{"ingest", []rssCell{{wall: 10 * time.Second, rss: 500e6}, {wall: 30 * time.Second, rss: 600e6}}},
		{"corr", []rssCell{{wall: 2 * time.Second, rss: 300e6}, {notRun: true}}},
	})
	want := "| `corr` | 300 MB | 2.0 s | not run | | – |\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("got\n%s\nwant its last line\n%s", b.String(), want)
	}
}
