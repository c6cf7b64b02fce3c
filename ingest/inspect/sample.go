package inspect

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/valyala/fastjson"
)

// where is the place a reader is at: file, entry and the field path.
type where struct {
	file, entry string
}

// sinkError is an error of the Sink (the warehouse's, say), passed
// through the reader unchanged: it is not the log's fault.
type sinkError struct{ err error }

func (e *sinkError) Error() string { return e.err.Error() }
func (e *sinkError) Unwrap() error { return e.err }

func sinkErr(err error) error {
	if err == nil {
		return nil
	}
	return &sinkError{err}
}

func (w where) err(field string, err error) error {
	var se *syntaxError
	var e *Error
	var ke *sinkError
	switch {
	case errors.As(err, &ke):
		return ke
	case errors.As(err, &e):
		if e.Field == "" && e.Entry == w.entry {
			e.Field = field
		}
		return e
	case errors.As(err, &se):
		return &Error{File: w.file, Entry: w.entry, Field: field, Offset: se.off, Msg: se.msg}
	}
	return &Error{File: w.file, Entry: w.entry, Field: field, Msg: err.Error()}
}

func (w where) errf(field, format string, a ...any) error {
	return &Error{File: w.file, Entry: w.entry, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// parseOne parses one JSON value with a parser of its own.
func parseOne(b []byte) (*fastjson.Value, error) {
	var p fastjson.Parser
	return p.ParseBytes(b)
}

// parse parses an item with the scanner's parser: the value is valid
// until the scanner parses the next one.
func (s *scanner) parse(b []byte) (*fastjson.Value, error) {
	return s.parser.ParseBytes(b)
}

// refs collects the references a sample's items make, to be checked
// against what the sample holds once it is read whole.
type refs struct {
	attach     map[string]string // attachment key → field first naming it
	attachKeys map[string]bool
	msgPool    int // highest message-pool index referenced + 1
	msgField   string
	callPool   int
	callField  string
}

func newRefs() *refs {
	return &refs{attach: map[string]string{}, attachKeys: map[string]bool{}}
}

var attachProto = []byte("attachment://")

// scan notes the attachment://KEY references in raw.
func (r *refs) scan(raw []byte, field string) {
	for {
		i := bytes.Index(raw, attachProto)
		if i < 0 {
			return
		}
		raw = raw[i+len(attachProto):]
		j := 0
		for j < len(raw) && (raw[j] >= '0' && raw[j] <= '9' || raw[j] >= 'a' && raw[j] <= 'z' || raw[j] >= 'A' && raw[j] <= 'Z' || raw[j] == '-' || raw[j] == '_') {
			j++
		}
		if j > 0 {
			k := string(raw[:j])
			if _, ok := r.attach[k]; !ok {
				r.attach[k] = field
			}
		}
		raw = raw[j:]
	}
}

// ranges reads half-open [start, end) pairs and returns the highest end.
func ranges(v *fastjson.Value) (int, error) {
	arr, err := v.Array()
	if err != nil {
		return 0, fmt.Errorf("expected a list of [start, end) pairs")
	}
	hi := 0
	for _, p := range arr {
		pr, err := p.Array()
		if err != nil || len(pr) != 2 {
			return 0, fmt.Errorf("expected a list of [start, end) pairs")
		}
		s, err1 := pr[0].Int()
		e, err2 := pr[1].Int()
		if err1 != nil || err2 != nil || s < 0 || e < s {
			return 0, fmt.Errorf("a reference range [%s, %s) is not a pair of indices with start ≤ end", pr[0], pr[1])
		}
		hi = max(hi, e)
	}
	return hi, nil
}

// check fails on a reference to nothing the sample holds.
func (r *refs) check(w where, s *Sample) error {
	if r.msgPool > s.PoolMessages {
		return w.errf(r.msgField, "refers to message %d of the message pool, which holds %d", r.msgPool-1, s.PoolMessages)
	}
	if r.callPool > s.PoolCalls {
		return w.errf(r.callField, "refers to call %d of the call pool, which holds %d", r.callPool-1, s.PoolCalls)
	}
	var missing []string
	for k := range r.attach {
		if !r.attachKeys[k] {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return w.errf(r.attach[missing[0]], "refers to attachment://%s, which the sample's attachments do not hold", missing[0])
	}
	return nil
}

// sampleReader reads one sample object from a scanner.
type sampleReader struct {
	sc   *scanner
	w    where
	sink Sink
	// field prefix for messages in a .json log (samples[3].)
	prefix string
}

// read reads the sample object that comes next into s (whose ID and
// Epoch may already be known from the entry's name).
func (r *sampleReader) read(s *Sample) error {
	rf := newRefs()
	known := s.ID != ""
	idSeen, epochSeen := false, false
	needKey := func(field string) error {
		if s.ID == "" || s.Epoch == 0 {
			return r.w.errf(r.prefix+field, "comes before the sample's id and epoch (Inspect writes them first)")
		}
		return nil
	}
	item := &Item{}
	err := r.sc.members(func(key string) error {
		field := r.prefix + key
		switch key {
		case "messages", "events":
			if err := needKey(key); err != nil {
				return err
			}
			kind := KindMessage
			if key == "events" {
				kind = KindEvent
			}
			return r.sc.elements(func(i int) error {
				f := fmt.Sprintf("%s[%d]", field, i)
				raw, err := r.sc.raw()
				if err != nil {
					return r.w.err(f, err)
				}
				v, err := r.sc.parse(raw)
				if err != nil {
					return r.w.errf(f, "not JSON: %v", err)
				}
				if v.Type() != fastjson.TypeObject {
					return r.w.errf(f, "expected an object, found %s", v.Type())
				}
				*item = Item{Kind: kind, Index: i, Raw: storable(raw, r.sc.nonFinite)}
				if kind == KindMessage {
					item.Type = string(v.GetStringBytes("role"))
					s.MessageCount++
				} else {
					item.Type = string(v.GetStringBytes("event"))
					s.Events++
					if err := r.event(s, rf, v, f); err != nil {
						return err
					}
				}
				rf.scan(raw, f)
				return sinkErr(r.sink.Item(s, item))
			})
		case "events_data", "message_pool", "call_pool":
			// Pools: events_data {messages, calls} since Inspect's log
			// version went back to 2; message_pool and call_pool in
			// version 3 logs.
			if err := needKey(key); err != nil {
				return err
			}
			if c, err := r.sc.peek(); err != nil {
				return r.w.err(field, err)
			} else if c == 'n' {
				return r.sc.skip()
			}
			pool := func(name string) error {
				kind := KindPoolMessage
				switch name {
				case "messages", "message_pool":
				case "calls", "call_pool":
					kind = KindPoolCall
				default:
					return r.sc.skip()
				}
				prefix := field
				if key == "events_data" {
					prefix += "." + name
				}
				return r.sc.elements(func(i int) error {
					f := fmt.Sprintf("%s[%d]", prefix, i)
					raw, err := r.sc.raw()
					if err != nil {
						return r.w.err(f, err)
					}
					v, err := r.sc.parse(raw)
					if err != nil {
						return r.w.errf(f, "not JSON: %v", err)
					}
					*item = Item{Kind: kind, Index: i, Raw: storable(raw, r.sc.nonFinite)}
					if kind == KindPoolMessage {
						item.Type = string(v.GetStringBytes("role"))
						s.PoolMessages++
					} else {
						s.PoolCalls++
					}
					rf.scan(raw, f)
					return sinkErr(r.sink.Item(s, item))
				})
			}
			if key != "events_data" {
				return pool(key)
			}
			return r.sc.members(pool)
		case "attachments":
			if err := needKey(key); err != nil {
				return err
			}
			i := 0
			return r.sc.members(func(k string) error {
				f := field + "." + k
				raw, err := r.sc.raw()
				if err != nil {
					return r.w.err(f, err)
				}
				if len(raw) == 0 || raw[0] != '"' {
					return r.w.errf(f, "expected a string")
				}
				if _, err := parseOne(raw); err != nil {
					return r.w.errf(f, "not JSON: %v", err)
				}
				rf.attachKeys[k] = true
				*item = Item{Kind: KindAttachment, Index: i, Key: k, Raw: raw}
				i++
				s.Attachments++
				return sinkErr(r.sink.Item(s, item))
			})
		}
		raw, err := r.sc.raw()
		if err != nil {
			return r.w.err(field, err)
		}
		v, err := parseOne(raw)
		if err != nil {
			return r.w.errf(field, "not JSON: %v", err)
		}
		rf.scan(raw, field)
		switch key {
		case "id":
			id, err := sampleID(v)
			if err != nil {
				return r.w.errf(field, "%v", err)
			}
			if known && id != s.ID {
				return r.w.errf(field, "is %s, but the entry's name says %s", id, s.ID)
			}
			s.ID, idSeen = id, true
		case "epoch":
			e, err := v.Int()
			if err != nil || e < 1 {
				return r.w.errf(field, "expected an epoch ≥ 1, found %s", v)
			}
			if known && e != s.Epoch {
				return r.w.errf(field, "is %d, but the entry's name says %d", e, s.Epoch)
			}
			s.Epoch, epochSeen = e, true
		default:
			return sampleField(r.w, field, key, v, raw, r.sc.nonFinite, s)
		}
		return nil
	})
	if err != nil {
		return r.w.err(r.prefix, err)
	}
	if !idSeen || !epochSeen {
		return r.w.errf(r.prefix+"id", "the sample has no id or no epoch")
	}
	return rf.check(r.w, s)
}

// event reads what a sample keeps of an event, and its pool references.
func (r *sampleReader) event(s *Sample, rf *refs, v *fastjson.Value, field string) error {
	switch string(v.GetStringBytes("event")) {
	case "model":
		s.ModelEvents++
		if ir := v.Get("input_refs"); ir != nil && ir.Type() != fastjson.TypeNull {
			hi, err := ranges(ir)
			if err != nil {
				return r.w.errf(field+".input_refs", "%v", err)
			}
			if hi > rf.msgPool {
				rf.msgPool, rf.msgField = hi, field+".input_refs"
			}
		}
		if cr := v.Get("call", "call_refs"); cr != nil && cr.Type() != fastjson.TypeNull {
			hi, err := ranges(cr)
			if err != nil {
				return r.w.errf(field+".call.call_refs", "%v", err)
			}
			if hi > rf.callPool {
				rf.callPool, rf.callField = hi, field+".call.call_refs"
			}
		}
	case "tool":
		s.ToolEvents++
		if e := v.Get("error"); e != nil && e.Type() != fastjson.TypeNull {
			s.ToolErrors++
		}
	}
	return nil
}

// sampleID reads a sample id (an int or a string) as text.
func sampleID(v *fastjson.Value) (string, error) {
	switch v.Type() {
	case fastjson.TypeString:
		return string(v.GetStringBytes()), nil
	case fastjson.TypeNumber:
		if n, err := v.Int64(); err == nil {
			return strconv.FormatInt(n, 10), nil
		}
	}
	return "", fmt.Errorf("expected an integer or a string, found %s", v)
}

// sampleField reads one of a sample's (or a summary's) other fields.
func sampleField(w where, field, key string, v *fastjson.Value, raw []byte, nonFinite bool, s *Sample) error {
	null := v.Type() == fastjson.TypeNull
	num := func() (*float64, error) {
		if null {
			return nil, nil
		}
		f, err := v.Float64()
		if err != nil {
			return nil, w.errf(field, "expected a number, found %s", v.Type())
		}
		return &f, nil
	}
	var err error
	switch key {
	case "uuid":
		s.UUID = string(v.GetStringBytes())
	case "input":
		s.Input = append([]byte(nil), storable(raw, nonFinite)...)
	case "target":
		s.Target = append([]byte(nil), storable(raw, nonFinite)...)
	case "metadata":
		if !null && v.Type() != fastjson.TypeObject {
			return w.errf(field, "expected an object, found %s", v.Type())
		}
		s.Metadata = append([]byte(nil), storable(raw, nonFinite)...)
	case "scores":
		if null {
			return nil
		}
		s.Scores, err = eachOf(w, field, v, "scorer → score", readScore)
		return err
	case "model_usage":
		if null {
			return nil
		}
		s.Usage, err = eachOf(w, field, v, "model → usage", func(k string, uv *fastjson.Value) ([]Usage, error) {
			u, err := readUsage(k, uv)
			return []Usage{u}, err
		})
		sort.Slice(s.Usage, func(a, b int) bool { return s.Usage[a].Model < s.Usage[b].Model })
		return err
	case "total_time":
		s.TotalTime, err = num()
	case "working_time":
		s.WorkingTime, err = num()
	case "started_at":
		s.StartedAt = string(v.GetStringBytes())
	case "completed_at":
		s.CompletedAt = string(v.GetStringBytes())
	case "error":
		switch v.Type() {
		case fastjson.TypeNull:
		case fastjson.TypeString: // a summary's
			s.Error = string(v.GetStringBytes())
		case fastjson.TypeObject:
			s.Error = string(v.GetStringBytes("message"))
			if s.Error == "" {
				s.Error = "error"
			}
		default:
			return w.errf(field, "expected an object or a string, found %s", v.Type())
		}
	case "error_retries":
		if !null {
			a, err := v.Array()
			if err != nil {
				return w.errf(field, "expected a list, found %s", v.Type())
			}
			s.Retries = len(a)
		}
	case "retries": // a summary's
		if !null {
			n, err := v.Int()
			if err != nil || n < 0 {
				return w.errf(field, "expected a count, found %s", v)
			}
			s.Retries = n
		}
	case "limit":
		switch v.Type() {
		case fastjson.TypeNull:
		case fastjson.TypeString: // a summary's: the limit's type
			s.LimitType = string(v.GetStringBytes())
		case fastjson.TypeObject:
			s.LimitType = string(v.GetStringBytes("type"))
			if l := v.Get("limit"); l != nil {
				if f, err := l.Float64(); err == nil {
					s.Limit = &f
				}
			}
		default:
			return w.errf(field, "expected an object, found %s", v.Type())
		}
	case "message_count": // a summary's
		if !null {
			n, err := v.Int()
			if err != nil || n < 0 {
				return w.errf(field, "expected a count, found %s", v)
			}
			s.MessageCount = n
		}
	case "turn_count":
		if !null {
			n, err := v.Int()
			if err != nil || n < 0 {
				return w.errf(field, "expected a count, found %s", v)
			}
			s.TurnCount = &n
		}
	}
	return err
}

// readScore reads one scorer's Score: a dict value gives one Score per
// key, in key order.
func readScore(scorer string, v *fastjson.Value) ([]Score, error) {
	if v.Type() != fastjson.TypeObject {
		return nil, fmt.Errorf("expected a score object, found %s", v.Type())
	}
	val := v.Get("value")
	if val == nil {
		return nil, fmt.Errorf("the score has no value")
	}
	base := Score{Scorer: scorer, Answer: string(v.GetStringBytes("answer")), Explanation: string(v.GetStringBytes("explanation"))}
	if val.Type() == fastjson.TypeObject {
		var out []Score
		val.GetObject().Visit(func(k []byte, kv *fastjson.Value) {
			sc := base
			sc.Key = string(k)
			sc.Value, sc.Valid = ValueToFloat(kv)
			sc.Raw = jsonOf(kv)
			out = append(out, sc)
		})
		sort.Slice(out, func(a, b int) bool { return out[a].Key < out[b].Key })
		return out, nil
	}
	base.Value, base.Valid = ValueToFloat(val)
	base.Raw = jsonOf(val)
	return []Score{base}, nil
}

// jsonOf is v as storable JSON.
func jsonOf(v *fastjson.Value) []byte {
	b := v.MarshalTo(nil)
	return storable(b, bytes.ContainsAny(b, "NI"))
}

// ValueToFloat maps a score value to a number as Inspect's default
// value_to_float does: numbers and booleans as they are; "C" 1, "P" 0.5,
// "I" and "N" 0; the strings yes/true 1 and no/false 0 (any case); a
// string holding a finite number, that number. Where Inspect would warn
// and give 0 (a list, an object, any other string) ok is false: the
// value is not a number, and is never counted as 0 here. null is not a
// number either.
func ValueToFloat(v *fastjson.Value) (f float64, ok bool) {
	switch v.Type() {
	case fastjson.TypeNumber:
		f, err := v.Float64()
		if err != nil {
			s := strings.ToLower(strings.TrimSpace(string(v.MarshalTo(nil))))
			switch s {
			case "nan":
				return math.NaN(), true
			case "inf", "+inf":
				return math.Inf(1), true
			case "-inf":
				return math.Inf(-1), true
			}
			return 0, false
		}
		return f, true
	case fastjson.TypeTrue:
		return 1, true
	case fastjson.TypeFalse:
		return 0, true
	case fastjson.TypeString:
		s := string(v.GetStringBytes())
		switch s {
		case "C":
			return 1, true
		case "P":
			return 0.5, true
		case "I", "N":
			return 0, true
		}
		switch strings.ToLower(s) {
		case "yes", "true":
			return 1, true
		case "no", "false":
			return 0, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return f, true
		}
	}
	return 0, false
}

// readUsage reads one model's usage.
func readUsage(model string, v *fastjson.Value) (Usage, error) {
	u := Usage{Model: model}
	if v.Type() != fastjson.TypeObject {
		return u, fmt.Errorf("expected a usage object, found %s", v.Type())
	}
	get := func(k string) (int64, bool, error) {
		x := v.Get(k)
		if x == nil || x.Type() == fastjson.TypeNull {
			return 0, false, nil
		}
		n, err := x.Int64()
		if err != nil {
			return 0, false, fmt.Errorf("%s: expected an integer, found %s", k, x)
		}
		return n, true, nil
	}
	var err error
	if u.Input, _, err = get("input_tokens"); err != nil {
		return u, err
	}
	if u.Output, _, err = get("output_tokens"); err != nil {
		return u, err
	}
	if u.Total, _, err = get("total_tokens"); err != nil {
		return u, err
	}
	for k, p := range map[string]**int64{"input_tokens_cache_read": &u.CacheRead, "input_tokens_cache_write": &u.CacheWrite, "reasoning_tokens": &u.Reasoning} {
		n, ok, err := get(k)
		if err != nil {
			return u, err
		}
		if ok {
			*p = &n
		}
	}
	return u, nil
}

// eachOf reads the object v at field, of key → value as what says, with
// read for each member in the object's order; a member's error names
// field.KEY.
func eachOf[T any](w where, field string, v *fastjson.Value, what string, read func(k string, v *fastjson.Value) ([]T, error)) ([]T, error) {
	o, err := v.Object()
	if err != nil {
		return nil, w.errf(field, "expected an object of %s, found %s", what, v.Type())
	}
	var out []T
	var ferr error
	o.Visit(func(k []byte, mv *fastjson.Value) {
		if ferr != nil {
			return
		}
		got, err := read(string(k), mv)
		if err != nil {
			ferr = w.errf(field+"."+string(k), "%v", err)
			return
		}
		out = append(out, got...)
	})
	return out, ferr
}
