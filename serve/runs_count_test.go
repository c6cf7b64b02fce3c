package serve

import (
	"strings"
	"testing"
)

// The runs list counts its rows from 1: the first page shows 1–N, the
// next from the offset + 1, and an empty selection shows none.
func TestRunsListCountsFromOne(t *testing.T) {
	s, _ := newServer(t, "")
	for target, want := range map[string]string{
		"/runs?limit=2":              "showing 1–2",
		"/runs?limit=2&offset=2":     "showing 3–4",
		"/runs?where=model=nonesuch": "none shown",
	} {
		rec := get(t, s, target)
		if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, want) {
			i := strings.Index(body, "runs")
			t.Errorf("%s: %d, want %q in %.300s", target, rec.Code, want, body[max(0, i-50):])
		}
	}
}
