package ingest

import "testing"

// IngestOptions.CheckLimits refuses the limits --max-errors and
// --max-rejects cannot be, in their words; --max-rejects only counts with
// --skip-invalid.
func TestIngestOptionsCheckLimits(t *testing.T) {
	for _, o := range []IngestOptions{{MaxErrors: 1}, {MaxErrors: 20, SkipInvalid: true, MaxRejects: 1}, {MaxErrors: 5, MaxRejects: 0}} {
		if err := o.CheckLimits(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, c := range []struct {
		o    IngestOptions
		want string
	}{
		{IngestOptions{MaxErrors: 0}, "--max-errors: expected a number ≥ 1, found 0"},
		{IngestOptions{MaxErrors: -3, SkipInvalid: true, MaxRejects: 0}, "--max-errors: expected a number ≥ 1, found -3"},
		{IngestOptions{MaxErrors: 1, SkipInvalid: true, MaxRejects: 0}, "--max-rejects: expected a number ≥ 1, found 0"},
		{IngestOptions{MaxErrors: 1, SkipInvalid: true, MaxRejects: -1}, "--max-rejects: expected a number ≥ 1, found -1"},
	} {
		if err := c.o.CheckLimits(); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.o, err, c.want)
		}
	}
}
