package inspect

import (
	"archive/zip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/internal/mutate"
)

// The readers, fuzzed: a log read or an error naming the file, never a
// panic.

func seedFile(t testing.TB, path string) []byte {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func logTarget(t *testing.T, name string, b []byte) {
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	err := ReadFile(p, &recorder{})
	if err != nil && !strings.Contains(err.Error(), p) {
		t.Fatalf("error without its file: %v", err)
	}
}

func FuzzInspectEval(f *testing.F) {
	f.Add(seedFile(f, "testdata/log_streaming.eval"))
	f.Add(seedFile(f, "testdata/log_message_deduplication.eval"))
	f.Fuzz(func(t *testing.T, b []byte) { logTarget(t, "fuzz.eval", b) })
}

func FuzzInspectJSON(f *testing.F) {
	f.Add(seedFile(f, "testdata/log_formats.json"))
	f.Add(seedFile(f, "testdata/popularity_cancelled.json"))
	f.Fuzz(func(t *testing.T, b []byte) { logTarget(t, "fuzz.json", b) })
}

// Seeded corruptions of whole files and of the entries inside a .eval
// (which a corruption of the zip's bytes seldom reaches: the checksum
// refuses them first).
func TestInspectReaderOnMutatedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 300 seeded mutations beyond the fuzz corpus (the Fuzz targets' seeds still run)")
	}
	r := rand.New(rand.NewPCG(60, 1))
	evals := []string{"testdata/log_streaming.eval", "testdata/log_message_deduplication.eval", "testdata/mmlu-summary-choices.eval"}
	jsons := []string{"testdata/log_formats.json", "testdata/popularity_cancelled.json", "testdata/log_tool_call_error.json"}
	for i := range 100 {
		logTarget(t, "m.eval", mutate.Bytes(r, seedFile(t, evals[i%len(evals)])))
		logTarget(t, "m.json", mutate.Bytes(r, seedFile(t, jsons[i%len(jsons)])))
		src := evals[i%len(evals)]
		p := rezip(t, src, func(name string, b []byte) []byte {
			if r.IntN(3) == 0 {
				return mutate.Bytes(r, b)
			}
			return b
		}, zip.Deflate)
		err := ReadFile(p, &recorder{})
		if err != nil && !strings.Contains(err.Error(), p) {
			t.Fatalf("error without its file: %v", err)
		}
	}
}
