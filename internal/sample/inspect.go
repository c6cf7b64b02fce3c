package sample

import (
	"archive/zip"
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// InspectOptions shape a generated Inspect .eval log.
type InspectOptions struct {
	Samples, Epochs int
	// Items is the messages and events of each sample (each about 1 KB).
	Items int
	// Chunked writes each sample in the chunked layout (chunks of 1,000
	// items) instead of one entry.
	Chunked bool
	Seed    uint64
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteInspectEval writes a synthetic Inspect .eval log (entries
// compressed with zstd, as Inspect writes them) and returns the bytes of
// JSON it holds, uncompressed. Samples are written one at a time, so its
// memory does not grow with the log.
func WriteInspectEval(path string, opt InspectOptions) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	zw := zip.NewWriter(bw)
	zw.RegisterCompressor(93, func(w io.Writer) (io.WriteCloser, error) {
		return zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	})
	r := rand.New(rand.NewPCG(opt.Seed, 60))
	words := strings.Fields("the agent reads the file and calls a tool to list the directory then writes a patch " +
		"for the failing test while the user waits for an answer about the schedule of the next meeting")
	text := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	var total int64
	entry := func(name string, fill func(w io.Writer) error) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: 93})
		if err != nil {
			return err
		}
		cw := &countWriter{w: w}
		bw := bufio.NewWriterSize(cw, 256<<10)
		if err := fill(bw); err != nil {
			return err
		}
		err = bw.Flush()
		total += cw.n
		return err
	}
	const model = "openai/gpt-bench"
	header := fmt.Sprintf(`{"version": 2, "status": "success", "eval": {"eval_id": "bench%d", "run_id": "r", "created": "2026-01-01T00:00:00+00:00",
"task": "bench", "task_id": "t", "task_version": 0, "dataset": {"name": "bench"}, "model": %q, "model_args": {}, "config": {"epochs": %d}},
"plan": {"name": "plan", "steps": [{"solver": "generate", "params": {}}], "config": {}},
"results": {"total_samples": %d, "completed_samples": %d, "scores": [{"name": "match", "scorer": "match", "params": {}, "metrics": {}}]},
"stats": {"started_at": "2026-01-01T00:00:00+00:00", "completed_at": "2026-01-01T01:00:00+00:00", "model_usage": {}}}`,
		opt.Seed, model, opt.Epochs, opt.Samples*opt.Epochs, opt.Samples*opt.Epochs)
	message := func(w io.Writer, i int) {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(w, `{"id": "m%d", "role": %q, "content": %q, "source": "generate"}`, i, role, text(900))
	}
	event := func(w io.Writer, i int) {
		fmt.Fprintf(w, `{"event": "model", "timestamp": "2026-01-01T00:00:%02d+00:00", "working_start": %d.5, "model": %q, "input": [], "input_refs": [[0, %d]], "tools": [], "tool_choice": "auto", "config": {}, "output": {"model": %q, "choices": [{"message": {"role": "assistant", "content": %q}, "stop_reason": "stop"}], "usage": {"input_tokens": 900, "output_tokens": 200, "total_tokens": 1100}}, "working_time": 1.25}`,
			i%60, i, model, i/2+1, model, text(600))
	}
	for s := 1; s <= opt.Samples; s++ {
		for e := 1; e <= opt.Epochs; e++ {
			value := "C"
			if r.IntN(3) == 0 {
				value = "I"
			}
			shell := fmt.Sprintf(`"id": %d, "epoch": %d, "input": %q, "target": "C", "scores": {"match": {"value": %q, "answer": "x"}},
"model_usage": {%q: {"input_tokens": %d, "output_tokens": %d, "total_tokens": %d}}, "total_time": 12.5, "working_time": 10.25, "uuid": "u%d_%d"`,
				s, e, text(200), value, model, 900*opt.Items, 200*opt.Items, 1100*opt.Items, s, e)
			prefix := fmt.Sprintf("samples/%d_epoch_%d", s, e)
			if !opt.Chunked {
				err := entry(prefix+".json", func(w io.Writer) error {
					fmt.Fprintf(w, `{%s, "messages": [`, shell)
					for i := range opt.Items {
						if i > 0 {
							io.WriteString(w, ",")
						}
						message(w, i)
					}
					io.WriteString(w, `], "events": [`)
					for i := range opt.Items {
						if i > 0 {
							io.WriteString(w, ",")
						}
						event(w, i)
					}
					_, err := io.WriteString(w, `], "message_pool": [`)
					for i := range opt.Items {
						if i > 0 {
							io.WriteString(w, ",")
						}
						message(w, i)
					}
					_, err = io.WriteString(w, `], "attachments": {}}`)
					return err
				})
				if err != nil {
					return 0, err
				}
				continue
			}
			if err := entry(prefix+"/sample.json", func(w io.Writer) error {
				_, err := fmt.Fprintf(w, `{%s, "message_refs": [[0, %d]]}`, shell, opt.Items)
				return err
			}); err != nil {
				return 0, err
			}
			for _, seq := range []string{"messages", "events"} {
				for start := 0; start < opt.Items; start += 1000 {
					if err := entry(fmt.Sprintf("%s/%s/%d.json", prefix, seq, start), func(w io.Writer) error {
						io.WriteString(w, "[")
						for i := start; i < min(start+1000, opt.Items); i++ {
							if i > start {
								io.WriteString(w, ",")
							}
							if seq == "messages" {
								message(w, i)
							} else {
								event(w, i)
							}
						}
						_, err := io.WriteString(w, "]")
						return err
					}); err != nil {
						return 0, err
					}
				}
			}
		}
	}
	if err := entry("reductions.json", func(w io.Writer) error { _, err := io.WriteString(w, "[]"); return err }); err != nil {
		return 0, err
	}
	if err := entry("header.json", func(w io.Writer) error { _, err := io.WriteString(w, header); return err }); err != nil {
		return 0, err
	}
	if err := zw.Close(); err != nil {
		return 0, err
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	return total, f.Close()
}
