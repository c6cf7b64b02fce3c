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

	"github.com/gymlens/gymlens/ingest/rows"
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

// Question holds the ratings of one question, compactly (a few dozen
// bytes a rating: millions of ratings fit).
type Question struct {
	Name    string   // "" when the file has no question column
	Items   []string // in name order
	Raters  []string // in name order
	Ratings []Rated  // by item, then rater
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

// Rated is one rating: Items[Item] rated by Raters[Rater].
type Rated struct {
	Item, Rater int32
	Value       float64
}

// MaxLongRatingsFile bounds a long-format ratings file: it is held in
// memory (α needs every unit), at a few dozen bytes a rating.
const MaxLongRatingsFile = 40 << 20

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
	if st, err := f.Stat(); err == nil && st.Size() > MaxLongRatingsFile {
		return nil, &Error{File: path, Msg: fmt.Sprintf("%d MB: agree --input holds the ratings in memory and reads at most %d MB (about 3 million ratings, some 700 MB of memory); split the file by question",
			st.Size()>>20, MaxLongRatingsFile>>20)}
	}
	return readLongRatings(path, SkipBOM(f), categories)
}

// questionData is one question's ratings as read: names and labels
// interned, each rating with its line.
type questionData struct {
	items, raters, labels map[string]int32
	itemNames, raterNames []string
	labelNames            []string
	labelAt               []longRating // where each label first stands
	ratings               []readRating
}

type readRating struct {
	item, rater, label int32
	line               int32
}

func intern(m map[string]int32, names *[]string, s string) int32 {
	if i, ok := m[s]; ok {
		return i
	}
	i := int32(len(*names))
	m[s] = i
	*names = append(*names, s)
	return i
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
	questions := map[string]*questionData{}
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
		qd := questions[q]
		if qd == nil {
			qd = &questionData{items: map[string]int32{}, raters: map[string]int32{}, labels: map[string]int32{}}
			questions[q] = qd
		}
		lab := intern(qd.labels, &qd.labelNames, val)
		if int(lab) == len(qd.labelAt) {
			_, c := cr.FieldPos(col["value"])
			qd.labelAt = append(qd.labelAt, longRating{line, c, val})
		}
		qd.ratings = append(qd.ratings, readRating{intern(qd.items, &qd.itemNames, item), intern(qd.raters, &qd.raterNames, rater), lab, int32(line)})
	}
	if len(questions) == 0 {
		return nil, &Error{File: path, Msg: "no rating in the file"}
	}
	lr := &LongRatings{}
	for _, name := range slices.Sorted(maps.Keys(questions)) {
		qd := questions[name]
		q, err := qd.question(path, name, order, categories)
		if err != nil {
			return nil, err
		}
		lr.Questions = append(lr.Questions, q)
	}
	return lr, nil
}

// question sorts the ratings, finds a rater who rated an item twice, and
// codes the values.
func (qd *questionData) question(path, name string, order map[string]int, categories []string) (*Question, error) {
	q := &Question{Name: name}
	// Names in order; the ratings renumbered to match.
	renumber := func(names []string) ([]string, []int32) {
		sorted := slices.Clone(names)
		slices.Sort(sorted)
		pos := make([]int32, len(names))
		at := make(map[string]int32, len(sorted))
		for i, n := range sorted {
			at[n] = int32(i)
		}
		for i, n := range names {
			pos[i] = at[n]
		}
		return sorted, pos
	}
	var itemPos, raterPos []int32
	q.Items, itemPos = renumber(qd.itemNames)
	q.Raters, raterPos = renumber(qd.raterNames)
	rs := qd.ratings
	for i := range rs {
		rs[i].item, rs[i].rater = itemPos[rs[i].item], raterPos[rs[i].rater]
	}
	slices.SortFunc(rs, func(a, b readRating) int {
		if a.item != b.item {
			return int(a.item - b.item)
		}
		if a.rater != b.rater {
			return int(a.rater - b.rater)
		}
		return int(a.line - b.line)
	})
	// A rating given twice: report the one met first in the file.
	dup := -1
	for i := 1; i < len(rs); i++ {
		if rs[i].item == rs[i-1].item && rs[i].rater == rs[i-1].rater && (dup < 0 || rs[i].line < rs[dup].line) {
			dup = i
		}
	}
	if dup >= 0 {
		d := rs[dup]
		first := rs[dup-1].line
		for j := dup - 1; j >= 0 && rs[j].item == d.item && rs[j].rater == d.rater; j-- {
			first = rs[j].line
		}
		return nil, &Error{File: path, Line: int(d.line), Field: "value",
			Msg: fmt.Sprintf("rater %q rated item %q twice (first on line %d)", q.Raters[d.rater], q.Items[d.item], first)}
	}
	// How the values are coded: by the given order, as numbers, or as
	// unordered text.
	code := make([]float64, len(qd.labelNames))
	var firstText *longRating
	for i, l := range qd.labelNames {
		if _, ok := ParseJSONNumber(l); !ok && (firstText == nil || qd.labelAt[i].line < firstText.line) {
			firstText = &qd.labelAt[i]
		}
	}
	switch {
	case len(order) > 0:
		q.Labels, q.Ordered = slices.Clone(categories), true
		for i := range q.Labels {
			q.Labels[i] = strings.TrimSpace(q.Labels[i])
		}
		for i, l := range qd.labelNames {
			o, ok := order[l]
			if !ok {
				at := qd.labelAt[i]
				return nil, &Error{File: path, Line: at.line, Column: at.column, Field: "value",
					Expected: "one of --categories " + strings.Join(q.Labels, ","), Found: strconv.Quote(l)}
			}
			code[i] = float64(o)
		}
	case firstText != nil:
		q.FirstText = &Error{File: path, Line: firstText.line, Column: firstText.column, Field: "value",
			Expected: "a number", Found: strconv.Quote(firstText.value)}
		q.Labels = slices.Sorted(slices.Values(qd.labelNames))
		pos := make(map[string]int, len(q.Labels))
		for i, l := range q.Labels {
			pos[l] = i
		}
		for i, l := range qd.labelNames {
			code[i] = float64(pos[l])
		}
	default:
		for i, l := range qd.labelNames {
			code[i], _ = ParseJSONNumber(l)
		}
	}
	q.Ratings = make([]Rated, len(rs))
	for i, r := range rs {
		q.Ratings[i] = Rated{Item: r.item, Rater: r.rater, Value: code[r.label]}
	}
	return q, nil
}

// longRating is one rating as written, and where.
type longRating struct {
	line, column int
	value        string
}

// Units are the question's ratings as units for agreement coefficients:
// one per item in item order, each holding its raters' values in rater
// order.
func (q *Question) Units() [][]float64 {
	var units [][]float64
	for i := 0; i < len(q.Ratings); {
		j := i
		var u []float64
		for j < len(q.Ratings) && q.Ratings[j].Item == q.Ratings[i].Item {
			u = append(u, q.Ratings[j].Value)
			j++
		}
		units = append(units, u)
		i = j
	}
	return units
}

// Pairs are, with two raters, the values of the items both rated: the
// first rater's in a, the second's in b.
func (q *Question) Pairs() (a, b []float64) {
	for i := 0; i+1 < len(q.Ratings); i++ {
		if r, n := q.Ratings[i], q.Ratings[i+1]; r.Item == n.Item && r.Rater == 0 && n.Rater == 1 {
			a, b = append(a, r.Value), append(b, n.Value)
		}
	}
	return a, b
}

// ReadRatingSets reads a long-format ratings file (ReadLongRatings) into
// one rating set per question, for Krippendorff's α at level: text
// categories without their order (categories) are an error at any level
// but nominal, naming where the first one stands.
func ReadRatingSets(path string, categories []string, level string) ([]rows.RatingSet, error) {
	lr, err := ReadLongRatings(path, categories)
	if err != nil {
		return nil, err
	}
	var sets []rows.RatingSet
	for _, q := range lr.Questions {
		if q.Labels != nil && !q.Ordered && level != "nominal" {
			e := *q.FirstText
			e.Expected += fmt.Sprintf(" (--level %s; text categories need --level nominal, or their order in --categories %s)",
				level, strings.Join(q.Labels, ","))
			return nil, &e
		}
		a, b := q.Pairs()
		sets = append(sets, rows.RatingSet{Question: q.Name, Units: q.Units(), Items: len(q.Items), Raters: len(q.Raters), A: a, B: b,
			Unordered: q.Labels != nil && !q.Ordered})
	}
	return sets, nil
}
