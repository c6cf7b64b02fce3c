package reports

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// QueueStore is where annotation queues live (ingest.Warehouse is one).
type QueueStore interface {
	Queue(ctx context.Context, name string) (rows.Queue, []rows.QueueItem, error)
	Answers(ctx context.Context, queue string) ([]rows.Answer, error)
	CreateQueue(ctx context.Context, q rows.Queue, items []rows.QueueItem) error
	PAREQueueItems(ctx context.Context) ([]rows.QueueItem, error)
}

// MakeQueue puts the items in their order (practice items first), checks
// the queue and stores it; a PARE queue without items takes the PARE
// samples ingested. It returns a line saying what was made.
func MakeQueue(ctx context.Context, st QueueStore, name string, q rows.Queue, items []rows.QueueItem) (string, error) {
	if q.Kind == rows.QueuePARE && items == nil {
		var err error
		if items, err = st.PAREQueueItems(ctx); err != nil {
			return "", err
		}
		if len(items) == 0 {
			return "", analysis.NoDataf("no PARE annotation sample in %s: ingest the samples (Parquet) first", name)
		}
	}
	analysis.OrderQueue(items)
	if q.MaxAnnotators == 0 {
		q.MaxAnnotators = rows.DefaultMaxAnnotators
	}
	if err := analysis.CheckQueue(q, items); err != nil {
		return "", err
	}
	if err := st.CreateQueue(ctx, q, items); err != nil {
		return "", err
	}
	tut := 0
	for _, it := range items {
		if it.Tutorial {
			tut++
		}
	}
	each := fmt.Sprintf("%d annotators each", q.K)
	if q.OverAssign {
		each = fmt.Sprintf("%d annotators each (or more)", q.K)
	}
	return fmt.Sprintf("queue %s in %s: %d items (%d practice), %s, at most %d annotators, questions %s; annotate at /annotate/%s of `gymlens serve`",
		q.Name, name, len(items)-tut, tut, each, q.MaxAnnotators, strings.Join(q.Questions, ", "), url.PathEscape(q.Name)), nil
}

// QueueFrom is the queue q (its name, k and limits) that `annotate
// queue` makes from one source: the sheet of `annotate sample` (its
// questions and items, read by readSheet) or the PARE samples ingested
// (pare; the items left nil for MakeQueue). No source or both, and a
// queue that could not be stored (analysis.CheckQueue), are usage
// errors, found before the warehouse is opened.
func QueueFrom(q rows.Queue, sheet string, pare bool, readSheet func(path string) ([]string, []rows.QueueItem, error)) (rows.Queue, []rows.QueueItem, error) {
	if (sheet == "") == !pare {
		return q, nil, analysis.Optionf("annotate queue: give one of --sheet FILE.csv or --pare")
	}
	q.Kind, q.Questions, q.Source = rows.QueuePARE, []string{rows.PAREQuestion}, "the PARE samples ingested"
	var items []rows.QueueItem
	if sheet != "" {
		var err error
		q.Kind, q.Source = rows.QueueRatings, "sheet "+sheet
		if q.Questions, items, err = readSheet(sheet); err != nil {
			return q, nil, err
		}
	}
	return q, items, analysis.CheckQueue(q, []rows.QueueItem{{}})
}

// ExportQueue writes a queue's answers to out (WriteQueueExport) and
// returns the rows written.
func ExportQueue(ctx context.Context, st QueueStore, queue, out string) (int, error) {
	q, items, err := st.Queue(ctx, queue)
	if err != nil {
		return 0, err
	}
	answers, err := st.Answers(ctx, queue)
	if err != nil {
		return 0, err
	}
	return WriteQueueExport(out, analysis.NewQueueState(q, items, answers), answers)
}

// Histories gives what the user saw of each item drawn (run → its tasks;
// "" for the run): judge.VisibleHistories over the warehouse.
type Histories func(ctx context.Context, need map[string][]string) (map[[2]string]string, error)

// DrawSample draws a stratified sample of the runs opt selects
// (analysis.StratifiedSample), with what the user saw of each item: what
// `annotate sample` writes as a sheet or a queue, and the viewer's
// new-queue form draws. It returns the items, the strata and the
// histories.
func DrawSample(ctx context.Context, w Warehouse, opt Options, unit, by string, n int, seed uint64, histories Histories) ([]analysis.SampleItem, int, map[[2]string]string, error) {
	ds, err := NewDataset(ctx, w, opt)
	if err != nil {
		return nil, 0, nil, err
	}
	runs, err := ds.Selected()
	if err != nil {
		return nil, 0, nil, err
	}
	tasks, err := ds.SelectedTaskNames()
	if err != nil {
		return nil, 0, nil, err
	}
	chosen, strata, err := analysis.StratifiedSampleOf(runs, tasks, unit, by, n, seed)
	if err != nil {
		return nil, 0, nil, err
	}
	history, err := histories(ctx, analysis.ByRun(chosen))
	return chosen, strata, history, err
}

// SelectedRuns are the ids of the runs of st (named name) that the
// command's --where selects (a judge run's); without --where, nil (every
// run) and st is not read.
func (a *Args) SelectedRuns(ctx context.Context, st Store, name string) (map[string]bool, error) {
	if len(a.List("where")) == 0 {
		return nil, nil
	}
	where, err := a.Where(nil)
	if err != nil {
		return nil, err
	}
	ds, err := NewDataset(ctx, st, Options{Name: name, Where: where, Keep: KeepValues})
	if err != nil {
		return nil, err
	}
	runs, err := ds.Selected()
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(runs))
	for _, r := range runs {
		out[r.RunID] = true
	}
	return out, nil
}

// AnnotationSample is what `gymlens annotate sample` asks: a stratified
// sample of N units (task or run) by a dimension, written as a sheet to
// fill in (Sheet), stored as an annotation queue (Queue.Name), or both.
type AnnotationSample struct {
	N, Tutorial int
	Unit, By    string
	Seed        uint64
	Questions   []string
	Sheet       string     // "" for no sheet
	Queue       rows.Queue // Name "" for no queue; K and the limits as given
}

// Check refuses, before anything is read, a request that makes nothing
// (no sheet, no queue), one without questions, and a queue that could
// not be stored (analysis.CheckQueue): each a usage error.
func (req AnnotationSample) Check() error {
	if req.Sheet == "" && req.Queue.Name == "" {
		return analysis.Optionf("annotate sample: give --out FILE.csv (a sheet to fill in), --queue NAME (a queue to annotate in gymlens serve), or both")
	}
	if len(req.Questions) == 0 {
		return analysis.Optionf("--questions: name at least one question")
	}
	if req.Queue.Name == "" {
		return nil
	}
	q := req.Queue
	q.Kind, q.Questions = rows.QueueRatings, req.Questions
	return analysis.CheckQueue(q, []rows.QueueItem{{}})
}

// WriteAnnotationSample draws the sample from w, writes the sheet and
// makes the queue the request names, and returns a line for each made.
// A queue's store is st (w itself for a warehouse that holds queues).
func WriteAnnotationSample(ctx context.Context, w Warehouse, st QueueStore, opt Options, req AnnotationSample, histories Histories) ([]string, error) {
	chosen, strata, history, err := DrawSample(ctx, w, opt, req.Unit, req.By, req.N, req.Seed, histories)
	if err != nil {
		return nil, err
	}
	var said []string
	if req.Sheet != "" {
		if err := WriteAnnotationSheet(req.Sheet, chosen, req.Questions, history); err != nil {
			return nil, err
		}
		said = append(said, fmt.Sprintf("wrote %s: %d %ss × %d questions from %d strata; fill in rater and value, then `gymlens ingest %s`",
			req.Sheet, len(chosen), req.Unit, len(req.Questions), strata, req.Sheet))
	}
	if req.Queue.Name == "" {
		return said, nil
	}
	items, err := analysis.SampleQueueItems(chosen, history, req.Tutorial)
	if err != nil {
		return said, err
	}
	q := req.Queue
	q.Kind, q.Questions = rows.QueueRatings, req.Questions
	q.Source = fmt.Sprintf("gymlens annotate sample -n %d --unit %s --by %q --seed %d", req.N, req.Unit, req.By, req.Seed)
	line, err := MakeQueue(ctx, st, opt.Name, q, items)
	if err != nil {
		return said, err
	}
	return append(said, line), nil
}
