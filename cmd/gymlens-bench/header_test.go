package main

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Each measuring command's output begins with when, on which commit and on
// what machine: a pasted table carries them.
func TestHeaderNamesDateCommitCoresAndCPU(t *testing.T) {
	var b strings.Builder
	header(&b, time.Date(2026, 12, 6, 7, 5, 0, 0, time.UTC))
	re := regexp.MustCompile(`^measured 2026-12-06 07:05 UTC · commit ([0-9a-f]{7}( with uncommitted changes)?|unknown \(.*\)) · [1-9][0-9]* cores · \S.*\n\n$`)
	if !re.MatchString(b.String()) {
		t.Errorf("header %q", b.String())
	}
}

// The rss table gives, beside each scale's figures, the ratio of the times
// of neighbouring scales; a failed cell gives none.
func TestRSSTableHasTheRatioBetweenScales(t *testing.T) {
	var b strings.Builder
	rssTable(&b, []int{1, 10, 100}, []rssRow{
		{"ingest", []rssCell{{wall: 2 * time.Second, rss: 200 << 20}, {wall: 17 * time.Second, rss: 400 << 20}, {wall: 151 * time.Second, rss: 697 << 20}}},
		{"score", []rssCell{{wall: time.Second, rss: 100 << 20}, {err: errors.New("exit 1")}, {wall: 100 * time.Second, rss: 900 << 20}}},
	})
	want := "| command | --scale 1: peak RSS | time | --scale 10: peak RSS | time | --scale 100: peak RSS | time | time, 10 ÷ 1 | time, 100 ÷ 10 |\n" +
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n" +
		"| `ingest` | 210 MB | 2.0 s | 419 MB | 17.0 s | 731 MB | 151.0 s | 8.5× | 8.9× |\n" +
		"| `score` | 105 MB | 1.0 s | failed: exit 1 | | 944 MB | 100.0 s | – | – |\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
