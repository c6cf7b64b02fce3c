package runlog

import (
	"bytes"
	"math"
	"strconv"
	"time"

	"github.com/valyala/fastjson"
)

// Records bound for the warehouse in bulk (events, judgments, task records
// and ratings) are written as CSV rows in a fixed column order, which the
// warehouse reads with DuckDB's parallel CSV reader. Strings are always
// quoted, so an unquoted empty field is NULL and "" is the empty string.

// Column is one column of a staging CSV: its name and DuckDB type.
type Column struct{ Name, Type string }

// CSVColumns gives the staging columns of each bulk record type. Every row
// ends with file_id and src_line.
var CSVColumns = map[string][]Column{
	TypeEvent: {{"run_id", "VARCHAR"}, {"seq", "BIGINT"}, {"t", "TIMESTAMPTZ"}, {"actor", "VARCHAR"}, {"kind", "VARCHAR"},
		{"task", "VARCHAR"}, {"text", "VARCHAR"}, {"tool", "VARCHAR"}, {"args", "JSON"}, {"result", "JSON"}, {"ok", "BOOLEAN"},
		{"depth", "VARCHAR"}, {"actions", "JSON"}, {"decision", "VARCHAR"}, {"ref", "BIGINT"}, {"visible", "BOOLEAN"},
		{"phase", "VARCHAR"}, {"input_tokens", "BIGINT"}, {"output_tokens", "BIGINT"}, {"reasoning_tokens", "BIGINT"},
		{"latency_ms", "DOUBLE"}, {"cost_usd", "DOUBLE"}, {"extra", "JSON"}, {"file_id", "INTEGER"}, {"src_line", "INTEGER"}},
	TypeJudgment: {{"run_id", "VARCHAR"}, {"task", "VARCHAR"}, {"metric", "VARCHAR"}, {"judge", "VARCHAR"}, {"prompt", "VARCHAR"},
		{"correctness", "DOUBLE"}, {"grounding", "DOUBLE"}, {"completeness", "DOUBLE"}, {"artifact_quality", "DOUBLE"},
		{"ta_now", "DOUBLE"}, {"ta_later", "DOUBLE"}, {"ta_cq", "DOUBLE"}, {"understandability", "DOUBLE"}, {"competence", "DOUBLE"},
		{"reliability", "DOUBLE"}, {"attachment", "DOUBLE"}, {"faith", "DOUBLE"}, {"reasons", "VARCHAR"}, {"evidence", "JSON"},
		{"extra", "JSON"}, {"file_id", "INTEGER"}, {"src_line", "INTEGER"}},
	TypeTask: {{"run_id", "VARCHAR"}, {"task", "VARCHAR"}, {"active", "BOOLEAN"}, {"activated_at", "TIMESTAMPTZ"},
		{"final_seq", "BIGINT"}, {"expected_depth", "VARCHAR"}, {"chosen_depth", "VARCHAR"}, {"rules_logged", "BOOLEAN"},
		{"rule_evidence", "DOUBLE"}, {"rule_outputs", "DOUBLE"}, {"rule_constraints", "DOUBLE"}, {"extra", "JSON"},
		{"file_id", "INTEGER"}, {"src_line", "INTEGER"}},
	TypeRun: {{"run_id", "VARCHAR"}, {"scenario", "VARCHAR"}, {"persona", "VARCHAR"}, {"rep", "INTEGER"}, {"config_id", "VARCHAR"},
		{"config_key", "VARCHAR"}, {"model", "VARCHAR"}, {"harness", "VARCHAR"}, {"effort", "VARCHAR"}, {"family", "VARCHAR"},
		{"size_b", "DOUBLE"}, {"start_t", "TIMESTAMPTZ"}, {"end_t", "TIMESTAMPTZ"}, {"status", "VARCHAR"}, {"meta", "JSON"},
		{"config_extra", "JSON"}, {"extra", "JSON"}, {"file_id", "INTEGER"}, {"src_line", "INTEGER"}},
	TypeRating: {{"rater", "VARCHAR"}, {"question", "VARCHAR"}, {"value", "DOUBLE"}, {"run_id", "VARCHAR"}, {"task", "VARCHAR"},
		{"item", "VARCHAR"}, {"day", "INTEGER"}, {"condition", "VARCHAR"}, {"extra", "JSON"}, {"file_id", "INTEGER"}, {"src_line", "INTEGER"}},
}

// Bulk reports whether records of type typ are staged as CSV rows.
func Bulk(typ string) bool { _, ok := CSVColumns[typ]; return ok }

// AppendCSV appends the CSV row of rec, the record DecodeLine returned
// last, ending with fileID, line and a newline. It must be called before
// the next DecodeLine: it reads raw JSON values from the parse.
func (d *Decoder) AppendCSV(dst []byte, rec Record, fileID, line int) []byte {
	get := func(k string) *fastjson.Value { return d.r.get(k, false) }
	str := func(k string) { dst = appendQuoted(dst, get(k)) }
	raw := func(v *fastjson.Value) {
		if v == nil || v.Type() == fastjson.TypeNull {
			dst = append(dst, ',')
			return
		}
		dst = append(dst, ',', '"')
		start := len(dst)
		dst = v.MarshalTo(dst)
		dst = escapeQuotes(dst, start)
		dst = append(dst, '"')
	}
	switch r := rec.(type) {
	case *Event:
		dst = appendFirst(dst, r.RunID)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, r.Seq, 10)
		dst = append(dst, ',')
		dst = appendTime(dst, r.T)
		str("actor")
		str("kind")
		str("task")
		str("text")
		str("tool")
		raw(get("args"))
		raw(get("result"))
		dst = appendBool(dst, get("ok"))
		str("depth")
		raw(get("actions"))
		str("decision")
		dst = append(dst, ',')
		if r.Ref != nil {
			dst = strconv.AppendInt(dst, *r.Ref, 10)
		}
		dst = append(dst, ',')
		if v := get("visible"); v != nil && v.Type() != fastjson.TypeNull {
			dst = strconv.AppendBool(dst, v.Type() == fastjson.TypeTrue)
		} else {
			dst = strconv.AppendBool(dst, r.Actor == "agent" && (r.Kind == "message" || r.Kind == "approval_request"))
		}
		str("phase")
		u := get("usage")
		for _, k := range []string{"input_tokens", "output_tokens", "reasoning_tokens"} {
			dst = appendInt(dst, getIn(u, k))
		}
		for _, k := range []string{"latency_ms", "cost_usd"} {
			dst = appendNumber(dst, getIn(u, k))
		}
		dst = appendJSONBytes(dst, r.Extra)
	case *Judgment:
		dst = appendFirst(dst, r.RunID)
		dst = appendQuotedString(dst, r.Task)
		dst = appendQuotedString(dst, r.Metric)
		dst = appendQuotedString(dst, r.Judge)
		dst = appendQuotedString(dst, r.Prompt)
		for i := range ScoreNames {
			dst = append(dst, ',')
			if f, ok := r.Scores.At(i); ok {
				dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
			}
		}
		str("reasons")
		raw(get("evidence"))
		dst = appendJSONBytes(dst, r.Extra)
	case *Task:
		dst = appendFirst(dst, r.RunID)
		dst = appendQuotedString(dst, r.Task)
		dst = append(dst, ',')
		dst = strconv.AppendBool(dst, r.Active)
		dst = append(dst, ',')
		if r.ActivatedAt != nil {
			dst = appendTime(dst, *r.ActivatedAt)
		}
		dst = append(dst, ',')
		if r.FinalSeq != nil {
			dst = strconv.AppendInt(dst, *r.FinalSeq, 10)
		}
		dst = appendOptString(dst, r.ExpectedDepth)
		dst = appendOptString(dst, r.ChosenDepth)
		dst = append(dst, ',')
		dst = strconv.AppendBool(dst, r.RulesLogged)
		for _, f := range r.Rules {
			dst = append(dst, ',')
			if f != nil {
				dst = strconv.AppendFloat(dst, *f, 'g', -1, 64)
			}
		}
		dst = appendJSONBytes(dst, r.Extra)
	case *Run:
		dst = appendFirst(dst, r.ID)
		dst = appendQuotedString(dst, r.Scenario)
		dst = appendQuotedString(dst, r.Persona)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, int64(r.Rep), 10)
		dst = appendQuotedString(dst, ConfigID(r.Model, r.Harness, r.Effort))
		dst = appendQuotedString(dst, ConfigKey(r.Model, r.Harness, r.Effort))
		dst = appendQuotedString(dst, r.Model)
		dst = appendQuotedString(dst, r.Harness)
		dst = appendQuotedString(dst, r.Effort)
		dst = appendOptString(dst, r.Family)
		dst = append(dst, ',')
		if r.SizeB != nil {
			dst = strconv.AppendFloat(dst, *r.SizeB, 'g', -1, 64)
		}
		for _, t := range []*time.Time{r.Start, r.End} {
			dst = append(dst, ',')
			if t != nil {
				dst = appendTime(dst, *t)
			}
		}
		dst = appendQuotedString(dst, r.Status)
		dst = appendJSONBytes(dst, r.Meta)
		dst = appendJSONBytes(dst, r.ConfigExtra)
		dst = appendJSONBytes(dst, r.Extra)
	case *Rating:
		dst = appendFirst(dst, r.Rater)
		dst = appendQuotedString(dst, r.Question)
		dst = append(dst, ',')
		dst = strconv.AppendFloat(dst, r.Value, 'g', -1, 64)
		dst = appendOptString(dst, r.RunID)
		dst = appendOptString(dst, r.Task)
		dst = appendOptString(dst, r.Item)
		dst = append(dst, ',')
		if r.Day != nil {
			dst = strconv.AppendInt(dst, int64(*r.Day), 10)
		}
		dst = appendOptString(dst, r.Condition)
		dst = appendJSONBytes(dst, r.Extra)
	default:
		return dst
	}
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(fileID), 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, int64(line), 10)
	return append(dst, '\n')
}

func getIn(o *fastjson.Value, k string) *fastjson.Value {
	if o == nil {
		return nil
	}
	return o.Get(k)
}

// appendQuoted appends ,"value" for a string value and a bare comma
// (NULL) for an absent or null one.
func appendQuoted(dst []byte, v *fastjson.Value) []byte {
	if v == nil || v.Type() != fastjson.TypeString {
		return append(dst, ',')
	}
	dst = append(dst, ',', '"')
	start := len(dst)
	dst = append(dst, v.GetStringBytes()...)
	dst = escapeQuotes(dst, start)
	return append(dst, '"')
}

// appendQuotedString appends ,"s" (always quoted: "" is the empty string).
func appendQuotedString(dst []byte, s string) []byte {
	dst = append(dst, ',', '"')
	start := len(dst)
	dst = append(dst, s...)
	dst = escapeQuotes(dst, start)
	return append(dst, '"')
}

// appendFirst appends "s" as the first field of a row.
func appendFirst(dst []byte, s string) []byte {
	n := len(dst)
	dst = appendQuotedString(dst, s)
	copy(dst[n:], dst[n+1:])
	return dst[:len(dst)-1]
}

// appendOptString appends ,"s", or a bare comma (NULL) when s is empty.
func appendOptString(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, ',')
	}
	return appendQuotedString(dst, s)
}

func appendJSONBytes(dst, b []byte) []byte {
	if b == nil {
		return append(dst, ',')
	}
	dst = append(dst, ',', '"')
	start := len(dst)
	dst = append(dst, b...)
	dst = escapeQuotes(dst, start)
	return append(dst, '"')
}

var quote = []byte{'"'}

// escapeQuotes doubles every '"' in dst[start:].
func escapeQuotes(dst []byte, start int) []byte {
	n := bytes.Count(dst[start:], quote)
	if n == 0 {
		return dst
	}
	end := len(dst)
	for range n {
		dst = append(dst, 0)
	}
	w := len(dst)
	for i := end - 1; i >= start; i-- {
		w--
		dst[w] = dst[i]
		if dst[i] == '"' {
			w--
			dst[w] = '"'
		}
	}
	return dst
}

func appendBool(dst []byte, v *fastjson.Value) []byte {
	dst = append(dst, ',')
	if v != nil && v.Type() != fastjson.TypeNull {
		dst = strconv.AppendBool(dst, v.Type() == fastjson.TypeTrue)
	}
	return dst
}

func appendInt(dst []byte, v *fastjson.Value) []byte {
	dst = append(dst, ',')
	if v == nil || v.Type() != fastjson.TypeNumber {
		return dst
	}
	if n, err := v.Int64(); err == nil {
		return strconv.AppendInt(dst, n, 10)
	}
	f, _ := v.Float64()
	return strconv.AppendInt(dst, int64(math.Trunc(f)), 10)
}

func appendNumber(dst []byte, v *fastjson.Value) []byte {
	dst = append(dst, ',')
	if v == nil || v.Type() != fastjson.TypeNumber {
		return dst
	}
	f, _ := v.Float64()
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// appendTime writes a time in UTC with an explicit offset, which DuckDB
// reads as TIMESTAMPTZ whatever the session's time zone.
// It writes what AppendFormat's "2006-01-02 15:04:05.999999+00" writes
// (the microseconds truncated, trailing zeros dropped), without parsing
// the layout for every event; years outside 0–9999, which RFC 3339 does
// not write, take AppendFormat.
func appendTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, "2006-01-02 15:04:05.999999+00")
	}
	hour, min, sec := t.Clock()
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, ' ')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, min, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sec, 2)
	if us := t.Nanosecond() / 1000; us > 0 {
		width := 6
		for us%10 == 0 {
			us /= 10
			width--
		}
		dst = append(dst, '.')
		dst = appendDigits(dst, us, width)
	}
	return append(dst, "+00"...)
}

// appendDigits writes n (≥ 0) in decimal, zero-padded to width digits.
func appendDigits(dst []byte, n, width int) []byte {
	var b [20]byte
	i := len(b)
	for n > 0 || width > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		width--
	}
	return append(dst, b[i:]...)
}
