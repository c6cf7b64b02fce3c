package judge

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/gymlens/gymlens/ingest/rows"
)

// BatchStore is where the batches submitted are kept, so that a later run
// finds them after any crash (ingest.Warehouse is one).
type BatchStore interface {
	Store
	// JudgeBatches are the batches of judge and model not yet collected.
	JudgeBatches(ctx context.Context, judge, model string) ([]rows.JudgeBatch, error)
	SaveJudgeBatch(ctx context.Context, b rows.JudgeBatch) error
}

// BatchOptions tune RunBatches.
type BatchOptions struct {
	Wait bool          // poll a batch until it ends, then collect it
	Poll time.Duration // between polls (default 30 s)
	Dir  string        // where the batch files are written meanwhile (default: beside the warehouse)
	// Say reports what happens to each batch (submitted, still running,
	// collected), as it happens.
	Say func(string)
}

// terminal says whether a batch's status is final.
func terminal(status string) bool {
	switch status {
	case "completed", "failed", "expired", "cancelled":
		return true
	}
	return false
}

// RunBatches judges through an OpenAI-compatible Batches API (Files and
// Batches: upload the requests as JSONL, poll, download the output and
// error files) instead of live requests. For each judge: the batches
// submitted before and not yet collected are looked up (a batch still
// running is left running, or waited for with Wait), those that ended are
// collected — their answers saved as import-batch does, at the batch price
// — and then, when none is running, what is still to ask (never asked,
// or failed or expired in a batch) is submitted as a new batch, its id
// kept in the warehouse before anything else happens.
func RunBatches(ctx context.Context, w BatchStore, opt RunOptions, bo BatchOptions) ([]JudgeReport, error) {
	if bo.Poll <= 0 {
		bo.Poll = 30 * time.Second
	}
	if bo.Dir == "" {
		bo.Dir = filepath.Dir(w.Name())
	}
	say := bo.Say
	if say == nil {
		say = func(string) {}
	}
	var reports []JudgeReport
	for _, ep := range opt.Judges {
		one := opt
		one.Judges = []Endpoint{ep}
		reps, err := runBatchesOf(ctx, w, one, ep, bo, say)
		reports = append(reports, reps...)
		if err != nil {
			return reports, err
		}
	}
	return reports, nil
}

func batchClient(ep Endpoint, co ClientOptions) openai.Client {
	opts := []option.RequestOption{option.WithMaxRetries(3), option.WithAPIKey(ep.apiKey)}
	if ep.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(ep.BaseURL))
	}
	// Batch files are read a line at a time within their own bound: no
	// cap on the body here, only on where requests go.
	opts = append(opts, option.WithHTTPClient(guarded(co.HTTPClient, 0)))
	return openai.NewClient(opts...)
}

func runBatchesOf(ctx context.Context, w BatchStore, opt RunOptions, ep Endpoint, bo BatchOptions, say func(string)) ([]JudgeReport, error) {
	cl := batchClient(ep, opt.Client)
	metrics := strings.Join(opt.metricNames(), ",")
	open, err := w.JudgeBatches(ctx, ep.Name, ep.Model)
	if err != nil {
		return nil, err
	}
	var reports []JudgeReport
	running := false
	for _, b := range open {
		reps, done, err := followBatch(ctx, w, cl, opt, b, bo, say)
		reports = append(reports, reps...)
		if err != nil {
			return reports, err
		}
		running = running || !done
	}
	if running {
		return reports, nil // one batch at a time per judge: its items are not asked twice
	}
	// What is still to ask, as a new batch.
	path := filepath.Join(bo.Dir, fmt.Sprintf(".gymlens-batch-%s-%d.jsonl", ep.Name, time.Now().UnixNano()))
	f, err := os.Create(path)
	if err != nil {
		return reports, fmt.Errorf("writing the batch: %w", err)
	}
	defer os.Remove(path)
	exp := opt
	exp.Batch = &Batch{Export: f}
	reps, err := Run(ctx, w, exp)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return reports, err
	}
	n := 0
	for _, r := range reps {
		n += r.Batch.Exported
	}
	if n == 0 {
		say(fmt.Sprintf("%s: nothing left to ask", ep.Name))
		return reports, nil
	}
	in, err := os.Open(path)
	if err != nil {
		return reports, err
	}
	file, err := cl.Files.New(ctx, openai.FileNewParams{File: in, Purpose: openai.FilePurposeBatch})
	in.Close()
	if err != nil {
		return reports, fmt.Errorf("judge %s: uploading the batch (%d requests) to %s: %w", ep.Name, n, ep.BaseURL, err)
	}
	created, err := cl.Batches.New(ctx, openai.BatchNewParams{InputFileID: file.ID, Endpoint: openai.BatchNewParamsEndpointV1ChatCompletions,
		CompletionWindow: openai.BatchNewParamsCompletionWindow24h})
	if err != nil {
		return reports, fmt.Errorf("judge %s: creating the batch: %w", ep.Name, err)
	}
	b := rows.JudgeBatch{ID: created.ID, Judge: ep.Name, Model: ep.Model, BaseURL: ep.BaseURL, Metrics: metrics, InputFile: file.ID,
		Requests: n, Status: string(created.Status)}
	if err := w.SaveJudgeBatch(ctx, b); err != nil {
		return reports, err
	}
	say(fmt.Sprintf("%s: submitted batch %s with %d requests (%s)", ep.Name, b.ID, n, b.Status))
	if !bo.Wait {
		say(fmt.Sprintf("%s: run the same command again to collect batch %s (or give --batch-wait)", ep.Name, b.ID))
		return reports, nil
	}
	more, _, err := followBatch(ctx, w, cl, opt, b, bo, say)
	return append(reports, more...), err
}

// followBatch asks a batch's status (until it ends, with Wait) and
// collects it when it has ended. It says whether the batch is done with.
func followBatch(ctx context.Context, w BatchStore, cl openai.Client, opt RunOptions, b rows.JudgeBatch, bo BatchOptions, say func(string)) ([]JudgeReport, bool, error) {
	for {
		got, err := cl.Batches.Get(ctx, b.ID)
		if err != nil {
			return nil, false, fmt.Errorf("judge %s: asking batch %s's status: %w", b.Judge, b.ID, err)
		}
		if string(got.Status) != b.Status {
			b.Status = string(got.Status)
			if err := w.SaveJudgeBatch(ctx, b); err != nil {
				return nil, false, err
			}
		}
		if terminal(b.Status) {
			reps, err := collectBatch(ctx, w, cl, opt, b, got, bo, say)
			return reps, err == nil, err
		}
		if !bo.Wait {
			say(fmt.Sprintf("%s: batch %s (%d requests) is %s: run again later to collect it", b.Judge, b.ID, b.Requests, b.Status))
			return nil, false, nil
		}
		select {
		case <-time.After(bo.Poll):
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// collectBatch downloads an ended batch's output and error files, saves
// its answers and marks it collected.
func collectBatch(ctx context.Context, w BatchStore, cl openai.Client, opt RunOptions, b rows.JudgeBatch, got *openai.Batch, bo BatchOptions, say func(string)) ([]JudgeReport, error) {
	var paths []string
	for _, id := range []string{got.OutputFileID, got.ErrorFileID} {
		if id == "" {
			continue
		}
		p, err := download(ctx, cl, id, bo.Dir)
		if err != nil {
			return nil, fmt.Errorf("judge %s: downloading file %s of batch %s: %w", b.Judge, id, b.ID, err)
		}
		defer os.Remove(p)
		paths = append(paths, p)
	}
	var reps []JudgeReport
	if len(paths) > 0 {
		answers, err := ReadBatchOutput(paths...)
		if err != nil {
			return nil, err
		}
		defer answers.Close()
		imp := opt
		imp.Batch = &Batch{Answers: answers}
		if reps, err = Run(ctx, w, imp); err != nil {
			return reps, err
		}
	}
	answered, failed := 0, 0
	for _, r := range reps {
		answered += r.Batch.Answered
		failed += r.Batch.Failed
	}
	why := ""
	if got.Status == "failed" {
		var msgs []string
		for _, e := range got.Errors.Data {
			msgs = append(msgs, strings.TrimSpace(e.Code+" "+e.Message))
		}
		why = ": " + strings.Join(msgs, "; ")
	}
	b.Collected = true
	if err := w.SaveJudgeBatch(ctx, b); err != nil {
		return reps, err
	}
	say(fmt.Sprintf("%s: batch %s %s%s: %d answers saved, %d failed (asked again in the next batch)", b.Judge, b.ID, b.Status, why, answered, failed))
	return reps, nil
}

// download copies a file of the Files API to dir.
func download(ctx context.Context, cl openai.Client, id, dir string) (string, error) {
	resp, err := cl.Files.Content(ctx, id)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	f, err := os.CreateTemp(dir, ".gymlens-batch-"+id+"-*.jsonl")
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), f.Close()
}
