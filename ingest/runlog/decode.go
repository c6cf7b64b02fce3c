package runlog

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valyala/fastjson"
)

// Decoder decodes run-log lines. It reuses its parser between calls, so one
// Decoder must not be used by two goroutines at once.
type Decoder struct {
	p     fastjson.Parser
	r     *reader // the last record decoded, for AppendCSV
	arena arena
	// scratch holds a number token while checkParsed reads it.
	scratch []byte
}

// arena hands out readers, reused from one line to the next: a reader is
// a few hundred bytes, and a line needs one per nested object.
type arena struct {
	rs []*reader
	n  int
	// names holds the identifiers lately decoded (run ids, tasks, judges,
	// prompts), so that the lines of one run share their strings rather
	// than each allocating its own.
	names map[string]string
}

// name is b as a string, shared with the last lines that had the same.
func (a *arena) name(b []byte) string {
	if s, ok := a.names[string(b)]; ok {
		return s
	}
	if len(a.names) >= 4096 || a.names == nil {
		a.names = make(map[string]string, 64)
	}
	s := string(b)
	a.names[s] = s
	return s
}

func (a *arena) get() *reader {
	if a.n == len(a.rs) {
		a.rs = append(a.rs, &reader{})
	}
	r := a.rs[a.n]
	a.n++
	*r = reader{arena: a}
	return r
}

// DecodeLine decodes and validates one JSON line. The returned error is a
// *fieldError or a plain error; Locate turns it into an *Error.
func (d *Decoder) DecodeLine(line []byte) (Record, error) {
	if !utf8.Valid(line) {
		col := 1
		for i := 0; i < len(line); {
			r, n := utf8.DecodeRune(line[i:])
			if r == utf8.RuneError && n <= 1 {
				col = i + 1
				break
			}
			i += n
		}
		return nil, &Error{Column: col, Msg: "invalid UTF-8: expected text encoded as UTF-8, found byte 0x" + strconv.FormatUint(uint64(line[col-1]), 16)}
	}
	v, err := d.p.ParseBytes(line)
	if err != nil {
		d.r = nil
		return nil, &Error{Msg: "not valid JSON: " + shorten(err.Error(), 160)}
	}
	if err := checkParsed(line, v, &d.scratch); err != nil {
		d.r = nil
		if dk, ok := err.(dupKeyError); ok {
			msg := "the key occurs twice in one object (JSON readers differ on which one counts)"
			if dk.path == "" {
				msg = `the empty key "" occurs twice in the record (JSON readers differ on which one counts)`
			}
			return nil, &Error{Column: columnOf(line, dk.path), Field: dk.path, Msg: msg}
		}
		e := At("", line, err)
		return nil, &Error{Column: e.Column, Msg: e.Msg}
	}
	var rec Record
	d.arena.n = 0
	rec, d.r, err = decodeValue(v, &d.arena)
	return rec, err
}

// DecodeValue decodes a parsed JSON record.
func DecodeValue(v *fastjson.Value) (Record, error) {
	rec, _, err := decodeValue(v, &arena{})
	return rec, err
}

func decodeValue(v *fastjson.Value, a *arena) (Record, *reader, error) {
	o, err := v.Object()
	if err != nil {
		return nil, nil, &fieldError{field: "", expected: "a JSON object", found: describe(v)}
	}
	r := a.get()
	r.o = o
	typ := r.str("type", true)
	if r.err != nil {
		return nil, nil, r.err
	}
	switch typ {
	case TypeEvent:
		r.setKnown(eventKeys)
	case TypeJudgment:
		r.setKnown(judgmentKeys)
	case TypeTask:
		r.setKnown(taskKeys)
	case TypeRun:
		r.setKnown(runKeys)
	case TypeRating:
		r.setKnown(ratingKeys)
	case TypeScenario:
		r.setKnown(scenarioKeys)
	}
	var rec Record
	switch typ {
	case TypeEvent:
		rec, err = decodeEvent(r)
	case TypeJudgment:
		rec, err = decodeJudgment(r)
	case TypeTask:
		rec, err = decodeTask(r)
	case TypeRun:
		rec, err = decodeRun(r)
	case TypeRating:
		rec, err = decodeRating(r)
	case TypeScenario:
		rec, err = decodeScenario(r)
	default:
		return nil, nil, &fieldError{field: "type", expected: "one of " + strings.Join(RecordTypes, ", "), found: strconv.Quote(typ)}
	}
	return rec, r, err
}

// reader reads typed fields of one JSON object, remembering the first
// error. known lists the object's fields, so unknown ones can be kept (or,
// for nested objects with a closed set of fields, refused). The object's
// values are indexed once, so reading a field costs a map lookup rather
// than a scan of the object.
type reader struct {
	o       *fastjson.Object
	parent  *reader // for the field path in messages, built only on error
	name    string
	arena   *arena
	err     *fieldError
	known   *keyset
	vals    [24]*fastjson.Value
	unknown bool // the object has fields outside known
}

// keyset is a set of field names with their positions. Finding a name
// hashes its length and first and last bytes into one of 64 buckets: with
// a couple of dozen names a bucket holds one name or two, and a lookup
// costs a few comparisons, well under a map's.
type keyset struct {
	names   []string
	buckets [64][]uint8
}

func newKeyset(names ...string) *keyset {
	if len(names) > 24 {
		panic("keyset too large")
	}
	k := &keyset{names: names}
	for i, n := range names {
		b := bucketOf(n)
		k.buckets[b] = append(k.buckets[b], uint8(i))
	}
	return k
}

func bucketOf[S string | []byte](s S) int {
	if len(s) == 0 {
		return 0
	}
	return (len(s)*7 + int(s[0])*3 + int(s[len(s)-1])) & 63
}

// find returns the position of name, or -1.
func (k *keyset) find(name []byte) int {
	for _, i := range k.buckets[bucketOf(name)] {
		if k.names[i] == string(name) {
			return int(i)
		}
	}
	return -1
}

// setKnown indexes the object's values by the fields of ks.
func (r *reader) setKnown(ks *keyset) {
	r.known = ks
	r.vals = [24]*fastjson.Value{}
	r.unknown = false
	if ks == nil {
		return
	}
	r.o.Visit(func(k []byte, v *fastjson.Value) {
		if i := ks.find(k); i >= 0 {
			if r.vals[i] == nil {
				r.vals[i] = v
			}
		} else {
			r.unknown = true
		}
	})
}

// The fields of each record type and nested object.
var (
	eventKeys     = newKeyset("type", "run_id", "seq", "t", "actor", "kind", "task", "text", "tool", "args", "result", "ok", "depth", "actions", "decision", "ref", "visible", "phase", "usage")
	usageKeys     = newKeyset("input_tokens", "output_tokens", "reasoning_tokens", "latency_ms", "cost_usd")
	judgmentKeys  = newKeyset("type", "run_id", "task", "metric", "judge", "prompt", "scores", "reasons", "evidence")
	evidenceKeys  = newKeyset("seq", "quote")
	taskKeys      = newKeyset("type", "run_id", "task", "active", "activated_at", "final_seq", "expected_depth", "chosen_depth", "rules")
	rulesKeys     = newKeyset("evidence", "outputs", "constraints")
	runKeys       = newKeyset("type", "run_id", "scenario", "persona", "rep", "config", "start", "end", "status", "meta")
	configKeys    = newKeyset("model", "harness", "effort", "family", "size_b")
	ratingKeys    = newKeyset("type", "rater", "question", "value", "run_id", "task", "item", "day", "condition")
	scenarioKeys  = newKeyset("type", "scenario", "domain", "title", "days", "personas", "tools", "tasks", "ta")
	personaKeys   = newKeyset("group", "label")
	taskSpecKeys  = newKeyset("id", "weight", "trigger", "expected_depth", "after_approval", "after_denial", "rubric")
	rubricKeys    = newKeyset("evidence", "outputs", "constraints")
	checkKeys     = newKeyset("tool", "args")
	textCheckKeys = newKeyset("contains", "not_contains", "regex")
	taKeys        = newKeyset("window", "urgent", "deferrable")
	windowKeys    = newKeyset("start", "end")
	tcScoreKeys   = newKeyset(TCScores...)
	taScoreKeys   = newKeyset(TAScores...)
	trjScoreKeys  = newKeyset(TRJScores...)
)

// path is the dotted field path of key in this reader's object.
func (r *reader) path(key string) string {
	p := key
	for c := r; c.parent != nil; c = c.parent {
		if p == "" {
			p = c.name
		} else {
			p = c.name + "." + p
		}
	}
	return p
}

// nested returns a reader over an object value with its known fields.
func (r *reader) nested(name string, o *fastjson.Object, known *keyset) *reader {
	var c *reader
	if r.arena != nil {
		c = r.arena.get()
	} else {
		c = &reader{}
	}
	c.o, c.parent, c.name = o, r, name
	c.setKnown(known)
	return c
}

func (r *reader) fail(key, expected string, v *fastjson.Value) {
	if r.err == nil {
		r.err = &fieldError{field: r.path(key), expected: expected, found: describe(v)}
	}
}

func (r *reader) failMsg(key, msg string) {
	if r.err == nil {
		r.err = &fieldError{field: r.path(key), msg: msg}
	}
}

// get returns the value of key, or nil when it is absent or null. A missing
// required key is an error.
func (r *reader) get(key string, required bool) *fastjson.Value {
	var v *fastjson.Value
	if i, ok := r.known.lookup(key); ok {
		v = r.vals[i]
	} else {
		v = r.o.Get(key)
	}
	if v == nil || v.Type() == fastjson.TypeNull {
		if required {
			r.failMsg(key, "required field is missing")
		}
		return nil
	}
	return v
}

func (r *reader) str(key string, required bool) string {
	return string(r.strBytes(key, required))
}

// ident is str for an identifier that many lines repeat (arena.name).
func (r *reader) ident(key string, required bool) string {
	b := r.strBytes(key, required)
	if len(b) == 0 {
		return ""
	}
	return r.arena.name(b)
}

// strBytes is str without the copy: the bytes are the parser's, valid
// until the next line.
func (r *reader) strBytes(key string, required bool) []byte {
	v := r.get(key, required)
	if v == nil {
		return nil
	}
	b, err := v.StringBytes()
	if err != nil {
		r.fail(key, "a string", v)
		return nil
	}
	if required && len(b) == 0 {
		r.failMsg(key, "expected a non-empty string, found \"\"")
	}
	return b
}

func (r *reader) enum(key string, required bool, allowed []string) string {
	v := r.get(key, required)
	if v == nil {
		return ""
	}
	b, err := v.StringBytes()
	if err != nil {
		r.fail(key, "one of "+strings.Join(allowed, ", "), v)
		return ""
	}
	for _, a := range allowed {
		if string(b) == a {
			return a
		}
	}
	r.fail(key, "one of "+strings.Join(allowed, ", "), v)
	return ""
}

func (r *reader) integer(key string, required bool) (int64, bool) {
	v := r.get(key, required)
	if v == nil {
		return 0, false
	}
	if v.Type() != fastjson.TypeNumber {
		r.fail(key, "an integer", v)
		return 0, false
	}
	n, err := v.Int64()
	if err != nil {
		f, ferr := v.Float64()
		if ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), true
		}
		r.fail(key, "an integer", v)
		return 0, false
	}
	return n, true
}

func (r *reader) number(key string, required bool) (float64, bool) {
	v := r.get(key, required)
	if v == nil {
		return 0, false
	}
	if v.Type() != fastjson.TypeNumber {
		r.fail(key, "a number", v)
		return 0, false
	}
	f, err := v.Float64()
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		r.fail(key, "a finite number", v)
		return 0, false
	}
	return f, true
}

func (r *reader) boolean(key string, required bool) (bool, bool) {
	v := r.get(key, required)
	if v == nil {
		return false, false
	}
	b, err := v.Bool()
	if err != nil {
		r.fail(key, "true or false", v)
		return false, false
	}
	return b, true
}

func (r *reader) time(key string, required bool) *time.Time {
	v := r.get(key, required)
	if v == nil {
		return nil
	}
	b, err := v.StringBytes()
	if err != nil {
		r.fail(key, "an RFC 3339 time string", v)
		return nil
	}
	t, err := ParseTime(string(b))
	if err != nil {
		r.fail(key, "an RFC 3339 time such as 2026-03-02T18:00:00Z", v)
		return nil
	}
	return &t
}

// ParseTime reads an RFC 3339 time as the RFC allows it and Go's parser
// does not: a lowercase "t" or "z" (RFC 3339 §5.6 permits them), and a leap
// second (23:59:60), which Go cannot represent and is read as the first
// instant of the next minute — one second later than :59, where a clock
// that does not count leap seconds would put it.
func ParseTime(s string) (time.Time, error) {
	if len(s) > 10 && s[10] == 't' {
		s = s[:10] + "T" + s[11:]
	}
	if strings.HasSuffix(s, "z") {
		s = s[:len(s)-1] + "Z"
	}
	leap := false
	if len(s) > 19 && s[16] == ':' && s[17:19] == "60" {
		s, leap = s[:17]+"59"+s[19:], true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, err
	}
	if leap {
		if t.UTC().Hour() != 23 || t.UTC().Minute() != 59 {
			return time.Time{}, fmt.Errorf("a leap second can only be 23:59:60 UTC")
		}
		t = t.Add(time.Second).Truncate(time.Second)
	}
	return t, nil
}

func (k *keyset) lookup(key string) (int, bool) {
	if k == nil {
		return 0, false
	}
	for _, i := range k.buckets[bucketOf(key)] {
		if k.names[i] == key {
			return int(i), true
		}
	}
	return 0, false
}

func (r *reader) object(key string, required bool, known *keyset) *reader {
	v := r.get(key, required)
	if v == nil {
		return nil
	}
	o, err := v.Object()
	if err != nil {
		r.fail(key, "an object", v)
		return nil
	}
	return r.nested(key, o, known)
}

func (r *reader) array(key string, required bool) []*fastjson.Value {
	v := r.get(key, required)
	if v == nil {
		return nil
	}
	a, err := v.Array()
	if err != nil {
		r.fail(key, "an array", v)
		return nil
	}
	return a
}

// raw returns the JSON text of key's value, or nil.
func (r *reader) raw(key string) []byte {
	v := r.get(key, false)
	if v == nil {
		return nil
	}
	return v.MarshalTo(nil)
}

// child adopts the first error of a nested reader.
func (r *reader) child(c *reader) {
	if c != nil && c.err != nil && r.err == nil {
		r.err = c.err
	}
}

// closed reports unknown keys of a nested object as errors.
func (r *reader) closed() {
	if r.err != nil || !r.unknown {
		return
	}
	r.o.Visit(func(k []byte, _ *fastjson.Value) {
		if r.known.find(k) < 0 && r.err == nil {
			r.err = &fieldError{field: r.path(string(k)), msg: "unknown field (allowed: " + strings.Join(r.known.names, ", ") + ")"}
		}
	})
}

// extra returns the unknown top-level keys as a JSON object, or nil.
func (r *reader) extra() []byte {
	if !r.unknown {
		return nil
	}
	var out []byte
	r.o.Visit(func(k []byte, v *fastjson.Value) {
		if r.known.find(k) >= 0 {
			return
		}
		if out == nil {
			out = append(out, '{')
		} else {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, string(k))
		out = append(out, ':')
		out = v.MarshalTo(out)
	})
	if out != nil {
		out = append(out, '}')
	}
	return out
}

func describe(v *fastjson.Value) string {
	if v == nil {
		return "nothing"
	}
	switch v.Type() {
	case fastjson.TypeNull:
		return "null"
	case fastjson.TypeString:
		return "string " + shorten(strconv.Quote(string(v.GetStringBytes())), 60)
	case fastjson.TypeNumber:
		return "number " + shorten(string(v.MarshalTo(nil)), 40)
	case fastjson.TypeTrue, fastjson.TypeFalse:
		return "boolean " + v.String()
	case fastjson.TypeArray:
		return "an array"
	case fastjson.TypeObject:
		return "an object"
	}
	return v.Type().String()
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func decodeEvent(r *reader) (Record, error) {
	e := &Event{}
	e.RunID = r.ident("run_id", true)
	e.Seq, _ = r.integer("seq", true)
	if t := r.time("t", true); t != nil {
		e.T = *t
	}
	e.Actor = r.enum("actor", true, actors)
	e.Kind = r.enum("kind", true, eventKinds)
	e.Task = r.ident("task", false)
	r.strBytes("text", false)
	r.strBytes("tool", false)
	if v := r.get("args", false); v != nil && v.Type() != fastjson.TypeObject {
		r.fail("args", "an object", v)
	}
	r.get("result", false)
	r.boolean("ok", false)
	r.enum("depth", false, actDepths)
	for i, a := range r.array("actions", false) {
		if a.Type() != fastjson.TypeString {
			r.fail(fmt.Sprintf("actions[%d]", i), "a string", a)
		}
	}
	e.Decision = r.enum("decision", false, decisions)
	if ref, ok := r.integer("ref", false); ok {
		e.Ref = &ref
	}
	r.boolean("visible", false)
	r.enum("phase", false, phases)
	if u := r.object("usage", false, usageKeys); u != nil {
		for _, k := range []string{"input_tokens", "output_tokens", "reasoning_tokens"} {
			if n, ok := u.integer(k, false); ok && n < 0 {
				u.failMsg(k, fmt.Sprintf("expected a count ≥ 0, found %d", n))
			}
		}
		for _, k := range []string{"latency_ms", "cost_usd"} {
			if f, ok := u.number(k, false); ok && f < 0 {
				u.failMsg(k, fmt.Sprintf("expected a value ≥ 0, found %g", f))
			}
		}
		u.closed()
		r.child(u)
	}
	if r.err == nil {
		if e.Kind == "decision" && e.Decision == "" && e.Actor == "user" {
			r.failMsg("decision", "a user decision needs a verdict: expected approve, decline or defer, found nothing")
		}
		if e.Seq < 0 {
			r.failMsg("seq", fmt.Sprintf("expected an integer ≥ 0, found %d", e.Seq))
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	e.Extra = r.extra()
	return e, nil
}

func decodeJudgment(r *reader) (Record, error) {
	j := &Judgment{}
	j.RunID = r.ident("run_id", true)
	j.Task = r.ident("task", false)
	j.Metric = r.enum("metric", true, metrics)
	j.Judge = r.ident("judge", true)
	j.Prompt = r.ident("prompt", false)
	r.strBytes("reasons", false)
	for i, ev := range r.array("evidence", false) {
		o, err := ev.Object()
		f := fmt.Sprintf("evidence[%d]", i)
		if err != nil {
			r.fail(f, "an object {seq, quote}", ev)
			break
		}
		er := r.nested(f, o, evidenceKeys)
		er.integer("seq", true)
		er.strBytes("quote", false)
		er.closed()
		r.child(er)
	}
	s := r.object("scores", true, nil)
	if r.err == nil && s != nil {
		if (j.Metric == "tc" || j.Metric == "trj") && j.Task == "" {
			r.failMsg("task", "required for metric "+j.Metric+" but missing")
		}
		switch j.Metric {
		case "tc":
			s.setKnown(tcScoreKeys)
			for _, k := range TCScores {
				if f, ok := s.number(k, true); ok {
					if f < 0 || f > 1 {
						s.failMsg(k, fmt.Sprintf("expected a score in [0,1], found %g", f))
					}
					j.Scores.set(k, f)
				}
			}
		case "ta":
			s.setKnown(taScoreKeys)
			for _, k := range TAScores {
				if f, ok := s.number(k, k != "cq"); ok {
					if k == "cq" && f != 0 && f != 0.5 && f != 1 {
						s.failMsg(k, fmt.Sprintf("expected 0, 0.5 or 1, found %g", f))
					} else if k != "cq" && f != 0 && f != 1 {
						s.failMsg(k, fmt.Sprintf("expected 0 or 1, found %g", f))
					}
					j.Scores.set(k, f)
				}
			}
		case "trj":
			s.setKnown(trjScoreKeys)
			for _, k := range TRJScores {
				if f, ok := s.number(k, true); ok {
					if f < 1 || f > 5 {
						s.failMsg(k, fmt.Sprintf("expected a score in [1,5], found %g", f))
					}
					j.Scores.set(k, f)
				}
			}
		}
		s.closed()
		r.child(s)
	}
	if r.err != nil {
		return nil, r.err
	}
	j.Extra = r.extra()
	return j, nil
}

func decodeTask(r *reader) (Record, error) {
	t := &Task{}
	t.RunID = r.ident("run_id", true)
	t.Task = r.ident("task", true)
	t.Active, _ = r.boolean("active", true)
	t.ActivatedAt = r.time("activated_at", false)
	if n, ok := r.integer("final_seq", false); ok {
		t.FinalSeq = &n
	}
	t.ExpectedDepth = r.enum("expected_depth", false, Depths)
	t.ChosenDepth = r.enum("chosen_depth", false, Depths)
	if rr := r.object("rules", false, rulesKeys); rr != nil {
		t.RulesLogged = true
		for i, k := range []string{"evidence", "outputs", "constraints"} {
			if f, ok := rr.number(k, false); ok {
				if f < 0 || f > 1 {
					rr.failMsg(k, fmt.Sprintf("expected a fraction in [0,1] or null, found %g", f))
				}
				t.Rules[i] = &f
			}
		}
		rr.closed()
		r.child(rr)
	}
	if r.err != nil {
		return nil, r.err
	}
	t.Extra = r.extra()
	return t, nil
}

func decodeRun(r *reader) (Record, error) {
	u := &Run{}
	u.ID = r.str("run_id", true)
	u.Scenario = r.str("scenario", true)
	u.Persona = r.str("persona", true)
	if n, ok := r.integer("rep", true); ok {
		if n < 1 {
			r.failMsg("rep", fmt.Sprintf("expected an integer ≥ 1, found %d", n))
		}
		u.Rep = int(n)
	}
	if c := r.object("config", true, configKeys); c != nil {
		u.Model = c.str("model", true)
		u.Harness = c.str("harness", true)
		u.Effort = c.str("effort", false)
		u.Family = c.str("family", false)
		if f, ok := c.number("size_b", false); ok {
			if f <= 0 {
				c.failMsg("size_b", fmt.Sprintf("expected a size in billions > 0, found %g", f))
			}
			u.SizeB = &f
		}
		u.ConfigExtra = c.extra()
		r.child(c)
	}
	if u.Effort == "" {
		u.Effort = "none"
	}
	u.Start = r.time("start", false)
	u.End = r.time("end", false)
	u.Status = r.enum("status", false, statuses)
	if u.Status == "" {
		u.Status = "ok"
	}
	u.Meta = r.raw("meta")
	if r.err == nil && u.Start != nil && u.End != nil && u.End.Before(*u.Start) {
		r.failMsg("end", "expected a time at or after start, found "+u.End.Format(time.RFC3339))
	}
	if r.err != nil {
		return nil, r.err
	}
	u.Extra = r.extra()
	return u, nil
}

// inspectRating checks a rating of an Inspect sample (one with a
// sample_id): it names the sample by task, sample_id and epoch (an
// integer from 1; in a CSV file, written as one), optionally config or
// eval, and no run_id. They stay in the rating's extra fields.
func inspectRating(r *reader, g *Rating) {
	if r.err != nil {
		return
	}
	switch v := r.o.Get("sample_id"); v.Type() {
	case fastjson.TypeString:
		if len(v.GetStringBytes()) == 0 {
			r.failMsg("sample_id", "expected the sample's id, found \"\"")
			return
		}
	case fastjson.TypeNumber:
	default:
		r.fail("sample_id", "the sample's id (a string or an integer)", v)
		return
	}
	if g.RunID != "" {
		r.failMsg("run_id", "a rating of an Inspect sample names it by task, sample_id and epoch, not by run_id")
		return
	}
	if g.Task == "" {
		r.failMsg("task", "a rating of an Inspect sample needs the sample's task, found none")
		return
	}
	v := r.o.Get("epoch")
	var ep int64
	var err error
	switch {
	case v == nil || v.Type() == fastjson.TypeNull:
		r.failMsg("epoch", "a rating of an Inspect sample needs the epoch rated (1 for a log of one epoch), found none")
		return
	case v.Type() == fastjson.TypeString:
		ep, err = strconv.ParseInt(string(v.GetStringBytes()), 10, 32)
	case v.Type() == fastjson.TypeNumber:
		ep, err = v.Int64()
	default:
		err = fmt.Errorf("not a number")
	}
	if err != nil || ep < 1 {
		r.fail("epoch", "an epoch: an integer from 1", v)
		return
	}
	for _, k := range []string{"config", "eval"} {
		if v := r.o.Get(k); v != nil && v.Type() != fastjson.TypeString && v.Type() != fastjson.TypeNull {
			r.fail(k, "a string", v)
			return
		}
	}
}

func decodeRating(r *reader) (Record, error) {
	g := &Rating{}
	g.Rater = r.str("rater", true)
	g.Question = r.str("question", true)
	g.Value, _ = r.number("value", true)
	g.RunID = r.str("run_id", false)
	g.Task = r.str("task", false)
	g.Item = r.str("item", false)
	if n, ok := r.integer("day", false); ok {
		d := int(n)
		g.Day = &d
	}
	g.Condition = r.str("condition", false)
	if r.o.Get("sample_id") != nil {
		inspectRating(r, g)
	} else if r.err == nil && g.Task != "" && g.RunID == "" {
		r.failMsg("run_id", "a rating of a task needs the task's run_id, found none")
	}
	if r.err != nil {
		return nil, r.err
	}
	g.Extra = r.extra()
	return g, nil
}

func decodeScenario(r *reader) (Record, error) {
	s := &Scenario{}
	s.ID = r.str("scenario", true)
	s.Domain = r.str("domain", false)
	s.Title = r.str("title", false)
	if n, ok := r.integer("days", false); ok {
		if n < 1 {
			r.failMsg("days", fmt.Sprintf("expected a number of days ≥ 1, found %d", n))
		}
		s.Days = int(n)
	}
	personas := map[string]bool{}
	if p := r.object("personas", true, nil); p != nil {
		p.o.Visit(func(k []byte, v *fastjson.Value) {
			name := string(k)
			po, err := v.Object()
			if err != nil {
				p.fail(name, "an object {group, label}", v)
				return
			}
			pr := p.nested(name, po, personaKeys)
			per := Persona{Name: name, Group: pr.str("group", true), Label: pr.str("label", false)}
			pr.closed()
			p.child(pr)
			personas[name] = true
			s.Personas = append(s.Personas, per)
		})
		if len(s.Personas) == 0 && p.err == nil {
			p.failMsg("", "expected at least one persona, found none")
		}
		r.child(p)
		sort.Slice(s.Personas, func(i, j int) bool { return s.Personas[i].Name < s.Personas[j].Name })
	}
	if tm := r.object("tools", false, nil); tm != nil {
		s.Tools = map[string]string{}
		tm.o.Visit(func(k []byte, _ *fastjson.Value) {
			s.Tools[string(k)] = tm.enum(string(k), true, toolDepths)
		})
		r.child(tm)
	}
	taskIDs := map[string]bool{}
	tasks := r.array("tasks", true)
	if r.err == nil && len(tasks) == 0 {
		r.failMsg("tasks", "expected at least one task, found an empty list")
	}
	for i, tv := range tasks {
		if r.err != nil {
			break
		}
		f := fmt.Sprintf("tasks[%d]", i)
		to, err := tv.Object()
		if err != nil {
			r.fail(f, "a task object", tv)
			break
		}
		tr := r.nested(f, to, taskSpecKeys)
		ts := TaskSpec{Weight: 1}
		ts.ID = tr.str("id", true)
		if taskIDs[ts.ID] && tr.err == nil {
			tr.failMsg("id", fmt.Sprintf("duplicate task id %q in scenario %q", ts.ID, s.ID))
		}
		taskIDs[ts.ID] = true
		if w, ok := tr.number("weight", false); ok {
			if w <= 0 {
				tr.failMsg("weight", fmt.Sprintf("expected a weight > 0, found %g", w))
			}
			ts.Weight = w
		}
		ts.Trigger = tr.str("trigger", false)
		if ed := tr.object("expected_depth", true, nil); ed != nil {
			ts.ExpectedDepth = map[string]string{}
			ed.o.Visit(func(k []byte, _ *fastjson.Value) {
				if !personas[string(k)] {
					ed.failMsg(string(k), "names no persona of this scenario")
					return
				}
				ts.ExpectedDepth[string(k)] = ed.enum(string(k), true, Depths)
			})
			for _, p := range s.Personas {
				if _, ok := ts.ExpectedDepth[p.Name]; !ok && ed.err == nil {
					ed.failMsg(p.Name, "required: every persona needs an expected depth")
				}
			}
			tr.child(ed)
		}
		ts.AfterApproval = tr.enum("after_approval", false, Depths)
		ts.AfterDenial = tr.enum("after_denial", false, Depths)
		if rb := tr.object("rubric", false, rubricKeys); rb != nil {
			for _, comp := range []string{"evidence", "outputs"} {
				for ci, cv := range rb.array(comp, false) {
					cf := fmt.Sprintf("%s[%d]", comp, ci)
					co, err := cv.Object()
					if err != nil {
						rb.fail(cf, "a check {tool, args}", cv)
						break
					}
					cr := rb.nested(cf, co, checkKeys)
					cr.str("tool", true)
					if ar := cr.object("args", false, nil); ar != nil {
						ar.o.Visit(func(k []byte, v *fastjson.Value) {
							if b, err := v.StringBytes(); err == nil {
								checkRegex(ar, string(k), string(b))
							}
						})
						cr.child(ar)
					}
					cr.closed()
					rb.child(cr)
				}
			}
			for ci, cv := range rb.array("constraints", false) {
				cf := fmt.Sprintf("constraints[%d]", ci)
				co, err := cv.Object()
				if err != nil {
					rb.fail(cf, "a check {contains} or {not_contains} or {regex}", cv)
					break
				}
				cr := rb.nested(cf, co, textCheckKeys)
				n := 0
				for _, k := range []string{"contains", "not_contains", "regex"} {
					if x := cr.str(k, false); x != "" || co.Get(k) != nil {
						n++
						if k == "regex" {
							checkRegex(cr, k, "/"+x+"/")
						}
					}
				}
				if n != 1 && cr.err == nil {
					cr.failMsg("", fmt.Sprintf("expected exactly one of contains, not_contains, regex, found %d", n))
				}
				cr.closed()
				rb.child(cr)
			}
			rb.closed()
			tr.child(rb)
			ts.Rubric = tr.raw("rubric")
		}
		ts.Extra = tr.extra()
		r.child(tr)
		s.Tasks = append(s.Tasks, ts)
	}
	if ta := r.object("ta", false, taKeys); ta != nil {
		w := &TAWindow{}
		if win := ta.object("window", true, windowKeys); win != nil {
			if t := win.time("start", true); t != nil {
				w.Start = *t
			}
			if t := win.time("end", true); t != nil {
				w.End = *t
			}
			if win.err == nil && !w.End.After(w.Start) {
				win.failMsg("end", "expected a time after start, found "+w.End.Format(time.RFC3339))
			}
			win.closed()
			ta.child(win)
		}
		w.Urgent = ta.str("urgent", true)
		w.Deferrable = ta.str("deferrable", true)
		if ta.err == nil {
			for _, k := range []string{"urgent", "deferrable"} {
				id := w.Urgent
				if k == "deferrable" {
					id = w.Deferrable
				}
				if !taskIDs[id] {
					ta.failMsg(k, fmt.Sprintf("names no task of this scenario: %q", id))
				}
			}
			if w.Urgent == w.Deferrable && ta.err == nil {
				ta.failMsg("deferrable", "expected a task other than the urgent one")
			}
		}
		ta.closed()
		r.child(ta)
		s.TA = w
	}
	if r.err != nil {
		return nil, r.err
	}
	s.Extra = r.extra()
	return s, nil
}

// checkRegex validates a value written /…/ as a regular expression.
func checkRegex(r *reader, key, s string) {
	if len(s) >= 2 && s[0] == '/' && s[len(s)-1] == '/' {
		if _, err := regexp.Compile(s[1 : len(s)-1]); err != nil {
			r.failMsg(key, "expected a valid regular expression, found "+strconv.Quote(s)+": "+err.Error())
		}
	}
}
