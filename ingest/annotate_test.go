package ingest

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/ingest/runlog"
)

// A queue stores once, its answers replace per (item, annotator,
// question), and its answers (not its practice items') are read as
// ratings beside the ingested ones.
func TestQueueAnswers(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{smallCorpus(t)}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	q := rows.Queue{Name: "q", Kind: rows.QueueRatings, K: 2, Questions: []string{"trust", "tc"}, Source: "test", OverAssign: true}
	items := []rows.QueueItem{
		{Item: "r1", Pos: 0, RunID: "r1", Tutorial: true, Key: map[string]string{"trust": "4"}},
		{Item: "r1#mp_price", Pos: 1, RunID: "r1", Task: "mp_price", Context: "what the user saw"},
	}
	if err := w.CreateQueue(ctx, q, items); err != nil {
		t.Fatal(err)
	}
	if err := w.CreateQueue(ctx, q, items); err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("the same queue twice: %v", err)
	}
	if err := w.CreateQueue(ctx, rows.Queue{Name: "dup", Kind: rows.QueueRatings, K: 1, Questions: []string{"tc"}}, []rows.QueueItem{items[0], items[0]}); err == nil {
		t.Error("an item twice is stored")
	}
	gq, gi, err := w.Queue(ctx, "q")
	if err != nil || gq.K != 2 || strings.Join(gq.Questions, ",") != "trust,tc" || len(gi) != 2 || gi[0].Key["trust"] != "4" || gi[1].Context != "what the user saw" || !gi[0].Tutorial {
		t.Fatalf("read back: %+v %+v %v", gq, gi, err)
	}
	if _, _, err := w.Queue(ctx, "nope"); !errors.Is(err, rows.ErrNoQueue) {
		t.Errorf("missing queue: %v", err)
	}
	save := func(item, who string, trust, tc float64) {
		t.Helper()
		if err := w.SaveAnswers(ctx, "q", item, who, []rows.Answer{{Question: "trust", Value: trust}, {Question: "tc", Value: tc}}); err != nil {
			t.Fatal(err)
		}
	}
	save("r1", "alice", 4, 1)
	save("r1#mp_price", "alice", 3, 0.5)
	save("r1#mp_price", "alice", 3, 0.5) // again: nothing changes
	save("r1#mp_price", "alice", 5, 0.75)
	save("r1#mp_price", "bob", 4, 0.75)
	if err := w.SaveAnswers(ctx, "q", "r2", "alice", []rows.Answer{{Question: "tc", Value: 1}}); !errors.Is(err, rows.ErrNoQueue) {
		t.Errorf("an item not in the queue: %v", err)
	}
	as, err := w.Answers(ctx, "q")
	if err != nil || len(as) != 6 {
		t.Fatalf("answers: %d %v", len(as), err)
	}
	ratings, err := w.LoadRatings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range ratings {
		got = append(got, fmt.Sprintf("%s %s %s/%s %g %s:%d", g.Rater, g.Question, g.RunID, g.Task, g.Value, g.File, g.Line))
	}
	want := "ann1 trust r1/mp_price 4 " + ratings[0].File + ":2|alice tc r1/mp_price 0.75 annotate:q:2|alice trust r1/mp_price 5 annotate:q:2|bob tc r1/mp_price 0.75 annotate:q:2|bob trust r1/mp_price 4 annotate:q:2"
	if strings.Join(got, "|") != want {
		t.Errorf("ratings:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	// Twenty annotators at once (the queue allows more than k): every
	// answer is kept.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- w.SaveAnswers(ctx, "q", "r1#mp_price", fmt.Sprintf("a%02d", i), []rows.Answer{{Question: "trust", Value: float64(1 + i%5)}, {Question: "tc", Value: math.NaN(), Choice: ""}})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if as, _ := w.Answers(ctx, "q"); len(as) != 6+40 {
		t.Errorf("after 20 annotators at once: %d answers, want 46", len(as))
	}
}

// A warehouse open read-only takes no queue and no answer.
func TestQueueNeedsWritable(t *testing.T) {
	w := sampleWarehouse(t)
	err := w.CreateQueue(ctx, rows.Queue{Name: "q", Kind: rows.QueueRatings, K: 1, Questions: []string{"tc"}}, []rows.QueueItem{{Item: "x"}})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("create: %v", err)
	}
	if err := w.SaveAnswers(ctx, "q", "x", "a", nil); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("save: %v", err)
	}
}

// PARE's tutorial samples (the fixture, as PARE wrote it) become queue
// items with their correct decision as the key, and nothing that anchors.
func TestPAREQueueItems(t *testing.T) {
	w := openTemp(t)
	if _, err := w.Ingest(ctx, []string{filepath.Join("pare", "testdata", "tutorial_samples.parquet")}, IngestOptions{}); err != nil {
		t.Fatal(err)
	}
	items, err := w.PAREQueueItems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 6 {
		t.Fatalf("%d items, want the fixture's 6", len(items))
	}
	samples, _, _ := w.LoadPARESamples(ctx)
	for i, it := range items {
		s := samples[i]
		if it.Sample != s.SampleID || it.Item != s.SampleID || it.Context == "" {
			t.Errorf("item %d: %+v", i, it)
		}
		if it.Tutorial && it.Key[rows.PAREQuestion] != s.Correct {
			t.Errorf("item %s: key %v, correct decision %q", it.Item, it.Key, s.Correct)
		}
	}
	// Answers in a PARE queue are read as annotations of the samples.
	for i := range items {
		items[i].Pos, items[i].Tutorial = i, false
	}
	if err := w.CreateQueue(ctx, rows.Queue{Name: "p", Kind: rows.QueuePARE, K: 1, Questions: []string{rows.PAREQuestion}}, items); err != nil {
		t.Fatal(err)
	}
	if err := w.SaveAnswers(ctx, "p", items[0].Item, "hum", []rows.Answer{{Question: rows.PAREQuestion, Value: math.NaN(), Choice: "reject"}}); err != nil {
		t.Fatal(err)
	}
	samples, _, _ = w.LoadPARESamples(ctx)
	if samples[0].Humans["hum"] != "reject" {
		t.Errorf("the queue's decision is not an annotation: %+v", samples[0])
	}
}

// A sheet of `annotate sample` reads as items and questions; a filled-in
// value makes a practice item with its key; a bad sheet names the file,
// line and field.
func TestReadAnnotationSheet(t *testing.T) {
	dir := t.TempDir()
	good := write(t, filepath.Join(dir, "s.csv"), "rater,question,value,run_id,task,stratum,context\n"+
		",trust,,r1,t1,,saw a\n,tc,,r1,t1,,saw a\nkey,trust,4,r2,,,saw b\n,tc,,r2,,,saw b\n,trust,,'-r3,t2,,\"saw, c\"\n")
	qs, items, err := runlog.ReadAnnotationSheet(good)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(qs, ",") != "trust,tc" || len(items) != 3 {
		t.Fatalf("%v %+v", qs, items)
	}
	if items[0].Item != "r1#t1" || items[0].Tutorial || items[1].Item != "r2" || !items[1].Tutorial || items[1].Key["trust"] != "4" || items[2].RunID != "-r3" || items[2].Context != "saw, c" {
		t.Errorf("items: %+v", items)
	}
	for name, c := range map[string]struct{ text, want string }{
		"norun.csv":   {"rater,question,value\n,trust,\n", `norun.csv:1: field "run_id": required column is missing`},
		"empty.csv":   {"question,run_id,task\ntrust,,t1\n", "empty.csv:2:"},
		"keys.csv":    {"question,run_id,value\ntrust,r1,4\ntrust,r1,5\n", "two keys"},
		"nothing.csv": {"question,run_id\n", "no items"},
	} {
		p := write(t, filepath.Join(dir, name), c.text)
		_, _, err := runlog.ReadAnnotationSheet(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	if _, _, err := runlog.ReadAnnotationSheet(filepath.Join(dir, "missing.csv")); err == nil {
		t.Error("a missing sheet reads")
	}
}
