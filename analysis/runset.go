package analysis

import (
	"iter"
	"math"

	"github.com/gymlens/gymlens/ingest/rows"
)

// RunSet is runs with their active tasks and judgments, read by index: a
// slice of rows (RunSlice), or runs whose tasks are kept encoded and
// decoded a run at a time (PackedRuns), for a warehouse whose tasks as
// rows would not fit in memory.
type RunSet interface {
	Len() int
	// Run is run i with its tasks. The row and its tasks may be reused
	// by the next call of Run: keep an index, not the row.
	Run(i int) *rows.RunRow
}

// RunSlice is a RunSet of rows held as they are.
type RunSlice []rows.RunRow

func (s RunSlice) Len() int               { return len(s) }
func (s RunSlice) Run(i int) *rows.RunRow { return &s[i] }

// PackedRuns keeps runs' tasks and judgments compactly: every number a
// code into a dictionary of the distinct values (a byte each while there
// are at most 256 of them, as judges' scales have), every name a code
// into the names seen. Run decodes a run's tasks as they were added, to
// the bit. The runs themselves (Runs) are kept as rows without tasks:
// Add appends one, or the owner of the rows sets Runs once AddTasks has
// been given every run's tasks, in order.
type PackedRuns struct {
	Runs []rows.RunRow // without their tasks
	// Per run (and one past the last): where its tasks, its judgments
	// and its judgments' values start.
	taskAt, judgeAt, numAt []uint32
	// Per task: name, depths, which rules are set (a bit each), how many
	// judgments; its weight and three rules, four per task, in taskNums.
	name, expected, chosen, ruleSet, judgments, taskNums codes
	// Per judgment: kind (0 TC, 1 TR-J) and judge; its values, four for
	// TC and five for TR-J, in nums.
	kind, judge, nums codes
	custom            map[int][]rows.CustomJudgment // by task
	names             dict[string]
	values            dict[uint64] // the numbers' bits
	// The decoded run, reused.
	cur   int
	row   rows.RunRow
	tasks []rows.TaskRow
	tcs   []rows.TCJudgment
	trjs  []rows.TRJJudgment
}

// NewPackedRuns makes an empty PackedRuns.
func NewPackedRuns() *PackedRuns {
	return &PackedRuns{taskAt: []uint32{0}, judgeAt: []uint32{0}, numAt: []uint32{0},
		custom: map[int][]rows.CustomJudgment{}, cur: -1}
}

func (p *PackedRuns) Len() int { return len(p.Runs) }

// Add appends r, keeping its tasks encoded and r itself without them.
func (p *PackedRuns) Add(r rows.RunRow) {
	p.AddTasks(r.Tasks)
	r.Tasks = nil
	p.Runs = append(p.Runs, r)
}

// AddTasks encodes the tasks of the next run.
func (p *PackedRuns) AddTasks(tasks []rows.TaskRow) {
	p.cur = -1
	for _, t := range tasks {
		if len(t.Custom) > 0 {
			p.custom[p.name.len()] = t.Custom
		}
		p.name.add(p.nameOf(t.Task))
		p.expected.add(p.nameOf(t.Expected))
		p.chosen.add(p.nameOf(t.Chosen))
		var set uint32
		for k, b := range t.RuleSet {
			if b {
				set |= 1 << k
			}
		}
		p.ruleSet.add(set)
		p.judgments.add(uint32(len(t.TC) + len(t.TRJ)))
		p.taskNums.add(p.valueOf(t.Weight))
		for _, v := range t.Rules {
			p.taskNums.add(p.valueOf(v))
		}
		for _, j := range t.TC {
			p.judgment(0, j.Judge, j.Correctness, j.Grounding, j.Completeness, j.ArtifactQ)
		}
		for _, j := range t.TRJ {
			p.judgment(1, j.Judge, j.Scores[:]...)
		}
	}
	p.taskAt = append(p.taskAt, uint32(p.name.len()))
	p.judgeAt = append(p.judgeAt, uint32(p.kind.len()))
	p.numAt = append(p.numAt, uint32(p.nums.len()))
}

func (p *PackedRuns) judgment(kind uint32, judge string, v ...float64) {
	p.kind.add(kind)
	p.judge.add(p.nameOf(judge))
	for _, x := range v {
		p.nums.add(p.valueOf(x))
	}
}

func (p *PackedRuns) nameOf(s string) uint32 { return p.names.of(s) }

func (p *PackedRuns) valueOf(v float64) uint32 { return p.values.of(math.Float64bits(v)) }

func (p *PackedRuns) nameAt(c uint32) string   { return p.names.values[c] }
func (p *PackedRuns) valueAt(c uint32) float64 { return math.Float64frombits(p.values.values[c]) }

// Run decodes run i with its tasks; the row is reused by the next call
// for another run.
func (p *PackedRuns) Run(i int) *rows.RunRow {
	if i == p.cur {
		return &p.row
	}
	p.cur, p.row = i, p.Runs[i]
	p.tasks, p.tcs, p.trjs = p.tasks[:0], p.tcs[:0], p.trjs[:0]
	// The judgments first, so that the tasks' slices of them stay put.
	at := int(p.numAt[i])
	for j := int(p.judgeAt[i]); j < int(p.judgeAt[i+1]); j++ {
		judge := p.nameAt(p.judge.get(j))
		v := func(k int) float64 { return p.valueAt(p.nums.get(at + k)) }
		if p.kind.get(j) == 0 {
			p.tcs = append(p.tcs, rows.TCJudgment{Judge: judge, Correctness: v(0), Grounding: v(1), Completeness: v(2), ArtifactQ: v(3)})
			at += 4
		} else {
			p.trjs = append(p.trjs, rows.TRJJudgment{Judge: judge, Scores: [5]float64{v(0), v(1), v(2), v(3), v(4)}})
			at += 5
		}
	}
	j, tc, trj := int(p.judgeAt[i]), 0, 0
	for t := int(p.taskAt[i]); t < int(p.taskAt[i+1]); t++ {
		task := rows.TaskRow{Task: p.nameAt(p.name.get(t)), Expected: p.nameAt(p.expected.get(t)), Chosen: p.nameAt(p.chosen.get(t)),
			Weight: p.valueAt(p.taskNums.get(4 * t)), Custom: p.custom[t]}
		set := p.ruleSet.get(t)
		for k := range task.Rules {
			task.Rules[k], task.RuleSet[k] = p.valueAt(p.taskNums.get(4*t+1+k)), set&(1<<k) != 0
		}
		a, b := tc, trj
		for end := j + int(p.judgments.get(t)); j < end; j++ {
			if p.kind.get(j) == 0 {
				tc++
			} else {
				trj++
			}
		}
		if tc > a {
			task.TC = p.tcs[a:tc:tc]
		}
		if trj > b {
			task.TRJ = p.trjs[b:trj:trj]
		}
		p.tasks = append(p.tasks, task)
	}
	p.row.Tasks = nil
	if len(p.tasks) > 0 {
		p.row.Tasks = p.tasks
	}
	return &p.row
}

// codes is a column of whole numbers stored in the fewest bytes each
// that hold the largest so far: one, two or four.
type codes struct {
	b1  []uint8
	b2  []uint16
	b4  []uint32
	wid int // 0 or 1: b1; 2: b2; 4: b4
}

func (c *codes) len() int {
	switch c.wid {
	case 2:
		return len(c.b2)
	case 4:
		return len(c.b4)
	}
	return len(c.b1)
}

func (c *codes) add(v uint32) {
	if v > math.MaxUint8 && c.wid <= 1 {
		c.b2 = make([]uint16, len(c.b1), 2*len(c.b1)+1)
		for i, x := range c.b1 {
			c.b2[i] = uint16(x)
		}
		c.b1, c.wid = nil, 2
	}
	if v > math.MaxUint16 && c.wid == 2 {
		c.b4 = make([]uint32, len(c.b2), 2*len(c.b2)+1)
		for i, x := range c.b2 {
			c.b4[i] = uint32(x)
		}
		c.b2, c.wid = nil, 4
	}
	switch c.wid {
	case 2:
		c.b2 = append(c.b2, uint16(v))
	case 4:
		c.b4 = append(c.b4, v)
	default:
		c.b1 = append(c.b1, uint8(v))
	}
}

func (c *codes) get(i int) uint32 {
	switch c.wid {
	case 2:
		return uint32(c.b2[i])
	case 4:
		return c.b4[i]
	}
	return uint32(c.b1[i])
}

// dict numbers the distinct values it is given, in the order first
// given.
type dict[T comparable] struct {
	values []T
	code   map[T]uint32
}

func (d *dict[T]) of(v T) uint32 {
	k, ok := d.code[v]
	if !ok {
		if d.code == nil {
			d.code = map[T]uint32{}
		}
		k = uint32(len(d.values))
		d.values = append(d.values, v)
		d.code[v] = k
	}
	return k
}

// column is a column of values kept as codes into a dict.
type column[T comparable] struct {
	codes
	dict[T]
}

func (c *column[T]) add(v T) { c.codes.add(c.dict.of(v)) }

func (c *column[T]) at(i int) T { return c.values[c.get(i)] }

// PackedRatings keeps human ratings as columns of codes, a few bytes a
// rating: names, values, days and lines each a code into the distinct
// ones. All gives them back as rows, in the order added, to the bit.
type PackedRatings struct {
	str     [9]column[string] // rater, question, run, task, item, condition, scenario, configuration, file
	value   column[uint64]    // the value's bits
	day     column[int]
	line    codes       // the line itself: nearly every rating has its own
	farLine map[int]int // lines a code cannot hold (negative or past 2³²)
	n       int
}

// Add appends a rating.
func (p *PackedRatings) Add(g *rows.RatingRow) {
	for k, s := range [9]string{g.Rater, g.Question, g.RunID, g.Task, g.Item, g.Condition, g.Scenario, g.ConfigID, g.File} {
		p.str[k].add(s)
	}
	p.value.add(math.Float64bits(g.Value))
	p.day.add(g.Day)
	if g.Line >= 0 && g.Line <= math.MaxUint32 {
		p.line.add(uint32(g.Line))
	} else {
		if p.farLine == nil {
			p.farLine = map[int]int{}
		}
		p.farLine[p.n] = g.Line
		p.line.add(0)
	}
	p.n++
}

// Len is how many ratings were added.
func (p *PackedRatings) Len() int { return p.n }

// All yields every rating, in the order added; the row yielded is reused.
func (p *PackedRatings) All() iter.Seq[*rows.RatingRow] {
	return func(yield func(*rows.RatingRow) bool) {
		var g rows.RatingRow
		for i := range p.n {
			s := func(k int) string { return p.str[k].at(i) }
			g = rows.RatingRow{Rater: s(0), Question: s(1), Value: math.Float64frombits(p.value.at(i)), RunID: s(2), Task: s(3), Item: s(4),
				Day: p.day.at(i), Condition: s(5), Scenario: s(6), ConfigID: s(7), File: s(8), Line: int(p.line.get(i))}
			if l, ok := p.farLine[i]; ok {
				g.Line = l
			}
			if !yield(&g) {
				return
			}
		}
	}
}

// RatingsOf yields the ratings of a slice.
func RatingsOf(ratings []rows.RatingRow) iter.Seq[*rows.RatingRow] {
	return func(yield func(*rows.RatingRow) bool) {
		for i := range ratings {
			if !yield(&ratings[i]) {
				return
			}
		}
	}
}

// Where are the ratings keep keeps, as rows.
func (p *PackedRatings) Where(keep func(*rows.RatingRow) bool) []rows.RatingRow {
	var out []rows.RatingRow
	for g := range p.All() {
		if keep == nil || keep(g) {
			out = append(out, *g)
		}
	}
	return out
}

// RunIDOf is run i's id, without decoding its tasks where the set can
// tell it alone (a RunID method, as RunSlice and PackedRuns have).
func RunIDOf(runs RunSet, i int) string {
	if s, ok := runs.(interface{ RunID(int) string }); ok {
		return s.RunID(i)
	}
	return runs.Run(i).RunID
}

// RunID is run i's id.
func (s RunSlice) RunID(i int) string { return s[i].RunID }

// RunID is run i's id, its tasks left encoded.
func (p *PackedRuns) RunID(i int) string { return p.Runs[i].RunID }
