package judge

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gymlens/gymlens/ingest/rows"
)

// TestSettingsOptions holds what a judge run's flags are read into, and
// which mistakes are usage errors (*OptionError: the command's exit status
// 2) with the command's own words, in the order they are checked.
func TestSettingsOptions(t *testing.T) {
	ok := Settings{Source: "gym", Metrics: []string{"tc", "ta"}, Judges: []string{"j=m@http://127.0.0.1:1/v1"}, Limit: 7, Repeats: 3, Force: true,
		Client: ClientOptions{Concurrency: 2, Seed: 9}}
	opt, err := ok.Options()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(opt.Metrics, ",") != "tc,ta" || len(opt.Judges) != 1 || opt.Judges[0].Model != "m" || opt.Limit != 7 || opt.Repeats != 3 || !opt.Force ||
		opt.Client.Concurrency != 2 || opt.Client.Seed != 9 || opt.Samples {
		t.Errorf("options: %+v", opt)
	}
	if opt.Client.MaxRetries != -1 {
		t.Errorf("--retries 0: MaxRetries %d, want -1 (no retries)", opt.Client.MaxRetries)
	}
	ok.Client.MaxRetries = 3
	if opt, _ := ok.Options(); opt.Client.MaxRetries != 3 {
		t.Errorf("--retries 3: MaxRetries %d", opt.Client.MaxRetries)
	}
	// A rubric judges alone unless --metric was given.
	rubric := filepath.Join("prompts", "examples", "initiative.yaml")
	with := ok
	with.Prompts = []string{rubric}
	if opt, err := with.Options(); err != nil || len(opt.Rubrics) != 1 || opt.Metrics != nil {
		t.Errorf("--prompt without --metric: metrics %v rubrics %d %v", opt.Metrics, len(opt.Rubrics), err)
	}
	with.MetricsGiven = true
	if opt, err := with.Options(); err != nil || len(opt.Rubrics) != 1 || len(opt.Metrics) != 2 {
		t.Errorf("--prompt with --metric: metrics %v rubrics %d %v", opt.Metrics, len(opt.Rubrics), err)
	}
	insp := with
	insp.Source, insp.Metrics = "inspect", nil
	if opt, err := insp.Options(); err != nil || !opt.Samples {
		t.Errorf("--source inspect: Samples %v, %v", opt.Samples, err)
	}
	prices := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(prices, []byte(`{"m": {"input": 1.5, "output": 6}}`), 0o644)
	withPrices := ok
	withPrices.Prices = prices
	if opt, err := withPrices.Options(); err != nil || opt.Prices["m"].Input != 1.5 {
		t.Errorf("--prices: %v %v", opt.Prices, err)
	}

	bad := filepath.Join(t.TempDir(), "missing.yaml")
	for _, c := range []struct {
		name  string
		edit  func(*Settings)
		want  string
		usage bool
	}{
		{"where with inspect", func(s *Settings) { s.Source, s.Where = "inspect", true },
			"--where selects Proactivity-Gym runs; --source inspect judges every Inspect sample (--limit N: a sample of them, equal shares of configuration × task)", true},
		{"unknown source", func(s *Settings) { s.Source = "pare" }, `--source: expected gym or inspect, found "pare"`, true},
		{"unknown source before a bad metric", func(s *Settings) { s.Source, s.Metrics = "", []string{"x"} }, `--source: expected gym or inspect, found ""`, true},
		{"unknown metric", func(s *Settings) { s.Metrics = []string{"tc", "tx"} }, `--metric: expected some of tc, ta, trj, found "tx"`, true},
		{"no judge", func(s *Settings) { s.Judges = nil }, "judge: name at least one --judge NAME=MODEL[@BASE_URL]", true},
		{"an endpoint without its judge", func(s *Settings) { s.Endpoints = []string{"k=http://127.0.0.1:1/v1"} }, "--endpoint k: no --judge k=MODEL", true},
		{"a missing rubric", func(s *Settings) { s.Prompts = []string{bad} }, "--prompt: ", false},
		{"a missing rubric before no judge", func(s *Settings) { s.Prompts, s.Judges = []string{bad}, nil }, "--prompt: ", false},
		{"a missing prices file", func(s *Settings) { s.Prices = bad }, "--prices: ", false},
	} {
		s := ok
		c.edit(&s)
		_, err := s.Options()
		var oe *OptionError
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || errors.As(err, &oe) != c.usage {
			t.Errorf("%s: got %v (usage error: %v), want %q (usage error: %v)", c.name, err, errors.As(err, &oe), c.want, c.usage)
		}
	}
}

type fakeStore struct {
	BatchStore
	name string
}

// TestSourceStore holds the choice of what is judged: the runs' store
// itself, or for Inspect samples the store opened for them (and only then).
func TestSourceStore(t *testing.T) {
	gym := fakeStore{name: "gym"}
	opened := 0
	samples := func(context.Context) (fakeStore, error) { opened++; return fakeStore{name: "samples"}, nil }
	st, err := SourceStore(context.Background(), RunOptions{}, gym, samples)
	if err != nil || st.(fakeStore).name != "gym" || opened != 0 {
		t.Errorf("runs: %v %v, samples opened %d times", st, err, opened)
	}
	st, err = SourceStore(context.Background(), RunOptions{Samples: true}, gym, samples)
	if err != nil || st.(fakeStore).name != "samples" || opened != 1 {
		t.Errorf("samples: %v %v, opened %d times", st, err, opened)
	}
	refused := errors.New("no Inspect sample")
	if st, err := SourceStore(context.Background(), RunOptions{Samples: true}, gym, func(context.Context) (*fakeStore, error) { return nil, refused }); st != nil || err != refused {
		t.Errorf("samples refused: %v %v", st, err)
	}
}

// batchRoute records whether the Batches API's path was taken (it reads
// the open batches first).
type batchRoute struct {
	BatchStore
	batches int
}

var errBatches = errors.New("reading the open batches")

func (s *batchRoute) Name() string { return "w.duckdb" }
func (s *batchRoute) JudgeBatches(context.Context, string, string) ([]rows.JudgeBatch, error) {
	s.batches++
	return nil, errBatches
}

// RunOrBatch goes through the Batches API when asked to, unless the run
// is dry (a dry run only counts, as Run does), and live otherwise.
func TestRunOrBatch(t *testing.T) {
	ctx := context.Background()
	// Repeats -1: Run refuses it before it reads anything.
	opt := RunOptions{Repeats: -1, Judges: []Endpoint{{Name: "j", Model: "m", BaseURL: "http://127.0.0.1:1/v1"}}}
	st := &batchRoute{}
	if _, err := RunOrBatch(ctx, st, opt, nil); err == nil || !strings.HasPrefix(err.Error(), "--repeats") || st.batches != 0 {
		t.Errorf("live: %v, batches read %d times", err, st.batches)
	}
	dry := opt
	dry.DryRun = true
	if _, err := RunOrBatch(ctx, st, dry, &BatchOptions{}); err == nil || !strings.HasPrefix(err.Error(), "--repeats") || st.batches != 0 {
		t.Errorf("a dry --batch run: %v, batches read %d times", err, st.batches)
	}
	if _, err := RunOrBatch(ctx, st, opt, &BatchOptions{}); !errors.Is(err, errBatches) || st.batches != 1 {
		t.Errorf("--batch: %v, batches read %d times", err, st.batches)
	}
}
