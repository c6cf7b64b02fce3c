package reports

import (
	"errors"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// AnnotationSample.Check refuses, before any warehouse is opened and as
// usage errors (*analysis.OptionError), a request that makes nothing, one
// without questions, and a queue that could not be stored.
func TestAnnotationSampleCheck(t *testing.T) {
	sheet := AnnotationSample{N: 5, Questions: []string{"trust"}, Sheet: "s.csv"}
	queue := AnnotationSample{N: 5, Questions: []string{"trust", "tc"}, Queue: rows.Queue{Name: "q", K: 2}}
	for name, s := range map[string]AnnotationSample{"a sheet": sheet, "a queue": queue} {
		if err := s.Check(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	noSheetQueue := sheet
	noSheetQueue.Questions = []string{"comment"} // a sheet asks what it is given; a queue could not
	for _, c := range []struct {
		name string
		edit func(*AnnotationSample)
		want string
	}{
		{"neither sheet nor queue", func(s *AnnotationSample) { s.Sheet = "" },
			"annotate sample: give --out FILE.csv (a sheet to fill in), --queue NAME (a queue to annotate in gymlens serve), or both"},
		{"no questions", func(s *AnnotationSample) { s.Questions = nil }, "--questions: name at least one question"},
		{"a queue's k below 1", func(s *AnnotationSample) { s.Queue = rows.Queue{Name: "q", K: 0} },
			`queue "q": k, the annotators each item needs, must be 1 or more (found 0)`},
		{"a queue's bad name", func(s *AnnotationSample) { s.Queue = rows.Queue{Name: "a/b", K: 1} },
			`queue name "a/b": give a name without /, ?, #, %, \ or surrounding spaces`},
		{"a queue's cap below k", func(s *AnnotationSample) { s.Queue = rows.Queue{Name: "q", K: 3, MaxAnnotators: 2} },
			`queue "q": --max-annotators 2: expected a number of annotators the queue takes, from k (3) up (0: the default, 1000)`},
		{"a question a queue cannot ask", func(s *AnnotationSample) { s.Questions, s.Queue = []string{"comment"}, rows.Queue{Name: "q", K: 1} },
			`queue "q": question "comment": a ratings queue asks trust, trj.<construct>, tc, tc.<diagnostic>, ta, ta.now, ta.later or a question of its own`},
	} {
		s := sheet
		c.edit(&s)
		err := s.Check()
		var oe *analysis.OptionError
		if err == nil || err.Error() != c.want || !errors.As(err, &oe) {
			t.Errorf("%s: %v, want the usage error %q", c.name, err, c.want)
		}
	}
	if err := noSheetQueue.Check(); err != nil {
		t.Errorf("a sheet's own question: %v", err)
	}
}
