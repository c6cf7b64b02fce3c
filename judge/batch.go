package judge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/gymlens/gymlens/ingest/rows"
)

// BatchDiscount is what a batch costs against the same requests sent live
// (OpenAI's Batch API: half price): the cost of an answer from a batch is
// its live price times this.
const BatchDiscount = 0.5

// Batch makes Run write the requests it would send to a batch file, or
// take their answers from a batch's output, instead of sending them: the
// OpenAI batch format, which vLLM's run_batch also reads and writes.
type Batch struct {
	// Export, when set: each request Run would send is written to it as a
	// batch line ({custom_id, method, url, body}), once per distinct input.
	Export io.Writer
	// Answers, otherwise: a batch's answers by custom_id (ReadBatchOutput).
	Answers *BatchOutput
}

// BatchAnswer is one line of a batch's output or error file.
type BatchAnswer struct {
	Content                   string
	InputTokens, OutputTokens int64
	Err                       string // why the request failed ("" when it answered)
	File                      string
	Line                      int
}

// CustomID names a request in a batch: the judge, the metric and the
// hash of the rendered input (the cache key's part that a batch line does
// not otherwise carry), and for the repeats of --repeats after the first,
// the repeat (|r1, |r2…).
func CustomID(judge, metric, hash string, repeat int) string {
	id := judge + "|" + metric + "|" + hash
	if repeat > 0 {
		id += "|r" + strconv.Itoa(repeat)
	}
	return id
}

// batchLine is a request of a batch input file.
type batchLine struct {
	CustomID string                         `json:"custom_id"`
	Method   string                         `json:"method"`
	URL      string                         `json:"url"`
	Body     openai.ChatCompletionNewParams `json:"body"`
}

// completion is what an answer needs of a chat completion (the SDK's own
// type costs four times as much to decode, which a batch of 100,000 feels).
type completion struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// batchOutput is a line of a batch's output or error file.
type batchOutput struct {
	CustomID *string `json:"custom_id"`
	Response *struct {
		StatusCode int             `json:"status_code"`
		Body       json.RawMessage `json:"body"`
	} `json:"response"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// importBatchSize is how many answers of a batch are written to the
// warehouse in one transaction.
const importBatchSize = 16384

// maxBatchLine bounds a line of a batch's output (one answer).
const maxBatchLine = 16 << 20

// BatchOutput is a batch's output and error files, read once to check
// every line and to index where each custom_id's line is: an answer is
// read from its file when asked for (Get), so that memory holds the index
// (some 100 bytes a line), never the answers.
type BatchOutput struct {
	paths []string
	files []*os.File
	index map[string]batchRef
}

type batchRef struct {
	file, line int32
	off        int64
	n          int32
}

// ReadBatchOutput reads the output and error files of a batch (OpenAI's
// format: {custom_id, response: {status_code, body}, error}). A line that
// is not that — bad JSON, no custom_id, a custom_id twice, a 200 without a
// completion — is an error naming the file, line and field, and nothing is
// read; a request that failed (status other than 200, or an error object)
// is an answer with Err. Close it when done.
func ReadBatchOutput(paths ...string) (*BatchOutput, error) {
	o := &BatchOutput{paths: paths, index: map[string]batchRef{}}
	for i, path := range paths {
		f, err := openRegular(path)
		if err != nil {
			o.Close()
			return nil, err
		}
		o.files = append(o.files, f)
		if err := o.scan(int32(i), f); err != nil {
			o.Close()
			return nil, err
		}
	}
	return o, nil
}

// Len is the number of lines (answers and failures) of the batch.
func (o *BatchOutput) Len() int { return len(o.index) }

// Close closes the batch's files.
func (o *BatchOutput) Close() error {
	for _, f := range o.files {
		f.Close()
	}
	o.files = nil
	return nil
}

// Get reads the answer to custom_id id, and whether the batch holds one.
func (o *BatchOutput) Get(id string) (BatchAnswer, bool, error) {
	ref, ok := o.index[id]
	if !ok {
		return BatchAnswer{}, false, nil
	}
	b := make([]byte, ref.n)
	if _, err := o.files[ref.file].ReadAt(b, ref.off); err != nil {
		return BatchAnswer{}, true, fmt.Errorf("%s:%d: reading the answer again: %w", o.paths[ref.file], ref.line, err)
	}
	_, a, err := parseBatchLine(o.paths[ref.file], int(ref.line), b, true)
	return a, true, err
}

// parseBatchLine reads one line of a batch's output; with content, the
// answer's text too (else the line is only checked).
func parseBatchLine(path string, n int, b []byte, content bool) (string, BatchAnswer, error) {
	bad := func(field, msg string) error { return &lineError{File: path, Line: n, Field: field, Msg: msg} }
	var o batchOutput
	if err := json.Unmarshal(b, &o); err != nil {
		return "", BatchAnswer{}, bad("", "not a JSON object: "+err.Error())
	}
	if o.CustomID == nil || *o.CustomID == "" {
		return "", BatchAnswer{}, bad("custom_id", "missing")
	}
	a := BatchAnswer{File: path, Line: n}
	switch {
	case o.Error != nil && (o.Error.Code != "" || o.Error.Message != ""):
		a.Err = strings.TrimSpace(o.Error.Code + " " + o.Error.Message)
	case o.Response == nil:
		return "", a, bad("response", "missing (and no error)")
	case o.Response.StatusCode != 200:
		a.Err = fmt.Sprintf("HTTP %d: %s", o.Response.StatusCode, strings.TrimSpace(string(o.Response.Body)))
	default:
		var c completion
		if err := json.Unmarshal(o.Response.Body, &c); err != nil {
			return "", a, bad("response.body", "not a chat completion: "+err.Error())
		}
		if len(c.Choices) == 0 {
			return "", a, bad("response.body.choices", "empty")
		}
		if content {
			a.Content = c.Choices[0].Message.Content
		}
		a.InputTokens, a.OutputTokens = c.Usage.PromptTokens, c.Usage.CompletionTokens
	}
	return *o.CustomID, a, nil
}

func (o *BatchOutput) scan(file int32, f *os.File) error {
	path := o.paths[file]
	br := bufio.NewReaderSize(f, 1<<20)
	var off int64
	if b, err := br.Peek(3); err == nil && string(b) == "\xef\xbb\xbf" {
		br.Discard(3)
		off = 3
	}
	for n := 1; ; n++ {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			full := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				if len(full) > maxBatchLine {
					return &lineError{File: path, Line: n, Msg: fmt.Sprintf("a line longer than %d MB", maxBatchLine>>20)}
				}
				b, err = br.ReadSlice('\n')
				full = append(full, b...)
			}
			b = full
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			id, _, perr := parseBatchLine(path, n, b, false)
			if perr != nil {
				return perr
			}
			if prev, dup := o.index[id]; dup {
				return &lineError{File: path, Line: n, Field: "custom_id", Msg: fmt.Sprintf("%q answered twice (also %s:%d)", id, o.paths[prev.file], prev.line)}
			}
			o.index[id] = batchRef{file: file, line: int32(n), off: off, n: int32(len(b))}
		}
		off += int64(len(b))
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return &lineError{File: path, Line: n, Msg: err.Error()}
		}
	}
}

// BatchCounts is what a batch export or import did for one judge and
// metric.
type BatchCounts struct {
	Exported int // requests written
	Answered int // answers taken from the batch
	Failed   int // requests the batch reports as failed
	Missing  int // requests the batch does not hold (not sent, or another judge's)

	firstFail string // where the first failed request is, and why
}

// notes says what an import of judge's metric left unanswered.
func (c *BatchCounts) notes(judge, metric string) []string {
	var out []string
	if c.firstFail != "" {
		out = append(out, fmt.Sprintf("%s %s: %d requests failed in the batch, the first: %s (they are asked again by the next run)", judge, metric, c.Failed, c.firstFail))
	}
	if c.Missing > 0 {
		out = append(out, fmt.Sprintf("%s %s: %d requests are not in the batch (another selection, or not sent): export them again, or judge them live", judge, metric, c.Missing))
	}
	return out
}

// exportBatch writes the requests of todo as batch lines, rendered a few
// runs at a time (memory holds a batch of prompts, not all of them).
func exportBatch(ctx context.Context, w Store, ep Endpoint, rb *Rubric, todo []*Item, runByID map[string]*rows.JudgeRun, co ClientOptions, repeat int, out io.Writer, counts *BatchCounts) error {
	metric := rb.Metric
	tmpl, err := bodyTemplate(ep.Model, rb, co)
	if err != nil {
		return err
	}
	var line []byte
	return eachRendered(ctx, w, rb, todo, runByID, func(it, _ *Item) error {
		line = tmpl.line(line[:0], CustomID(ep.Name, metric, it.Hash, repeat), it.System, it.User)
		if _, err := out.Write(line); err != nil {
			return fmt.Errorf("writing the batch: %w", err)
		}
		counts.Exported++
		return nil
	})
}

// batchTemplate is a batch line's JSON with the request's two messages
// left out: the body marshalled once (the SDK's marshalling of the same
// schema for every line cost most of an export), the messages spliced in.
type batchTemplate struct{ head, mid, tail []byte }

// Placeholders for the messages, which no prompt holds.
const (
	systemMark = `\u0000gymlens-system\u0000` // as JSON writes "\x00gymlens-system\x00"
	userMark   = `\u0000gymlens-user\u0000`
)

func bodyTemplate(model string, rb *Rubric, co ClientOptions) (*batchTemplate, error) {
	req := Request{System: "\x00gymlens-system\x00", User: "\x00gymlens-user\x00", SchemaName: rb.schemaName(), Schema: rb.Schema()}
	body, err := json.Marshal(chatParams(model, req, co))
	if err != nil {
		return nil, err
	}
	b := string(body)
	i, j := strings.Index(b, `"`+systemMark+`"`), strings.Index(b, `"`+userMark+`"`)
	if i < 0 || j < i {
		return nil, fmt.Errorf("internal error: the batch body template has no place for the messages: %s", b)
	}
	return &batchTemplate{head: []byte(b[:i]), mid: []byte(b[i+len(systemMark)+2 : j]), tail: []byte(b[j+len(userMark)+2:])}, nil
}

// line appends the batch line of one request to dst.
func (t *batchTemplate) line(dst []byte, id, system, user string) []byte {
	dst = append(dst, `{"custom_id":`...)
	dst = appendJSONString(dst, id)
	dst = append(dst, `,"method":"POST","url":"/v1/chat/completions","body":`...)
	dst = append(dst, t.head...)
	dst = appendJSONString(dst, system)
	dst = append(dst, t.mid...)
	dst = appendJSONString(dst, user)
	dst = append(dst, t.tail...)
	return append(dst, "}\n"...)
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // a string always marshals
	return append(dst, b...)
}

// importBatch saves the batch's answers to todo (and copies for the
// items sharing their inputs), checked as live answers are; an item the
// batch does not hold is left to ask.
func importBatch(ctx context.Context, w Store, ep Endpoint, rb *Rubric, repeat int, todo []*Item, followers map[*Item][]*Item, copies []rows.JudgeCall,
	runByID map[string]*rows.JudgeRun, answers *BatchOutput, stamp func(*rows.JudgeCall), rep *JudgeReport, counts *BatchCounts) error {
	metric := rb.Metric
	sv, err := newSaverOf(w, importBatchSize)
	if err != nil {
		return err
	}
	for i := range copies {
		stamp(&copies[i])
		sv.save(copies[i])
	}
	err = eachRendered(ctx, w, rb, todo, runByID, func(it, lean *Item) error {
		a, ok, err := answers.Get(CustomID(ep.Name, metric, it.Hash, repeat))
		if err != nil {
			return err
		}
		switch {
		case !ok:
			counts.Missing++
			return nil
		case a.Err != "":
			counts.Failed++
			rep.Failed++
			if counts.firstFail == "" {
				counts.firstFail = fmt.Sprintf("%s:%d: %s", a.File, a.Line, a.Err)
			}
			return nil
		}
		call := &rows.JudgeCall{RunID: it.RunID, Task: it.Task, Metric: metric, InputHash: it.Hash, SourceKey: it.SourceKey,
			Attempts: 1, InputTokens: a.InputTokens, OutputTokens: a.OutputTokens}
		applyAnswer(call, it, rb, a.Content)
		stamp(call)
		if call.CostUSD != nil {
			*call.CostUSD *= BatchDiscount
		}
		sv.save(*call)
		for _, f := range followers[lean] {
			sv.save(copyOf(*call, f, stamp))
		}
		counts.Answered++
		rep.count(call)
		return nil
	})
	if cerr := sv.close(); err == nil {
		err = cerr
	}
	return err
}

// eachRendered calls fn with each item of todo, full and lean, in todo's
// order (which is run order): an item that kept its text as it is, a
// lean one rendered again. The runs of the lean items have their events
// read in one pass (ScanJudgeEvents reads a few hundred runs a query),
// and each run's items are rendered and given to fn while its events
// are read: memory holds one run's prompts, and a slice's events are
// read at most once per plan, not once per few dozen runs (each query's
// cost grows with the warehouse: docs/benchmarks.md).
func eachRendered(ctx context.Context, w Store, rb *Rubric, todo []*Item, runByID map[string]*rows.JudgeRun, fn func(full, lean *Item) error) error {
	var runs []*rows.JudgeRun
	for _, it := range todo {
		if !it.isRendered() && (len(runs) == 0 || runs[len(runs)-1].RunID != it.RunID) {
			runs = append(runs, runByID[it.RunID])
		}
	}
	next := 0 // the next item of todo to give
	// kept gives the items that kept their text, from next on, up to the
	// first of run id (or any other that must be rendered).
	kept := func(id string) error {
		for next < len(todo) && todo[next].RunID != id && todo[next].isRendered() {
			if err := fn(todo[next], todo[next]); err != nil {
				return err
			}
			next++
		}
		return nil
	}
	err := w.ScanJudgeEvents(ctx, runs, func(r *rows.JudgeRun) error {
		if err := kept(r.RunID); err != nil {
			return err
		}
		hi := next
		for hi < len(todo) && todo[hi].RunID == r.RunID {
			hi++
		}
		if hi == next {
			return nil
		}
		byTask := map[string]*Item{}
		for _, it := range rb.Items(r) {
			it.Tokens = estTokens(&it)
			byTask[it.Task] = &it
		}
		for _, lean := range todo[next:hi] {
			full := lean
			if !lean.isRendered() {
				full = byTask[lean.Task]
				if full == nil || full.Hash != lean.Hash {
					return fmt.Errorf("the %s item of run %s task %q rendered differently the second time (a gymlens bug: please report it)", rb.Metric, lean.RunID, lean.Task)
				}
				full.SourceKey = lean.SourceKey
			}
			if err := fn(full, lean); err != nil {
				return err
			}
		}
		next = hi
		return ctx.Err()
	})
	if err == nil {
		err = kept("")
	}
	if err == nil && next < len(todo) {
		err = fmt.Errorf("internal error: %d %s items not rendered again", len(todo)-next, rb.Metric)
	}
	return err
}

// lineError is a bad line of a batch file: its file, line, field and what
// is wrong (worded as the readers of ingest word theirs).
type lineError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *lineError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// openRegular opens a batch file, refusing what is not a regular file (a
// FIFO would block, a folder is not one).
func openRegular(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &lineError{File: path, Msg: "cannot read: " + err.Error()}
	}
	if !st.Mode().IsRegular() {
		return nil, &lineError{File: path, Msg: "not a regular file"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &lineError{File: path, Msg: "cannot read: " + err.Error()}
	}
	return f, nil
}

// ExportBatchFile writes the requests Run would send to a batch input
// file at path, whole or not at all, and says for each judge and metric
// how many.
func ExportBatchFile(ctx context.Context, w Store, opt RunOptions, path string) ([]JudgeReport, string, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".gymlens-batch-*")
	if err != nil {
		return nil, "", fmt.Errorf("--out: %w", err)
	}
	defer os.Remove(tmp.Name())
	bw := bufio.NewWriterSize(tmp, 1<<20)
	opt.Batch = &Batch{Export: bw}
	reps, err := Run(ctx, w, opt)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if err = os.Chmod(tmp.Name(), 0o644); err == nil {
			err = os.Rename(tmp.Name(), path)
		}
	}
	if err != nil {
		return reps, "", err
	}
	total := 0
	var parts []string
	for _, r := range reps {
		total += r.Batch.Exported
		parts = append(parts, fmt.Sprintf("%s %s %d (of %d, %d cached)", r.Judge, r.Metric, r.Batch.Exported, r.Items, r.Cached))
	}
	return reps, fmt.Sprintf("wrote %s: %d requests — %s; then `gymlens judge import-batch OUTPUT.jsonl` with the same flags", path, total, strings.Join(parts, "; ")), nil
}

// ImportBatchFiles saves the answers of a batch's output (and error)
// files as Run would save them (importBatch); a note counts the lines
// that match no request of the selection.
func ImportBatchFiles(ctx context.Context, w Store, opt RunOptions, paths ...string) ([]JudgeReport, error) {
	answers, err := ReadBatchOutput(paths...)
	if err != nil {
		return nil, err
	}
	defer answers.Close()
	opt.Batch = &Batch{Answers: answers}
	reps, err := Run(ctx, w, opt)
	if err == nil && len(reps) > 0 {
		used := 0
		for _, r := range reps {
			used += r.Batch.Answered + r.Batch.Failed
		}
		if left := answers.Len() - used; left > 0 {
			reps[0].Notes = append(reps[0].Notes, fmt.Sprintf("%d lines of the batch match no request of this selection (another judge, metric or selection, or answered already)", left))
		}
	}
	return reps, err
}
