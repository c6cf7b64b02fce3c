package pare

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// Decisions are the decisions PARE's user and annotators make.
var Decisions = rows.PAREDecisions

// Sample is a PARE annotation sample: a decision point shown to humans,
// with the simulated user's decision and, when known, the right one.
type Sample struct {
	ID, Scenario, Proactive, User, Decision, Correct, Proposal string
	Run                                                        *int64
	Final, Tutorial                                            *bool
	File                                                       int // the file's id in the warehouse
}

// Annotation is one human's decision on a sample (a row of an annotation
// CSV); Extra holds the columns PARE's schema does not name.
type Annotation struct {
	ID, Sample, Annotator, Decision string
	Extra                           json.RawMessage
	File, Line                      int
}

// ReadSamples reads PARE annotation samples from Parquet (arrow-go):
// sample_id and user_agent_decision are required; the other columns of
// PARE's sample schema are kept when present. A problem is a
// *runlog.Error naming the file and the column (and row).
func ReadSamples(ctx context.Context, path string, fileID int) ([]Sample, error) {
	bad := func(field, msg string) ([]Sample, error) {
		return nil, &runlog.Error{File: path, Field: field, Msg: msg}
	}
	f, err := os.Open(path)
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
	tb, err := fr.ReadTable(ctx)
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
	var out []Sample
	for row := 0; row < n; row++ {
		s := Sample{File: fileID}
		s.ID, _ = str("sample_id", row)
		s.Decision, _ = str("user_agent_decision", row)
		if s.ID == "" {
			return bad(fmt.Sprintf("sample_id (row %d)", row+1), "empty")
		}
		if !slices.Contains(Decisions, s.Decision) {
			return bad(fmt.Sprintf("user_agent_decision (row %d)", row+1), fmt.Sprintf("expected one of %s, found %q", strings.Join(Decisions, ", "), s.Decision))
		}
		s.Scenario, _ = str("scenario_id", row)
		s.Proactive, _ = str("proactive_model_id", row)
		s.User, _ = str("user_model_id", row)
		s.Correct, _ = str("correct_decision", row)
		s.Proposal, _ = str("agent_proposal", row)
		if v, ok := str("run_number", row); ok {
			var x int64
			if _, err := fmt.Sscan(v, &x); err == nil {
				s.Run = &x
			}
		}
		for name, dst := range map[string]**bool{"final_decision": &s.Final, "tutorial": &s.Tutorial} {
			if v, ok := str(name, row); ok {
				b := v == "true"
				*dst = &b
			}
		}
		out = append(out, s)
	}
	return out, nil
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

// ReadAnnotations reads a PARE annotation CSV: sample_id, annotator_id
// and human_decision are required, annotation_id is kept, any other column
// goes to Extra. A bad row goes to rowErr (naming file, line, column and
// field) and is left out; a problem with the whole file is the error.
func ReadAnnotations(path string, fileID int, rowErr func(*runlog.Error)) ([]Annotation, error) {
	f, err := runlog.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(runlog.SkipBOM(f))
	head, err := cr.Read()
	if err == nil {
		for i := range head {
			head[i] = strings.TrimSpace(head[i])
		}
		if e := runlog.CheckHeader(path, head); e != nil {
			return nil, e
		}
	}
	if err != nil {
		return nil, &runlog.Error{File: path, Line: 1, Msg: "cannot read the header: " + err.Error()}
	}
	var out []Annotation
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
				return nil, &runlog.Error{File: path, Line: pe.Line, Column: pe.Column, Msg: "malformed CSV: " + pe.Err.Error()}
			}
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		a := Annotation{File: fileID, Line: line}
		get := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		a.ID, a.Sample, a.Annotator, a.Decision = get("annotation_id"), get("sample_id"), get("annotator_id"), get("human_decision")
		for _, c := range AnnotationColumns {
			if get(c) == "" {
				_, column := cr.FieldPos(col[c])
				rowErr(&runlog.Error{File: path, Line: line, Column: column, Field: c, Msg: "empty"})
				goto next
			}
		}
		if !slices.Contains(Decisions, a.Decision) {
			_, column := cr.FieldPos(col["human_decision"])
			rowErr(&runlog.Error{File: path, Line: line, Column: column, Field: "human_decision",
				Expected: strings.Join(Decisions, ", "), Found: fmt.Sprintf("%q", a.Decision)})
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
				a.Extra, _ = json.Marshal(extra)
			}
			out = append(out, a)
		}
	next:
	}
	return out, nil
}
