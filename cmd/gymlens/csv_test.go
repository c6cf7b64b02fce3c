package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// Every command that writes both CSV and JSON writes the same numbers in
// both: no digit is lost in CSV (the same float64 reads back).
func TestCSVNumbersEqualJSON(t *testing.T) {
	_, db := sampleWarehouse(t, 4, 0, true)
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
		cr.FieldsPerRecord = -1 // agree --human writes several tables in one file (issue 15)
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
