package runlog

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// IsJSONNumber reports whether s is a number in JSON's grammar (RFC 8259
// §6): an optional minus, an integer part without leading zeros, an
// optional fraction and an optional exponent. Go's strconv accepts more
// (hexadecimal, underscores, "Inf", "NaN", a leading "+"); every number
// gymlens reads from text goes through this one grammar.
func IsJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || !isDigit(s[i]) {
			return false
		}
		for i < len(s) && isDigit(s[i]) {
			i++
		}
	}
	return i == len(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// ParseJSONNumber parses s when it is a finite number in JSON's grammar.
func ParseJSONNumber(s string) (float64, bool) {
	if !IsJSONNumber(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// LongRatings are ratings in long format, one question at a time: per
// item, per rater, a value. Values are numbers, or categories coded as
// numbers (see Question.Labels).
type LongRatings struct {
	Questions []*Question // in name order
}

// Question holds the ratings of one question.
type Question struct {
	Name   string // "" when the file has no question column
	Items  map[string]map[string]float64
	Raters map[string]bool
	// Labels is nil when every value is a number. Otherwise the values are
	// categories and a value v stands for Labels[v]. With Ordered the order
	// of Labels is the one given by the user (--categories); without it the
	// labels are text in byte order, coded only to tell them apart, and only
	// nominal statistics mean anything.
	Labels  []string
	Ordered bool
	// FirstText is where the first value that is not a number stands
	// (nil when every value is one): what to show a user who asked for a
	// level that needs numbers or an order.
	FirstText *Error
}

// ReadLongRatings reads a CSV with columns item, rater, value and an
// optional question. An empty value is a missing rating; a rater who rates
// an item twice on one question is an error. A value is a number (JSON's
// grammar) or, when any value of the question is not, a category; with
// categories given, every value must be one of them and is coded by its
// place in that order (numbers included).
func ReadLongRatings(path string, categories []string) (*LongRatings, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLongRatings(path, SkipBOM(f), categories)
}

func readLongRatings(path string, r io.Reader, categories []string) (*LongRatings, error) {
	order := map[string]int{}
	for i, c := range categories {
		c = strings.TrimSpace(c)
		if c == "" {
			return nil, fmt.Errorf("--categories: an empty category")
		}
		if _, dup := order[c]; dup {
			return nil, fmt.Errorf("--categories: %q given twice", c)
		}
		order[c] = i
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, &Error{File: path, Msg: "empty file: expected a header with item, rater and value"}
	}
	if err != nil {
		return nil, csvError(path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		h = strings.TrimSpace(h)
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		if _, dup := col[h]; dup && h != "" {
			return nil, &Error{File: path, Line: 1, Field: h, Msg: "the header names this column twice"}
		}
		col[h] = i
	}
	for _, c := range []string{"item", "rater", "value"} {
		if _, ok := col[c]; !ok {
			return nil, &Error{File: path, Line: 1, Field: c, Msg: "required column is missing from the header (columns: item, rater, value, and optional question)"}
		}
	}
	_, hasQ := col["question"]
	// question → item → rater → the value as written
	raw := map[string]map[string]map[string]longRating{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(path, err)
		}
		line, _ := cr.FieldPos(0)
		field := func(name string) (string, *Error) {
			i := col[name]
			v := strings.TrimSpace(rec[i])
			if v == "" && name != "value" {
				_, c := cr.FieldPos(i)
				return "", &Error{File: path, Line: line, Column: c, Field: name, Expected: "a non-empty " + name, Found: "an empty cell"}
			}
			return v, nil
		}
		item, e1 := field("item")
		rater, e2 := field("rater")
		q := ""
		var e3 *Error
		if hasQ {
			q, e3 = field("question")
		}
		for _, e := range []*Error{e1, e2, e3} {
			if e != nil {
				return nil, e
			}
		}
		val, _ := field("value")
		if val == "" {
			continue // a missing rating
		}
		_, c := cr.FieldPos(col["value"])
		if raw[q] == nil {
			raw[q] = map[string]map[string]longRating{}
		}
		if raw[q][item] == nil {
			raw[q][item] = map[string]longRating{}
		}
		if first, dup := raw[q][item][rater]; dup {
			return nil, &Error{File: path, Line: line, Field: "value",
				Msg: fmt.Sprintf("rater %q rated item %q twice (first on line %d)", rater, item, first.line)}
		}
		raw[q][item][rater] = longRating{line, c, val}
	}
	if len(raw) == 0 {
		return nil, &Error{File: path, Msg: "no rating in the file"}
	}
	lr := &LongRatings{}
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		q := &Question{Name: name, Items: map[string]map[string]float64{}, Raters: map[string]bool{}}
		// How this question's values are coded: by the given order, as
		// numbers, or as unordered text.
		var firstText *longRating
		labels := map[string]bool{}
		for _, byRater := range raw[name] {
			for _, rt := range byRater {
				labels[rt.value] = true
				if _, ok := ParseJSONNumber(rt.value); !ok && (firstText == nil || rt.line < firstText.line) {
					rt := rt
					firstText = &rt
				}
			}
		}
		code := map[string]float64{}
		switch {
		case len(order) > 0:
			q.Labels, q.Ordered = slices.Clone(categories), true
			for i := range q.Labels {
				q.Labels[i] = strings.TrimSpace(q.Labels[i])
			}
			for l := range labels {
				i, ok := order[l]
				if !ok {
					rt := earliest(raw[name], l)
					return nil, &Error{File: path, Line: rt.line, Column: rt.column, Field: "value",
						Expected: "one of --categories " + strings.Join(q.Labels, ","), Found: strconv.Quote(l)}
				}
				code[l] = float64(i)
			}
		case firstText != nil:
			q.FirstText = &Error{File: path, Line: firstText.line, Column: firstText.column, Field: "value",
				Expected: "a number", Found: strconv.Quote(firstText.value)}
			q.Labels = slices.Sorted(maps.Keys(labels))
			for i, l := range q.Labels {
				code[l] = float64(i)
			}
		default:
			for l := range labels {
				code[l], _ = ParseJSONNumber(l)
			}
		}
		for item, byRater := range raw[name] {
			q.Items[item] = map[string]float64{}
			for rater, rt := range byRater {
				q.Items[item][rater] = code[rt.value]
				q.Raters[rater] = true
			}
		}
		lr.Questions = append(lr.Questions, q)
	}
	return lr, nil
}

// longRating is one rating as written, and where.
type longRating struct {
	line, column int
	value        string
}

// earliest is the first rating (by line) of a question with value v.
func earliest(items map[string]map[string]longRating, v string) longRating {
	var best longRating
	for _, byRater := range items {
		for _, rt := range byRater {
			if rt.value == v && (best.line == 0 || rt.line < best.line) {
				best = rt
			}
		}
	}
	return best
}
