package reports

import (
	"bytes"
	"math"
	"testing"
	"time"
)

func TestWriteResult(t *testing.T) {
	r := &Result{
		Columns: []string{"name", "n", "mean", "when", "note"},
		Rows: [][]any{
			{"GPT 5.6 Sol | CD | none", int64(90), 62.7125, time.Date(2026, 3, 2, 18, 0, 0, 0, time.UTC), nil},
			{`say "hi",` + "\nthen", int64(7), math.NaN(), nil, true},
		},
	}
	want := map[string]string{
		"table": "name                      n     mean  when                  note\n" +
			"───────────────────────  ──  ───────  ────────────────────  ────\n" +
			"GPT 5.6 Sol | CD | none  90  62.7125  2026-03-02T18:00:00Z\n" +
			"say \"hi\",⏎then            7      NaN                        true\n",
		"json": "[\n  {\"name\": \"GPT 5.6 Sol | CD | none\", \"n\": 90, \"mean\": 62.7125, \"when\": \"2026-03-02T18:00:00Z\", \"note\": null},\n" +
			"  {\"name\": \"say \\\"hi\\\",\\nthen\", \"n\": 7, \"mean\": null, \"when\": null, \"note\": true}\n]\n",
		"csv": "name,n,mean,when,note\nGPT 5.6 Sol | CD | none,90,62.7125,2026-03-02T18:00:00Z,\n\"say \"\"hi\"\",\nthen\",7,NaN,,true\n",
	}
	for format, w := range want {
		var b bytes.Buffer
		if err := WriteResult(&b, format, r); err != nil {
			t.Fatal(err)
		}
		if b.String() != w {
			t.Errorf("%s:\n%s\nwant\n%s", format, b.String(), w)
		}
	}
	if err := WriteResult(&bytes.Buffer{}, "xml", r); err == nil {
		t.Error("xml accepted")
	}
}
