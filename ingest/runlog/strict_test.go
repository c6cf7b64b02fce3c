package runlog

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gymlens/gymlens/internal/mutate"
	"github.com/valyala/fastjson"
)

// Lines fastjson's parser takes, each on one side of a rule of RFC 8259
// that the parser does not hold by itself.
var strictLines = []string{
	// numbers
	`{"n":0}`, `{"n":-0}`, `{"n":10}`, `{"n":1.5e-3}`, `{"n":1E+5}`, `{"n":-0.0e0}`,
	`{"n":01}`, `{"n":-01}`, `{"n":1.}`, `{"n":.5}`, `{"n":+1}`, `{"n":1e}`, `{"n":1e+}`,
	`{"n":1-2}`, `{"n":1..2}`, `{"n":1e5.0}`, `{"n":nan}`, `{"n":NaN}`, `{"n":inf}`,
	`{"n":-Inf}`, `{"n":[1,2,00]}`, `{"n":[[1],{"m":1.0}]}`, `{"a":{"b":{"c":-1.}}}`, `7`, `07`,
	// control bytes, in strings and between tokens
	"{\"s\":\"a\x01b\"}", "{\"s\":\"a\tb\"}", "{\"s\x1f\":1}", "{\"s\":1,\t\"t\":2}", "{\"s\":1}\r",
	"\t{\"s\":1}", "{\"0123456\":\"a\x00\"}", "{\"s\":\"\x7f\"}", "{\"s\":\"caf\xc3\xa9\"}",
	// escapes
	`{"s":"a\"b"}`, `{"s":"a\\"}`, `{"s":"\/\b\f\n\r\t"}`, `{"s":"\x"}`, `{"s":"\u00e9"}`,
	`{"s":"\u00E9\u00"}`, `{"s":"\u12G4"}`, `{"s":"\ud83d\ude00"}`, `{"s":"\ud83d"}`, `{"s":"\ude00"}`,
	`{"s":"\ud83d\u0041"}`, `{"s":"\\ud83d"}`, `{"s":"\\\ud83d"}`, `{"\u0073":1}`, `{"\q":1}`,
	`{"s":"\uDBFF\uDFFF"}`, `{"s":"\uD800\\"}`, `{"s":"\'"}`, `{"s":"a\\\"b"}`,
	// duplicate keys, alone and beside a broken rule
	`{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `{"a":[{"b":1},{"c":1,"c":01}]}`, `{"a":01,"a":2}`,
	`{"a":"\x","a":2}`, `{"":[{"":"","":{}}]}`, `{"":0,"":0}`,
}

// oldCheck is the check checkParsed replaces: the validator, then the
// walk for duplicate keys.
func oldCheck(line []byte, v *fastjson.Value) error {
	if err := CheckJSON(line); err != nil {
		return err
	}
	if p := duplicateKey(v); p != nil {
		return dupKeyError{joinPath(p)}
	}
	return nil
}

func sameCheck(t *testing.T, line []byte) (parsed bool) {
	t.Helper()
	var p fastjson.Parser
	v, err := p.ParseBytes(line)
	if err != nil {
		return false
	}
	want := fmt.Sprint(oldCheck(line, v))
	var scratch []byte
	v, _ = p.ParseBytes(line)
	if got := fmt.Sprint(checkParsed(line, v, &scratch)); got != want {
		t.Errorf("%q: checkParsed says %s, the validator and walk %s", line, got, want)
	}
	return true
}

// checkParsed must give the verdict and message of CheckJSON followed by
// DuplicateKey on every line fastjson parses.
func TestCheckParsedAsTheValidator(t *testing.T) {
	refused := 0
	for _, l := range strictLines {
		if !sameCheck(t, []byte(l)) {
			t.Errorf("%q: the test wants a line fastjson parses", l)
		}
		var p fastjson.Parser
		v, _ := p.ParseBytes([]byte(l))
		if oldCheck([]byte(l), v) != nil {
			refused++
		}
	}
	// Both sides of the rules are covered.
	if refused < 30 || refused > len(strictLines)-20 {
		t.Errorf("%d of %d lines refused", refused, len(strictLines))
	}
	// And on mutations of them and of real records.
	r := rand.New(rand.NewPCG(7, 18))
	seeds := append(append([]string(nil), strictLines...), benchLines...)
	parsed := 0
	for range 20000 {
		if sameCheck(t, mutate.Bytes(r, []byte(seeds[r.IntN(len(seeds))]))) {
			parsed++
		}
	}
	if parsed < 2500 {
		t.Errorf("only %d mutated lines parsed", parsed)
	}
}

func FuzzCheckParsed(f *testing.F) {
	for _, l := range strictLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) { sameCheck(t, line) })
}

// hasControl reads eight bytes at a time: every byte value at every
// position of the word and of the tail.
func TestHasControl(t *testing.T) {
	fills := []func(i int) byte{
		func(i int) byte { return 'a' + byte(i%3)*0x40 }, // 'a', 0xa1, 0xe1: high bits too
		func(int) byte { return 0x20 },                   // a borrow runs through spaces
		func(int) byte { return 0xff },
	}
	for _, fill := range fills {
		for n := 1; n <= 19; n++ {
			for pos := range n {
				for c := range 256 {
					b := make([]byte, n)
					for i := range b {
						b[i] = fill(i)
					}
					b[pos] = byte(c)
					if got, want := hasControl(b), c < 0x20; got != want {
						t.Fatalf("%x: hasControl %v", b, got)
					}
				}
			}
		}
	}
}

// appendTime writes what AppendFormat writes with the layout it replaces,
// whatever the time, zone and fraction.
func TestAppendTimeAsTheLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -11*3600)}
	times := []time.Time{
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 2, 9, 0, 0, 1000, time.UTC), time.Date(2026, 3, 2, 9, 0, 0, 999, time.UTC),
		time.Date(2026, 3, 2, 9, 0, 0, 100000000, time.UTC), time.Date(2016, 12, 31, 23, 59, 59, 500000000, zones[1]),
	}
	for range 20000 {
		ns := []int{0, r.IntN(1000) * 1000000, r.IntN(1000000) * 1000, r.IntN(1000000000)}[r.IntN(4)]
		times = append(times, time.Date(r.IntN(3000), time.Month(1+r.IntN(12)), 1+r.IntN(31), r.IntN(24), r.IntN(60), r.IntN(60), ns, zones[r.IntN(3)]))
	}
	for _, tm := range times {
		got := string(appendTime([]byte("x,"), tm))
		if want := "x," + tm.UTC().Format("2006-01-02 15:04:05.999999+00"); got != want {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
}

// escapeQuotes doubles the quotes after start alone.
func TestEscapeQuotes(t *testing.T) {
	for in, want := range map[string]string{
		`ab|cd`: `ab|cd`, `"a|"`: `"a|""`, `x|"`: `x|""`, `|""a"`: `|""""a""`, `|`: `|`,
	} {
		start := strings.IndexByte(in, '|')
		if got := string(escapeQuotes([]byte(in), start)); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// The lines of one run share the strings of their identifiers, and the
// table that shares them stays small whatever the number of runs.
func TestIdentifiersShared(t *testing.T) {
	var d Decoder
	rec1, err1 := d.DecodeLine([]byte(benchLines[0]))
	rec2, err2 := d.DecodeLine([]byte(benchLines[2]))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	e, j := rec1.(*Event), rec2.(*Judgment)
	if e.RunID != j.RunID || unsafe.StringData(e.RunID) != unsafe.StringData(j.RunID) {
		t.Errorf("run ids %q and %q not shared", e.RunID, j.RunID)
	}
	for i := range 10000 {
		line := strings.Replace(benchLines[0], `operator/3"`, fmt.Sprintf(`operator/%d"`, i), 1)
		rec, err := d.DecodeLine([]byte(line))
		if err != nil || !strings.HasSuffix(rec.(*Event).RunID, fmt.Sprintf("/%d", i)) {
			t.Fatalf("%v %v", rec, err)
		}
	}
	if n := len(d.arena.names); n > 4096 {
		t.Errorf("%d names kept", n)
	}
}
