package main

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	_ "github.com/duckdb/duckdb-go/v2"
)

// Every command that writes both CSV and JSON writes the same numbers in
// both: no digit is lost in CSV (the same float64 reads back).
func TestCSVNumbersEqualJSON(t *testing.T) {
	t.Parallel()
	_, db := sharedSampleWarehouse(t, 1, 0)
	for _, args := range [][]string{
		{"query", "SELECT 123456.789::DOUBLE AS x, 1/3 AS third, 2e-9::DOUBLE AS tiny, 12345678901234567 AS big"},
		{"query", "SELECT run_id, avg(cost_usd) AS cost, avg(latency_ms) AS latency FROM events GROUP BY ALL ORDER BY ALL LIMIT 50"},
		{"metrics", "--by", "harness", "--resamples", "200"},
		{"metrics", "--by", "persona_group", "--metrics", "all", "--resamples", "200"},
		{"compare", "--harness-switch", "CC,OC", "--resamples", "200"},
		{"corr", "--resamples", "200"},
		{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", "--resamples", "200"},
		{"agree", "--human", "--resamples", "200"},
		{"human", "--resamples", "200"},
	} {
		name := strings.Join(args[:2], " ")
		code, js, stderr := gymlens(t, append([]string{"--db", db, "-q", "-f", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%s (json): %s", name, stderr)
		}
		code, cs, stderr := gymlens(t, append([]string{"--db", db, "-q", "-f", "csv"}, args...)...)
		if code != 0 {
			t.Fatalf("%s (csv): %s", name, stderr)
		}
		want := map[float64]int{}
		dec := json.NewDecoder(strings.NewReader(js))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		jsonNumbers(v, want)
		cr := csv.NewReader(bytes.NewReader([]byte(cs)))
		// Every record has the header's fields (several tables make one
		// long table with a table column).
		recs, err := cr.ReadAll()
		if err != nil {
			t.Fatalf("%s: CSV does not read back: %v", name, err)
		}
		n := 0
		for _, rec := range recs[1:] {
			for i, cell := range rec {
				f, err := strconv.ParseFloat(cell, 64)
				if err != nil {
					continue
				}
				n++
				if want[f] == 0 {
					t.Errorf("%s: CSV column %d holds %s, a number the JSON does not have", name, i+1, cell)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s: no number in the CSV", name)
		}
	}
}

func jsonNumbers(v any, into map[float64]int) {
	switch x := v.(type) {
	case json.Number:
		f, _ := strconv.ParseFloat(string(x), 64)
		into[f]++
	case []any:
		for _, e := range x {
			jsonNumbers(e, into)
		}
	case map[string]any:
		for _, e := range x {
			jsonNumbers(e, into)
		}
	}
}

// checkCSVReadsBack reads every CSV file as its users do: encoding/csv
// with every record holding the header's fields, and DuckDB's own reader
// (read_csv in strict mode, header sniffed off), which must find the same
// number of records and columns.
func checkCSVReadsBack(t *testing.T, files []string) {
	t.Helper()
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if len(files) == 0 {
		t.Fatal("no CSV file")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Errorf("%s: encoding/csv: %v", f, err)
			continue
		}
		var rows, cols int
		q := "SELECT count(*), (SELECT count(*) FROM (DESCRIBE SELECT * FROM read_csv(?1, header = true, strict_mode = true, all_varchar = true))) FROM read_csv(?1, header = true, strict_mode = true, all_varchar = true)"
		if err := db.QueryRow(q, f).Scan(&rows, &cols); err != nil {
			t.Errorf("%s: DuckDB's read_csv: %v", f, err)
			continue
		}
		if rows != len(recs)-1 || cols != len(recs[0]) {
			t.Errorf("%s: DuckDB reads %d records of %d columns, encoding/csv %d of %d", f, rows, cols, len(recs)-1, len(recs[0]))
		}
	}
}

// Several tables in one CSV are one long table: the same fields in every
// record, a table column naming each record's table.
func TestMultiTableCSVIsOneLongTable(t *testing.T) {
	t.Parallel()
	dir, db := sharedSampleWarehouse(t, 1, 0)
	var files []string
	for i, args := range [][]string{
		{"agree", "--human", "--resamples", "200"},
		{"agree", "--judges", "judge-gpt-5.6-luna,judge-qwen3.5-397b", "--resamples", "200"},
		{"human", "--resamples", "200"},
		{"table", "judge-agreement", "--resamples", "200"},
		{"table", "judge-human", "--resamples", "200"},
	} {
		code, out, stderr := gymlens(t, append([]string{"--db", db, "-q", "-f", "csv"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: %s", args, stderr)
		}
		if !strings.HasPrefix(out, "table,") {
			t.Errorf("%v: the first column is not table: %.80s", args, out)
		}
		f := filepath.Join(dir, fmt.Sprintf("out-%d.csv", i))
		os.WriteFile(f, []byte(out), 0o644)
		files = append(files, f)
	}
	checkCSVReadsBack(t, files)
}
