package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Ratings of Inspect samples: a row with a sample_id names its sample by
// task, sample_id and epoch (config and eval optional); a row that does
// not is refused with the file, line, column and field.
func TestInspectRatingsRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inspect_ratings.csv")
	body := "rater,question,value,task,sample_id,epoch,config,run_id\n" +
		"ann,correct,1,popularity,1,1,openai/gpt-4o-mini | system_message+generate | none,\n" + // 2: good
		"ann,correct,0,popularity,2,2,,\n" + // 3: good, no config
		"ann,correct,1,,1,1,,\n" + // 4: no task
		"ann,correct,1,popularity,1,,,\n" + // 5: no epoch
		"ann,correct,1,popularity,1,0,,\n" + // 6: epoch 0
		"ann,correct,1,popularity,1,one,,\n" + // 7: epoch not a number
		"ann,correct,1,popularity,1,1,,run-1\n" + // 8: a run_id too
		"ann,correct,x,popularity,1,1,,\n" // 9: value not a number
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		4: `inspect_ratings.csv:4:15: field "task": a rating of an Inspect sample needs the sample's task, found none`,
		5: `inspect_ratings.csv:5:28: field "epoch": a rating of an Inspect sample needs the epoch rated`,
		6: `inspect_ratings.csv:6:28: field "epoch": expected an epoch: an integer from 1, found string "0"`,
		7: `inspect_ratings.csv:7:28: field "epoch": expected an epoch: an integer from 1, found string "one"`,
		8: `inspect_ratings.csv:8:31: field "run_id": a rating of an Inspect sample names it by task, sample_id and epoch, not by run_id`,
		9: `inspect_ratings.csv:9:13: field "value": expected a number (JSON's grammar), found "x"`,
	}
	got := map[int]string{}
	good := 0
	err := ReadRatingsCSV(path, 1, func(line int, g *Rating, raw, row []byte, rowErr *Error) error {
		if rowErr != nil {
			got[line] = rowErr.Error()
			return nil
		}
		good++
		if !strings.Contains(string(g.Extra), `"sample_id":`) || !strings.Contains(string(g.Extra), `"epoch":`) {
			t.Errorf("line %d: extra %s", line, g.Extra)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if good != 2 {
		t.Errorf("%d good rows, want 2", good)
	}
	for line, w := range want {
		if !strings.Contains(got[line], w) {
			t.Errorf("line %d: %q\nwant %q", line, got[line], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("errors %v", got)
	}
}
