// Package mutate corrupts inputs at random, for the tests and the
// mutation command that hold every reader to "records or an error naming
// the file, never a panic".
package mutate

import (
	"math/rand/v2"
	"strings"
)

// Bytes is one random corruption of b: a truncation, byte flips, a
// duplicated or dropped line, or a JSON value of another type.
func Bytes(r *rand.Rand, b []byte) []byte {
	out := append([]byte(nil), b...)
	if len(out) == 0 {
		return []byte{byte(r.IntN(256))}
	}
	switch r.IntN(5) {
	case 0:
		return out[:r.IntN(len(out))]
	case 1:
		for range 1 + r.IntN(4) {
			out[r.IntN(len(out))] = byte(r.IntN(256))
		}
		return out
	case 2, 3:
		lines := strings.SplitAfter(string(out), "\n")
		i := r.IntN(len(lines))
		if r.IntN(2) == 0 {
			lines = append(lines[:i+1], lines[i:]...)
		} else {
			lines = append(lines[:i], lines[i+1:]...)
		}
		return []byte(strings.Join(lines, ""))
	}
	repl := []string{`"x"`, `1`, `null`, `[]`, `{}`, `true`, `-0.5e3`, `"2026-13-45T99:00:00Z"`}
	s := string(out)
	for _, sep := range []string{": ", ":", ","} {
		if i := strings.Index(s[r.IntN(len(s)):], sep); i >= 0 {
			at := len(s) - len(s[r.IntN(len(s)):]) + i + len(sep)
			if at < len(s) {
				end := at + strings.IndexAny(s[at:]+",", ",}\n")
				return []byte(s[:at] + repl[r.IntN(len(repl))] + s[min(end, len(s)):])
			}
		}
	}
	return out
}

// Outcome is what one corrupted input did to an ingest.
type Outcome int

// The outcomes a mutation run counts.
const (
	Ingested      Outcome = iota // read and loaded: the corruption was still valid input
	RefusedAtLine                // refused, the error naming file and line
	RefusedAtFile                // refused, the error naming the file (a whole-file problem)
	NoFile                       // refused without naming the file: a bad message
	Changed                      // refused, but the warehouse changed: a broken promise
	Panicked                     // a panic: a bug
)

// Names of the outcomes, for reports.
var Names = []string{"ingested", "refused, naming file and line", "refused, naming the file", "refused, naming no file", "refused, warehouse changed", "panicked"}
