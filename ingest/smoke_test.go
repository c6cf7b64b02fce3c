package ingest

import (
	"context"
	"testing"
)

func TestSmoke(t *testing.T) {
	ctx := context.Background()
	w, err := Open(ctx, t.TempDir()+"/w.duckdb", OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.Ingest(ctx, []string{"/tmp/t1"}, IngestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", s)
	s, err = w.Ingest(ctx, []string{"/tmp/t1"}, IngestOptions{})
	t.Logf("%+v %v", s, err)
	rows, _ := w.db.Query("select run_id, seq, t, visible, input_tokens, extra, actions from events")
	for rows.Next() {
		var a, b, c, d, e, f, g any
		rows.Scan(&a, &b, &c, &d, &e, &f, &g)
		t.Log(a, b, c, d, e, f, g)
	}
}
