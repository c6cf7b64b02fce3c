package runlog

import (
	"bytes"
	"context"
	"testing"
)

var benchLines = []string{
	`{"type":"event","run_id":"gpt-5.6-sol_cd_none/shopping_monitor_purchase/operator/3","seq":41,"t":"2026-03-02T09:14:00Z","actor":"agent","kind":"tool_call","task":"compare_monitor","tool":"search_shopping","args":{"q":"monitor shopping"},"usage":{"input_tokens":5233,"output_tokens":412,"latency_ms":1822,"cost_usd":0.017203}}`,
	`{"type":"event","run_id":"gpt-5.6-sol_cd_none/shopping_monitor_purchase/operator/3","seq":42,"t":"2026-03-02T09:16:00Z","actor":"env","kind":"tool_result","task":"compare_monitor","tool":"search_shopping","result":"Found 3 results for monitor (ref 41).","ok":true}`,
	`{"type":"judgment","run_id":"gpt-5.6-sol_cd_none/shopping_monitor_purchase/operator/3","task":"compare_monitor","metric":"tc","judge":"judge-qwen3.5-397b","prompt":"tc/v1","scores":{"artifact_quality":0.85,"completeness":0.8,"correctness":0.9,"grounding":0.85},"reasons":"The answer addresses the request; see the cited turn.","evidence":[{"seq":44,"quote":"I looked into the monitor"}]}`,
}

// BenchmarkDecodeLine measures validating one record and writing its
// staging row, the per-line work of an ingest.
func BenchmarkDecodeLine(b *testing.B) {
	var d Decoder
	var row []byte
	n := 0
	for _, l := range benchLines {
		n += len(l)
	}
	b.SetBytes(int64(n))
	lines := make([][]byte, len(benchLines))
	for i, l := range benchLines {
		lines[i] = []byte(l)
	}
	for b.Loop() {
		for _, l := range lines {
			rec, err := d.DecodeLine(l)
			if err != nil {
				b.Fatal(err)
			}
			row = d.AppendCSV(row[:0], rec, 1, 1)
		}
	}
}

// BenchmarkDecodeStream measures the parallel stream decoder.
func BenchmarkDecodeStream(b *testing.B) {
	var buf bytes.Buffer
	for buf.Len() < 16<<20 {
		for _, l := range benchLines {
			buf.WriteString(l)
			buf.WriteByte('\n')
		}
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		err := DecodeStream(context.Background(), bytes.NewReader(buf.Bytes()), StreamOptions{File: "bench", Rows: true, FileID: 1}, func([]Item) error { return nil })
		if err != nil {
			b.Fatal(err)
		}
	}
}
