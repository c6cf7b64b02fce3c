package reports

import (
	"errors"
	"reflect"
	"testing"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// QueueFrom makes `annotate queue`'s queue from one source, a sheet or
// the PARE samples ingested, keeping the name, k and limits given, and
// refuses before any warehouse is opened: no source or both (a usage
// error), a sheet that cannot be read (its own error), a queue that could
// not be stored (a usage error).
func TestQueueFrom(t *testing.T) {
	given := rows.Queue{Name: "pilot", K: 2, MaxAnnotators: 10, OverAssign: true}
	sheetItems := []rows.QueueItem{{Item: "r1#t1", RunID: "r1", Task: "t1"}}
	read := 0
	readSheet := func(path string) ([]string, []rows.QueueItem, error) {
		read++
		if path == "broken.csv" {
			return nil, nil, errors.New("broken.csv:3: field value: expected a number")
		}
		return []string{"trust", "tc"}, sheetItems, nil
	}

	q, items, err := QueueFrom(given, "", true, readSheet)
	want := rows.Queue{Name: "pilot", K: 2, MaxAnnotators: 10, OverAssign: true, Kind: rows.QueuePARE, Questions: []string{rows.PAREQuestion}, Source: "the PARE samples ingested"}
	if err != nil || !reflect.DeepEqual(q, want) || items != nil || read != 0 {
		t.Errorf("--pare: %+v %v %v, the sheet read %d times", q, items, err, read)
	}
	q, items, err = QueueFrom(given, "s.csv", false, readSheet)
	want = rows.Queue{Name: "pilot", K: 2, MaxAnnotators: 10, OverAssign: true, Kind: rows.QueueRatings, Questions: []string{"trust", "tc"}, Source: "sheet s.csv"}
	if err != nil || !reflect.DeepEqual(q, want) || !reflect.DeepEqual(items, sheetItems) {
		t.Errorf("--sheet: %+v %v %v", q, items, err)
	}

	var oe *analysis.OptionError
	for _, c := range []struct {
		name  string
		q     rows.Queue
		sheet string
		pare  bool
		want  string
		usage bool
	}{
		{"neither", given, "", false, "annotate queue: give one of --sheet FILE.csv or --pare", true},
		{"both", given, "s.csv", true, "annotate queue: give one of --sheet FILE.csv or --pare", true},
		{"a sheet that cannot be read", given, "broken.csv", false, "broken.csv:3: field value: expected a number", false},
		{"k below 1", rows.Queue{Name: "pilot"}, "", true, `queue "pilot": k, the annotators each item needs, must be 1 or more (found 0)`, true},
		{"a name with a slash", rows.Queue{Name: "a/b", K: 1}, "s.csv", false, `queue name "a/b": give a name without /, ?, #, %, \ or surrounding spaces`, true},
	} {
		_, _, err := QueueFrom(c.q, c.sheet, c.pare, readSheet)
		if err == nil || err.Error() != c.want || errors.As(err, &oe) != c.usage {
			t.Errorf("%s: %v, want %q (usage error: %v)", c.name, err, c.want, c.usage)
		}
	}
}
