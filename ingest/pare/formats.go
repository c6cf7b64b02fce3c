package pare

import (
	"bufio"
	"bytes"
	"os"
	"slices"

	"github.com/valyala/fastjson"

	"github.com/gymlens/gymlens/ingest/runlog"
)

// The PARE and Meta-ARE formats, registered with the run-log reader's
// discovery: each file found is given one of these kinds, and ingest reads
// it with this package.
var (
	KindTrace       = runlog.RegisterFormat(runlog.Format{Name: "pare_trace", Describe: "PARE/ARE traces and result files *.json, output.jsonl, annotation samples *.parquet"})
	KindResults     = runlog.RegisterFormat(runlog.Format{Name: "pare_results"})
	KindCombined    = runlog.RegisterFormat(runlog.Format{Name: "pare_combined"})
	KindAREStats    = runlog.RegisterFormat(runlog.Format{Name: "are_stats"})
	KindAREOutput   = runlog.RegisterFormat(runlog.Format{Name: "are_output"})
	KindSamples     = runlog.RegisterFormat(runlog.Format{Name: "pare_samples"})
	KindAnnotations = runlog.RegisterFormat(runlog.Format{Name: "pare_annotations"})
)

func init() {
	runlog.RegisterDetector(runlog.Detector{Extensions: []string{".json"}, Detect: jsonKind})
	runlog.RegisterDetector(runlog.Detector{Extensions: []string{".jsonl"}, Detect: func(path string) runlog.Kind {
		if isAREOutput(path) {
			return KindAREOutput
		}
		return runlog.KindUnknown
	}})
	runlog.RegisterDetector(runlog.Detector{Extensions: []string{".parquet"}, Detect: func(string) runlog.Kind { return KindSamples }})
	runlog.RegisterDetector(runlog.Detector{Extensions: []string{".csv"}, Detect: func(path string) runlog.Kind {
		if isAnnotationCSV(path) {
			return KindAnnotations
		}
		return runlog.KindUnknown
	}})
}

// jsonKind tells the PARE and Meta-ARE files among *.json: a trace (an
// object naming the are_simulation_v1 format, or starting with its world
// logs or completed events), PARE result rows (a list of objects with
// base_scenario_id), PARE's combined_result.json (per_config_results) and
// Meta-ARE's benchmark_stats.json (statistics with per_capability).
// Anything else is runlog.KindUnknown here (a scenario spec, maybe).
func jsonKind(path string) runlog.Kind {
	b, err := runlog.ReadWhole(path)
	if err != nil {
		return runlog.KindUnknown
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 {
		return runlog.KindUnknown
	}
	head := t[:min(len(t), 4096)]
	switch t[0] {
	case '[':
		if bytes.Contains(head, []byte(`"base_scenario_id"`)) {
			return KindResults
		}
	case '{':
		// The version key may come last; the world logs or the completed
		// events come first in the exports, so a truncated trace is still
		// recognised (and reported as truncated).
		if bytes.Contains(b, []byte(`"are_simulation_v1"`)) ||
			bytes.Contains(head, []byte(`"world_logs"`)) || bytes.Contains(head, []byte(`"completed_events"`)) {
			return KindTrace
		}
		if bytes.Contains(b, []byte(`"per_config_results"`)) {
			return KindCombined
		}
		if bytes.Contains(b, []byte(`"per_capability"`)) {
			return KindAREStats
		}
	}
	return runlog.KindUnknown
}

// isAREOutput says whether a .jsonl file is Meta-ARE's output.jsonl: its
// first line is an object with task_id and score and no record type.
func isAREOutput(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		ln := bytes.TrimSpace(sc.Bytes())
		if len(ln) == 0 {
			continue
		}
		v, err := fastjson.ParseBytes(ln)
		if err != nil || v.Type() != fastjson.TypeObject {
			return false
		}
		return v.Exists("task_id") && v.Exists("score") && !v.Exists("type")
	}
	return false
}

// AnnotationColumns are the columns a PARE annotation CSV must have.
var AnnotationColumns = []string{"sample_id", "annotator_id", "human_decision"}

func isAnnotationCSV(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head, err := runlog.CSVHeader(f)
	if err != nil {
		return false
	}
	for _, c := range AnnotationColumns {
		if !slices.Contains(head, c) {
			return false
		}
	}
	return true
}
