package ingest

import "testing"

// Progress.String is what the ingest progress bar says: files and
// records while checking, records when DuckDB is loading.
func TestProgressString(t *testing.T) {
	for _, c := range []struct {
		p    Progress
		want string
	}{
		{Progress{FilesDone: 3, FilesTotal: 12, Records: 1234567}, "files 3/12 · 1,234,567 records"},
		{Progress{FilesDone: 0, FilesTotal: 1, Records: 0}, "files 0/1 · 0 records"},
		{Progress{FilesDone: 12, FilesTotal: 12, Records: 9876543, Loading: true}, "9,876,543 records checked · loading into the warehouse"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}
