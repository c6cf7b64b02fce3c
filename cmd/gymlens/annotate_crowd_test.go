package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest"
	"github.com/gymlens/gymlens/serve"
)

// crowdNames is the crowd of the crowd tests.
const crowdNames = 10_000

// heapPeak samples the Go heap's live objects every millisecond while fn
// runs and returns the highest seen above what was live before, and the
// bytes fn allocated.
func heapPeak(fn func()) (peak, allocated uint64) {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	base, alloc0 := s[0].Value.Uint64(), s[1].Value.Uint64()
	var mu sync.Mutex
	high := base
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		x := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				metrics.Read(x)
				mu.Lock()
				high = max(high, x[0].Value.Uint64())
				mu.Unlock()
			}
		}
	}()
	fn()
	close(stop)
	<-done
	metrics.Read(s)
	return max(high, s[0].Value.Uint64()) - base, s[1].Value.Uint64() - alloc0
}

// The status page of a queue with 10,000 annotators: every one did the
// practice item, two did each other item (k = 2). Its time and Go heap
// stay those of a page of 100 annotators (they were 14-23 s and 630 MB
// when the page listed every annotator and paired them all); the same
// crowd on a queue that allows over-assignment (everyone on the items) is
// measured too.
func TestStatusPageWithACrowd(t *testing.T) {
	if testing.Short() {
		t.Skip("a crowd test: a queue of 10,000 annotators")
	}
	db := unratedWarehouse(t)
	for _, args := range [][]string{
		{"--queue", "crowd", "--max-annotators", "10000"},
		{"--queue", "open", "--max-annotators", "10000", "--over-assign"},
	} {
		args = append([]string{"--db", db, "annotate", "sample", "-n", "20", "--tutorial", "1", "--questions", "tc", "--k", "2"}, args...)
		if code, _, stderr := gymlens(t, args...); code != 0 {
			t.Fatal(stderr)
		}
	}
	ctx := context.Background()
	w, err := ingest.Open(ctx, db, ingest.OpenOptions{Viewer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The crowd's answers, written in one statement each (10,000 answers
	// through SaveAnswers one at a time take minutes): on "crowd", every
	// annotator the practice item (place 0) and annotators 2i-2 and 2i-1
	// item i; on "open", annotator n item 1 + n % 19.
	for _, fixture := range []string{
		`INSERT INTO annotation_answers SELECT 'crowd', i.item, 'annotator ' || lpad(n::VARCHAR, 5, '0'), 'tc', (n % 5) / 4, NULL, now()
			FROM range(?) r(n) JOIN annotation_items i ON i.queue = 'crowd' AND i.position = 0`,
		`INSERT INTO annotation_answers SELECT 'crowd', i.item, 'annotator ' || lpad(n::VARCHAR, 5, '0'), 'tc', (n % 5) / 4, NULL, now()
			FROM range(?) r(n) JOIN annotation_items i ON i.queue = 'crowd' AND i.position = 1 + n // 2 WHERE n < 38`,
		`INSERT INTO annotation_answers SELECT 'open', i.item, 'annotator ' || lpad(n::VARCHAR, 5, '0'), 'tc', (n % 5) / 4, NULL, now()
			FROM range(?) r(n) JOIN annotation_items i ON i.queue = 'open' AND i.position = 1 + n % 19`,
	} {
		if _, err := w.DB().ExecContext(ctx, fixture, crowdNames); err != nil {
			t.Fatal(err)
		}
	}
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	// httptest's requests name example.com.
	s, err := serve.New(ctx, w, serve.Options{Name: "w.duckdb", Bootstrap: opt, AllowedHosts: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	s.WaitPacking() // the runs packed behind the pages would count in the pages' heap
	measure := func(target string) (time.Duration, uint64, uint64, string) {
		var rec *httptest.ResponseRecorder
		var took time.Duration
		peak, alloc := heapPeak(func() {
			start := time.Now()
			rec = httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
			took = time.Since(start)
		})
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", target, rec.Code, rec.Body.String())
		}
		t.Logf("%s: %v, %d bytes, Go heap peak +%.1f MB, allocated %.1f MB", target, took, rec.Body.Len(), float64(peak)/1e6, float64(alloc)/1e6)
		return took, peak, alloc, rec.Body.String()
	}
	for range 2 {
		for _, target := range []string{"/annotate/crowd/status", "/annotate/crowd/status?page=100", "/annotate/open/status", "/annotate"} {
			_, peak, alloc, page := measure(target)
			if strings.HasPrefix(target, "/annotate/") && (strings.Count(page, "<td>annotator ") != serve.AnnotatorsPerPage ||
				!strings.Contains(page, "10000 of the 10000 the queue takes")) {
				t.Errorf("%s does not list 100 of the 10,000 annotators", target)
			}
			if strings.HasPrefix(target, "/annotate/crowd") && (peak > 16<<20 || alloc > 32<<20) {
				t.Errorf("%s: Go heap peak +%d bytes, %d allocated: it grows with the crowd", target, peak, alloc)
			}
		}
	}
}

// 200 annotators answering at once through the viewer: the item with
// k = 2 stores two of them and refuses the others with 409; the queue
// that takes at most 50 annotators stores 50 and refuses the rest with
// 409; nothing else fails.
func TestCrowdAnswersAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a crowd test: 200 annotators answering at once through a server")
	}
	db := unratedWarehouse(t)
	for _, args := range [][]string{{"--queue", "k2", "--k", "2"}, {"--queue", "cap", "--k", "2", "--max-annotators", "50", "--over-assign"}} {
		if code, _, stderr := gymlens(t, append([]string{"--db", db, "annotate", "sample", "-n", "5", "--questions", "tc"}, args...)...); code != 0 {
			t.Fatal(stderr)
		}
	}
	ctx := context.Background()
	w, err := ingest.Open(ctx, db, ingest.OpenOptions{Viewer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, items, err := w.Queue(ctx, "k2")
	if err != nil {
		t.Fatal(err)
	}
	opt := analysis.DefaultBootstrap
	opt.Resamples = 200
	s, err := serve.New(ctx, w, serve.Options{Name: "w.duckdb", Bootstrap: opt})
	if err != nil {
		t.Fatal(err)
	}
	base := newLocalServer(t, s)
	client := &http.Client{Timeout: time.Minute}
	type result struct {
		queue string
		code  int
		body  string
	}
	results := make(chan result, 400)
	var wg sync.WaitGroup
	for a := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, queue := range []string{"k2", "cap"} {
				body := fmt.Sprintf(`{"item": %q, "annotator": "annotator %03d", "answers": {"tc": 0.5}}`, items[0].Item, a)
				r, err := client.Post(base+"/api/annotate/"+queue+"/answers", "application/json", strings.NewReader(body))
				if err != nil {
					results <- result{queue, 0, err.Error()}
					continue
				}
				b, _ := io.ReadAll(r.Body)
				r.Body.Close()
				results <- result{queue, r.StatusCode, string(b)}
			}
		}()
	}
	wg.Wait()
	close(results)
	count := map[string]int{}
	for r := range results {
		count[fmt.Sprint(r.queue, " ", r.code)]++
		switch {
		case r.code == 409 && r.queue == "k2" && strings.Contains(r.body, "k = 2"):
		case r.code == 409 && r.queue == "cap" && strings.Contains(r.body, "at most 50 annotators"):
		case r.code == 200:
		default:
			t.Errorf("%s: %d %s", r.queue, r.code, r.body)
		}
	}
	if count["k2 200"] != 2 || count["k2 409"] != 198 || count["cap 200"] != 50 || count["cap 409"] != 150 {
		t.Errorf("answers stored and refused: %v; want k2 2 and 198, cap 50 and 150", count)
	}
	for queue, want := range map[string]int{"k2": 2, "cap": 50} {
		if as, err := w.Answers(ctx, queue); err != nil || len(as) != want {
			t.Errorf("%s holds %d answers (%v), want %d", queue, len(as), err, want)
		}
	}
}
