package ingest

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// PAREDecisions are the decisions PARE's user and annotators make.
var PAREDecisions = []string{"accept", "reject", "gather_context"}

type pareSample struct {
	id, scenario, proactive, user, decision, correct, proposal string
	run                                                        *int64
	final, tutorial                                            *bool
	file                                                       int
}

type pareAnnotation struct {
	id, sample, annotator, decision string
	extra                           json.RawMessage
	file, line                      int
}

// readPARESamples reads PARE annotation samples from Parquet (arrow-go):
// sample_id and user_agent_decision are required; the other columns of
// PARE's sample schema are kept when present.
func (p *pass) readPARESamples(fs *fileState) error {
	p.bytes.Add(fs.Size)
	bad := func(field, msg string) error {
		return p.collect(&runlog.Error{File: fs.Path, Field: field, Msg: msg})
	}
	f, err := os.Open(fs.Path)
	if err != nil {
		return bad("", "cannot read: "+err.Error())
	}
	defer f.Close()
	pr, err := file.NewParquetReader(f)
	if err != nil {
		return bad("", "not a Parquet file: "+err.Error())
	}
	defer pr.Close()
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return bad("", err.Error())
	}
	tb, err := fr.ReadTable(p.ctx)
	if err != nil {
		return bad("", "cannot read the table: "+err.Error())
	}
	defer tb.Release()
	cols := map[string]*arrow.Chunked{}
	for i := 0; i < int(tb.NumCols()); i++ {
		cols[tb.Column(i).Name()] = tb.Column(i).Data()
	}
	for _, c := range []string{"sample_id", "user_agent_decision"} {
		if cols[c] == nil {
			return bad(c, "required column is missing (PARE's sample schema: sample_id, scenario_id, run_number, …, user_agent_decision)")
		}
	}
	n := int(tb.NumRows())
	str := func(name string, row int) (string, bool) {
		c := cols[name]
		if c == nil {
			return "", false
		}
		arr, off := locate(c, row)
		if arr.IsNull(off) {
			return "", false
		}
		switch a := arr.(type) {
		case *array.String:
			return a.Value(off), true
		case *array.LargeString:
			return a.Value(off), true
		}
		return fmt.Sprint(arr.GetOneForMarshal(off)), true
	}
	for row := 0; row < n; row++ {
		s := pareSample{file: fs.id}
		s.id, _ = str("sample_id", row)
		s.decision, _ = str("user_agent_decision", row)
		if s.id == "" {
			return bad(fmt.Sprintf("sample_id (row %d)", row+1), "empty")
		}
		if !slices.Contains(PAREDecisions, s.decision) {
			return bad(fmt.Sprintf("user_agent_decision (row %d)", row+1), fmt.Sprintf("expected one of %s, found %q", strings.Join(PAREDecisions, ", "), s.decision))
		}
		s.scenario, _ = str("scenario_id", row)
		s.proactive, _ = str("proactive_model_id", row)
		s.user, _ = str("user_model_id", row)
		s.correct, _ = str("correct_decision", row)
		s.proposal, _ = str("agent_proposal", row)
		if v, ok := str("run_number", row); ok {
			var x int64
			if _, err := fmt.Sscan(v, &x); err == nil {
				s.run = &x
			}
		}
		for name, dst := range map[string]**bool{"final_decision": &s.final, "tutorial": &s.tutorial} {
			if v, ok := str(name, row); ok {
				b := v == "true"
				*dst = &b
			}
		}
		p.pareSamples = append(p.pareSamples, s)
	}
	p.records.Add(int64(n))
	return nil
}

// locate finds row's array and offset in a chunked column.
func locate(c *arrow.Chunked, row int) (arrow.Array, int) {
	for _, ch := range c.Chunks() {
		if row < ch.Len() {
			return ch, row
		}
		row -= ch.Len()
	}
	return c.Chunks()[len(c.Chunks())-1], 0
}

// readPAREAnnotations reads a PARE annotation CSV: sample_id, annotator_id
// and human_decision are required, annotation_id is kept, any other column
// goes to extra.
func (p *pass) readPAREAnnotations(fs *fileState) error {
	p.bytes.Add(fs.Size)
	f, err := runlog.OpenRegular(fs.Path)
	if err != nil {
		return p.collect(err)
	}
	defer f.Close()
	cr := csv.NewReader(runlog.SkipBOM(f))
	head, err := cr.Read()
	if err == nil {
		for i := range head {
			head[i] = strings.TrimSpace(head[i])
		}
		if e := runlog.CheckHeader(fs.Path, head); e != nil {
			return p.collect(e)
		}
	}
	if err != nil {
		return p.collect(&runlog.Error{File: fs.Path, Line: 1, Msg: "cannot read the header: " + err.Error()})
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return p.collect(&runlog.Error{File: fs.Path, Line: pe.Line, Column: pe.Column, Msg: "malformed CSV: " + pe.Err.Error()})
			}
			return err
		}
		line, _ := cr.FieldPos(0)
		a := pareAnnotation{file: fs.id, line: line}
		get := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		a.id, a.sample, a.annotator, a.decision = get("annotation_id"), get("sample_id"), get("annotator_id"), get("human_decision")
		for _, c := range runlog.PAREAnnotationColumns {
			if get(c) == "" {
				_, column := cr.FieldPos(col[c])
				p.errs.Add(&runlog.Error{File: fs.Path, Line: line, Column: column, Field: c, Msg: "empty"})
				fs.rejected++
				goto next
			}
		}
		if !slices.Contains(PAREDecisions, a.decision) {
			_, column := cr.FieldPos(col["human_decision"])
			p.errs.Add(&runlog.Error{File: fs.Path, Line: line, Column: column, Field: "human_decision",
				Expected: strings.Join(PAREDecisions, ", "), Found: fmt.Sprintf("%q", a.decision)})
			fs.rejected++
			goto next
		}
		{
			extra := map[string]string{}
			for name, i := range col {
				if !slices.Contains([]string{"annotation_id", "sample_id", "annotator_id", "human_decision"}, name) && rec[i] != "" {
					extra[name] = rec[i]
				}
			}
			if len(extra) > 0 {
				a.extra, _ = json.Marshal(extra)
			}
			p.pareAnnots = append(p.pareAnnots, a)
			p.records.Add(1)
		}
	next:
	}
	return nil
}

// loadPAREAnnotations writes the samples and annotations read.
func (p *pass) loadPAREAnnotations() error {
	nul := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	if len(p.pareSamples) > 0 {
		if err := p.appendRows("pare_samples", func(a *duckdb.Appender) error {
			for _, s := range p.pareSamples {
				var run, final, tut any
				if s.run != nil {
					run = int32(*s.run)
				}
				if s.final != nil {
					final = *s.final
				}
				if s.tutorial != nil {
					tut = *s.tutorial
				}
				if err := a.AppendRow(s.id, nul(s.scenario), run, nul(s.proactive), nul(s.user), s.decision, final, tut,
					nul(s.correct), nul(s.proposal), int32(s.file)); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if len(p.pareAnnots) == 0 {
		return nil
	}
	return p.appendRows("pare_annotations", func(a *duckdb.Appender) error {
		for _, x := range p.pareAnnots {
			var extra any
			if len(x.extra) > 0 {
				extra = x.extra
			}
			if err := a.AppendRow(nul(x.id), x.sample, x.annotator, x.decision, extra, int32(x.file), int32(x.line)); err != nil {
				return err
			}
		}
		return nil
	})
}
