package reports

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

// WriteFileAtomic writes a file whole or not at all: write fills a
// temporary file beside path, which then takes path's place (mode 0644).
// On an error nothing is left behind and an old file at path is kept.
func WriteFileAtomic(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gymlens-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriter(tmp)
	if err := write(bw); err != nil {
		tmp.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// WriteFigure renders fig in each format into dir (made if need be) as
// NAME.FORMAT, each file whole or not at all, and returns their paths.
func WriteFigure(fig *plots.Figure, dir string, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	var paths []string
	for _, f := range formats {
		b, err := fig.Render(f)
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, fig.Name+"."+f)
		if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

// WriteAnnotationSheet writes a ratings CSV to fill in: one row per item
// and question, rater and value empty, with the item's stratum and what
// the user saw (history, by run and task). Cells that a spreadsheet would
// run as formulas are neutralised (SpreadsheetSafe); the ratings reader
// takes the guard off again.
func WriteAnnotationSheet(path string, items []analysis.SampleItem, questions []string, history map[[2]string]string) error {
	err := WriteFileAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"rater", "question", "value", "run_id", "task", "stratum", "context"})
		for _, it := range items {
			for _, q := range questions {
				cw.Write(SpreadsheetSafe([]string{"", q, "", it.Run.RunID, it.Task, it.Stratum, history[[2]string{it.Run.RunID, it.Task}]}))
			}
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	return nil
}

// WriteQueueExport writes a queue's answers (not those to its tutorial
// items) as a CSV: a PARE queue in PARE's annotation columns
// (annotation_id, sample_id, annotator_id, human_decision, timestamp),
// which `gymlens ingest` and PARE read back; a ratings queue in the
// ratings columns (rater, question, value, run_id, task, answered_at).
// Rows come by item, annotator and question. It returns the rows written.
func WriteQueueExport(path string, st *analysis.QueueState, answers []rows.Answer) (int, error) {
	tutorial := map[string]bool{}
	items := map[string]rows.QueueItem{}
	for _, it := range st.Items {
		tutorial[it.Item] = it.Tutorial
		items[it.Item] = it
	}
	n := 0
	err := WriteFileAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if st.Queue.Kind == rows.QueuePARE {
			cw.Write([]string{"annotation_id", "sample_id", "annotator_id", "human_decision", "timestamp"})
		} else {
			cw.Write([]string{"rater", "question", "value", "run_id", "task", "answered_at"})
		}
		for _, a := range answers {
			if tutorial[a.Item] || a.Question == analysis.CommentQuestion || analysis.IsSkip(a) {
				continue // in the notes file
			}
			it := items[a.Item]
			at := a.At.UTC().Format(time.RFC3339Nano)
			if st.Queue.Kind == rows.QueuePARE {
				cw.Write(SpreadsheetSafe([]string{st.Queue.Name + ":" + a.Item + ":" + a.Annotator, it.Sample, a.Annotator, a.Choice, at}))
			} else {
				cw.Write(SpreadsheetSafe([]string{a.Annotator, a.Question, analysis.AnswerText(a), it.RunID, it.Task, at}))
			}
			n++
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return 0, fmt.Errorf("--out: %w", err)
	}
	return n, writeQueueNotes(QueueNotesPath(path), st, answers)
}

// QueueNotesPath is where an export of path writes the annotators'
// comments and skips: NAME.notes.csv beside NAME.csv.
func QueueNotesPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".notes.csv"
}

// writeQueueNotes writes the comments and skips ("cannot judge") of a
// queue's answers, one row per item and annotator that has either, when
// any has: neither is a rating or a decision, so they stay out of the
// export the ratings and PARE's readers read back.
func writeQueueNotes(path string, st *analysis.QueueState, answers []rows.Answer) error {
	type note struct {
		skipped []string
		comment string
		at      time.Time
	}
	notes := map[[2]string]*note{}
	var order [][2]string
	for _, a := range answers {
		if a.Question != analysis.CommentQuestion && !analysis.IsSkip(a) {
			continue
		}
		k := [2]string{a.Item, a.Annotator}
		x := notes[k]
		if x == nil {
			x = &note{}
			notes[k], order = x, append(order, k)
		}
		if a.Question == analysis.CommentQuestion {
			x.comment = a.Choice
		} else {
			x.skipped = append(x.skipped, a.Question)
		}
		if a.At.After(x.at) {
			x.at = a.At
		}
	}
	if len(order) == 0 {
		return nil
	}
	items := map[string]rows.QueueItem{}
	for _, it := range st.Items {
		items[it.Item] = it
	}
	err := WriteFileAtomic(path, func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"queue", "item", "run_id", "task", "sample_id", "practice", "annotator", "skipped", "comment", "answered_at"})
		for _, k := range order {
			it, x := items[k[0]], notes[k]
			cw.Write(SpreadsheetSafe([]string{st.Queue.Name, k[0], it.RunID, it.Task, it.Sample, strconv.FormatBool(it.Tutorial), k[1],
				strings.Join(x.skipped, " "), x.comment, x.at.UTC().Format(time.RFC3339Nano)}))
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return fmt.Errorf("--out: the notes: %w", err)
	}
	return nil
}
