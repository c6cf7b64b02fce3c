package ingest

import (
	"fmt"
	"testing"
)

// Read a few at a time, the ratings come in the order and with the
// values of one query over them all, none twice, none left out.
func TestEachRatingInBatches(t *testing.T) {
	w := sampleWarehouse(t)
	from := w
	read := func(batch int) []string {
		t.Helper()
		old := ratingBatch
		ratingBatch = batch
		defer func() { ratingBatch = old }()
		var out []string
		if err := from.EachRating(ctx, func(g *RatingRow) { out = append(out, fmt.Sprintf("%#v", *g)) }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := read(1 << 30)
	var n int
	if err := w.db.QueryRowContext(ctx, `SELECT count(*) FROM ratings`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < 100 || len(whole) < n {
		t.Fatalf("%d ratings read of %d in the warehouse: the test needs a few hundred", len(whole), n)
	}
	check := func(where string) {
		t.Helper()
		// Many batches; a last batch of one rating; one batch. (Batches
		// of 1 would cost a query a rating: 10 s; of 7, 6 s.)
		for _, b := range []int{61, n - 1, n} {
			got := read(b)
			if len(got) != len(whole) {
				t.Fatalf("%s, batches of %d: %d ratings, want %d", where, b, len(got), len(whole))
			}
			for i := range got {
				if got[i] != whole[i] {
					t.Fatalf("%s, batches of %d: rating %d is\n%s\nwant\n%s", where, b, i, got[i], whole[i])
				}
			}
		}
	}
	check("warehouse")
	// A lake, whose views have no rowid, reads them in batches too
	// (keyed by file and line, unique as ingest writes them), in the
	// same order.
	dir := t.TempDir()
	if _, err := w.Export(ctx, dir, "parquet"); err != nil {
		t.Fatal(err)
	}
	lake, err := Open(ctx, dir, OpenOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lake.Close()
	from = lake
	check("lake")
}
