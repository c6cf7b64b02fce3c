package runlog

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
)

// ReadAnnotationSheet reads a sheet that `gymlens annotate sample` wrote
// (columns rater, question, value, run_id, task, stratum, context; run_id
// and question required) as queue items, in the sheet's order, and the
// questions it asks, in order of first appearance. A row whose value is
// filled in is an answer key: its item becomes a tutorial item, shown
// first, whose answers are compared with the key and left out of the
// agreement. A malformed row is an error naming the file, line and field.
func ReadAnnotationSheet(path string) ([]string, []rows.QueueItem, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	cr := csv.NewReader(SkipBOM(f))
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, nil, &Error{File: path, Line: 1, Msg: "cannot read the header: " + err.Error()}
	}
	for i := range head {
		head[i] = strings.TrimSpace(head[i])
	}
	if e := CheckHeader(path, head); e != nil {
		return nil, nil, e
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, c := range []string{"question", "run_id"} {
		if _, ok := col[c]; !ok {
			return nil, nil, &Error{File: path, Line: 1, Field: c, Msg: "required column is missing (an annotation sheet has rater, question, value, run_id, task, stratum, context)"}
		}
	}
	var questions []string
	var items []rows.QueueItem
	at := map[string]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, nil, &Error{File: path, Line: pe.Line, Column: pe.Column, Msg: "malformed CSV: " + pe.Err.Error()}
			}
			return nil, nil, &Error{File: path, Msg: err.Error()}
		}
		get := func(c string) string {
			if i, ok := col[c]; ok && i < len(rec) {
				return unneutralise(strings.TrimSpace(rec[i]))
			}
			return ""
		}
		q, run, task := get("question"), get("run_id"), get("task")
		for c, v := range map[string]string{"question": q, "run_id": run} {
			if v == "" {
				_, column := cr.FieldPos(col[c])
				return nil, nil, &Error{File: path, Line: line, Column: column, Field: c, Msg: "empty"}
			}
		}
		if !slices.Contains(questions, q) {
			questions = append(questions, q)
		}
		id := rows.ItemID(run, task)
		i, ok := at[id]
		if !ok {
			i = len(items)
			at[id] = i
			items = append(items, rows.QueueItem{Item: id, RunID: run, Task: task, Context: get("context")})
		}
		if v := get("value"); v != "" {
			it := &items[i]
			if it.Key == nil {
				it.Key = map[string]string{}
			}
			if old, dup := it.Key[q]; dup && old != v {
				return nil, nil, &Error{File: path, Line: line, Field: "value", Msg: fmt.Sprintf("item %s has two keys for %s (%s and %s)", id, q, old, v)}
			}
			it.Key[q] = v
			it.Tutorial = true
		}
	}
	if len(items) == 0 {
		return nil, nil, &Error{File: path, Msg: "no items: the sheet has a header only"}
	}
	return questions, items, nil
}
