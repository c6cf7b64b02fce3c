package runlog

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/internal/mutate"
)

// The readers of whole files and CSVs, fuzzed: whatever the bytes, each
// returns records or an error naming the file, never panics.

const fuzzScenario = "type: scenario\nscenario: s\npersonas: {p: {group: S}}\ntasks:\n  - id: a\n    weight: 2\n    expected_depth: {p: suggest}\nta: {window: {start: \"2026-03-02T09:00:00Z\", end: \"2026-03-02T10:00:00Z\"}, urgent: a, deferrable: a}\n"
const fuzzRatings = "rater,question,value,run_id,task,day\nann,trust,4,r1,a,2\nann,tc,0.5,r1,a,\n"
const fuzzLong = "item,rater,value,question\n1,a,2,q\n1,b,3,q\n2,a,yes,z\n"

func fuzzFile(t *testing.T, name string, data []byte) string {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkErr(t *testing.T, path string, err error) {
	t.Helper()
	if err != nil && !strings.HasPrefix(err.Error(), path) && !strings.HasPrefix(err.Error(), "--categories") {
		t.Fatalf("error without its file: %v", err)
	}
}

func scenarioTarget(t *testing.T, data []byte) {
	for _, ext := range []string{".yaml", ".json"} {
		p := fuzzFile(t, "s"+ext, data)
		_, _, err := ReadScenarioFile(p)
		checkErr(t, p, err)
	}
}

func ratingsTarget(t *testing.T, data []byte) {
	p := fuzzFile(t, "r.csv", data)
	err := ReadRatingsCSV(p, 1, func(line int, g *Rating, raw, row []byte, rowErr *Error) error {
		if (g == nil) == (rowErr == nil) {
			t.Fatalf("line %d: rating %v and error %v", line, g, rowErr)
		}
		if rowErr != nil {
			checkErr(t, p, rowErr)
		}
		return nil
	})
	checkErr(t, p, err)
}

func longRatingsTarget(t *testing.T, data []byte) {
	p := fuzzFile(t, "l.csv", data)
	_, err := ReadLongRatings(p, nil)
	checkErr(t, p, err)
	_, err = ReadLongRatings(p, []string{"2", "3", "yes"})
	checkErr(t, p, err)
}

func FuzzScenarioFile(f *testing.F) {
	f.Add([]byte(fuzzScenario))
	f.Add([]byte(`{"type":"scenario","scenario":"s","personas":{"p":{"group":"S"}},"tasks":[{"id":"a","expected_depth":{"p":"noop"}}]}`))
	f.Fuzz(scenarioTarget)
}

func FuzzRatingsCSV(f *testing.F) {
	f.Add([]byte(fuzzRatings))
	f.Add([]byte("\ufeffrater,question,value\n\"a\",trust,'=1\n"))
	f.Fuzz(ratingsTarget)
}

func FuzzLongRatings(f *testing.F) {
	f.Add([]byte(fuzzLong))
	f.Fuzz(longRatingsTarget)
}

// The fuzz targets of this package, each on 300 seeded mutations of its
// seeds, as part of every test run (go test -fuzz explores further).
func TestReadersOnMutatedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 900 seeded mutations beyond the fuzz corpus (the Fuzz targets' seeds still run)")
	}
	r := rand.New(rand.NewPCG(13, 1))
	for name, c := range map[string]struct {
		seed   string
		target func(*testing.T, []byte)
	}{
		"scenario":     {fuzzScenario, scenarioTarget},
		"ratings":      {fuzzRatings, ratingsTarget},
		"long ratings": {fuzzLong, longRatingsTarget},
	} {
		t.Run(name, func(t *testing.T) {
			for range 300 {
				c.target(t, mutate.Bytes(r, []byte(c.seed)))
			}
		})
	}
}

// Found by FuzzDecodeLine: an empty key given twice (testdata/fuzz keeps
// the input).
func TestDuplicateEmptyKey(t *testing.T) {
	var d Decoder
	_, err := d.DecodeLine([]byte(`{"":[{"":"","":{}}]}`))
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("%v", err)
	}
	// At the top, its path is empty: DecodeLine used to take an empty path
	// for no duplicate, and kept the record (found by FuzzCheckParsed).
	line := []byte(`{"type":"event","run_id":"r","seq":1,"t":"2026-03-02T09:00:00Z","actor":"user","kind":"message","":1,"":2}`)
	_, err = d.DecodeLine(line)
	if e := Locate(err, "f.jsonl", 3, line); e == nil || e.Error() != `f.jsonl:3: the empty key "" occurs twice in the record (JSON readers differ on which one counts)` {
		t.Errorf("%v", e)
	}
}
