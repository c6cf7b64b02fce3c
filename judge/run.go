package judge

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gymlens/gymlens/ingest/rows"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct{ Input, Output float64 }

// DefaultPrices holds the prices gymlens knows; users add theirs with
// --prices. A model not listed has an unknown cost, never $0.
var DefaultPrices = map[string]Price{}

// RunOptions tunes Run.
type RunOptions struct {
	Metrics []string
	Judges  []Endpoint
	Client  ClientOptions
	// Limit judges at most this many items per metric (0: all), a
	// stratified random sample over configuration × scenario drawn with
	// Client.Seed (sample.go).
	Limit    int
	DryRun   bool // count calls, cache hits and tokens; send nothing
	Force    bool // ask again what is cached
	Prices   map[string]Price
	Progress func(Progress)  // called after each answer and every second, never concurrently
	Runs     map[string]bool // judge only these runs (nil: all)
	// Replace lets a judge take the name of a judge whose judgments were
	// ingested from run logs: those are taken out (ingesting their files
	// again restores them). Without it such a name is refused.
	Replace bool
	// Batch writes the requests to a batch file, or takes the answers
	// from a batch's output, instead of sending them (nil: send).
	Batch *Batch
	// Rubrics are user rubrics to judge besides Metrics (LoadRubrics).
	Rubrics []*Rubric
	// Repeats asks every item so many times (0 or 1: once), the r-th
	// time (from 0) with seed Client.Seed + r: every answer is kept, and
	// the judgment is the mean of the valid ones.
	Repeats int
	// SliceRuns is how many runs are planned and asked at a time (0:
	// 2,000): memory holds one slice's items.
	SliceRuns int
	// Samples says the store's runs are Inspect samples (ingest's
	// InspectJudge): only rubrics with item: run judge them, since a
	// sample has no tasks, scenario or decision window.
	Samples bool
	// KeepBytes is how many bytes of a slice's rendered items are kept
	// from planning for its asks (0: 32 MB; negative: none, every item
	// rendered again for each ask). What is asked and saved is the same
	// whatever it is; only how often the runs' events are read changes.
	KeepBytes int64
}

// checkSamples refuses, for Inspect samples, what judges tasks,
// scenarios or decision windows: the built-in metrics and the rubrics
// whose item is not run.
func (o RunOptions) checkSamples() error {
	if !o.Samples {
		return nil
	}
	if len(o.Metrics) > 0 {
		return fmt.Errorf("--source inspect: the built-in metrics (%s) judge Proactivity-Gym tasks and runs; judge Inspect samples with a rubric of item: run (--prompt FILE, no --metric)", strings.Join(o.Metrics, ", "))
	}
	if len(o.Rubrics) == 0 {
		return fmt.Errorf("--source inspect: give a rubric of item: run (--prompt FILE) to judge Inspect samples with")
	}
	for _, rb := range o.Rubrics {
		if rb.Item != ItemRun {
			return fmt.Errorf("%s: field item: --source inspect judges each sample's transcript whole, with rubrics of item: run; this one's is %q", rb.Path, rb.Item)
		}
	}
	return nil
}

// repeats is how many times each item is asked.
func (o RunOptions) repeats() int { return max(1, o.Repeats) }

// ParamsOf are the answer-changing parameters of a request, canonical:
// the seed and the temperature. They key the cache with the model, the
// prompt version and the input.
func ParamsOf(co ClientOptions) string {
	b, _ := json.Marshal(map[string]any{"temperature": co.Temperature, "seed": co.Seed})
	return string(b)
}

// repeatOptions are the client options of repeat r: seed Seed + r.
func (o RunOptions) repeatOptions(r int) ClientOptions {
	co := o.Client
	co.Seed += int64(r)
	return co
}

// rubrics are the rubrics a run judges: the built-in metrics asked for,
// then the user's.
func (o RunOptions) rubrics() []*Rubric {
	var out []*Rubric
	for _, m := range o.Metrics {
		if rb := Builtin(m); rb != nil {
			out = append(out, rb)
		}
	}
	return append(out, o.Rubrics...)
}

// metricNames are the names of the metrics a run judges.
func (o RunOptions) metricNames() []string {
	var out []string
	for _, rb := range o.rubrics() {
		out = append(out, rb.Metric)
	}
	return out
}

// Progress is a snapshot of a judge run.
type Progress struct {
	Total, Done, Cached, Failed int64
	Retrying                    int64 // requests waiting to be tried again
	Elapsed                     time.Duration
}

// Settled is how many items are done with: answered, cached or failed.
func (p Progress) Settled() int64 { return p.Done + p.Cached + p.Failed }

// String says it in a progress bar's words.
func (p Progress) String() string {
	s := fmt.Sprintf("done %d · cached %d · failed %d", p.Done, p.Cached, p.Failed)
	if p.Retrying > 0 {
		s += fmt.Sprintf(" · %d waiting to retry", p.Retrying)
	}
	return s
}

// ParseMetrics reads a list of metrics to judge (tc, ta, trj).
func ParseMetrics(list []string) ([]string, error) {
	for _, m := range list {
		if _, ok := PromptVersion[m]; !ok {
			return nil, fmt.Errorf("--metric: expected some of tc, ta, trj, found %q", m)
		}
	}
	return list, nil
}

// JudgeReport is what Run did for one judge and metric.
type JudgeReport struct {
	Judge, Model, Metric      string
	Items, Cached, Sent       int
	Valid, Invalid, Failed    int
	EstInputTokens            int64
	InputTokens, OutputTokens int64
	CostUSD                   *float64     // nil: unknown
	Notes                     []string     // what the run learnt of the endpoint
	Requests                  int          // HTTP attempts
	Batch                     *BatchCounts // a batch export or import: what it did
	Seed                      *int64       // with --repeats: the repeat's seed
}

// estTokens is a rough count of a prompt's tokens (4 characters each).
func estTokens(it *Item) int {
	if it.Tokens > 0 {
		return it.Tokens
	}
	return (len(it.System) + len(it.User)) / 4
}

// Store is what the judge reads and writes: the warehouse
// (ingest.Warehouse), through the typed rows.
type Store interface {
	// Name names the store: the journal of answers lies beside it.
	Name() string
	// JudgeHeads are the next n runs after run id after ("": from the
	// first; n ≤ 0: every one), in run order, with what an item needs but
	// the events.
	JudgeHeads(ctx context.Context, after string, n int) ([]*rows.JudgeRun, error)
	// ScanJudgeEvents fills in the events of runs (in run order),
	// calling fn on each run as it is complete.
	ScanJudgeEvents(ctx context.Context, runs []*rows.JudgeRun, fn func(*rows.JudgeRun) error) error
	// IngestedJudgments counts judgments under judge's name that came from
	// run logs, per metric.
	IngestedJudgments(ctx context.Context, judge string, metrics []string) (map[string]int64, error)
	// SupersedeIngestedJudgments takes those out.
	SupersedeIngestedJudgments(ctx context.Context, judge string, metrics []string) (int64, error)
	// JudgeCachedInputs, JudgeSourceKeys and JudgeAnswers read the cache
	// of answers of one model, parameters and prompt: the items each of
	// the hashes was answered for, which of the source keys are answered,
	// an answer to each of the hashes.
	JudgeCachedInputs(ctx context.Context, model, params, prompt string, hashes []string) (map[string][][2]string, error)
	JudgeSourceKeys(ctx context.Context, model, params, prompt string, keys []string) (map[string]bool, error)
	JudgeAnswers(ctx context.Context, model, params, prompt string, hashes []string) (map[string]string, error)
	// SaveJudgeCalls stores answers (and their judgments) in one
	// transaction.
	SaveJudgeCalls(ctx context.Context, calls []rows.JudgeCall) error
	// SaveRubrics stores the definitions of user rubrics, for the metrics
	// made of their judgments.
	SaveRubrics(ctx context.Context, rubs []rows.Rubric) error
	// SettleRepeats sets the judgments of repeated asks to the mean of
	// their valid answers; it returns how many judgments it set.
	SettleRepeats(ctx context.Context, spec rows.RepeatSpec) (int, error)
}

// Run asks every judge about every item of the metrics, except what the
// warehouse already holds an answer to (unless Force), and saves each
// answer as it comes. An answer whose cited evidence is not in the records
// is asked once more, then stored as invalid with the reason. A run that
// ends (not a dry run, nor one stopped or failed) has the store rebuild
// what it derives from the judgments, when it does (InputsRefresher).
func Run(ctx context.Context, w Store, opt RunOptions) ([]JudgeReport, error) {
	reps, err := run(ctx, w, opt)
	if r, ok := w.(InputsRefresher); ok && err == nil && !opt.DryRun && ctx.Err() == nil {
		if err := r.RefreshRunInputs(ctx); err != nil {
			return reps, fmt.Errorf("the answers are saved, but %w (the analyses read the tables meanwhile)", err)
		}
	}
	return reps, err
}

// InputsRefresher is a Store that keeps data derived from the judgments
// (ingest.Warehouse: the runs' stored inputs), rebuilt when a run ends;
// until then its readers read the judgments themselves.
type InputsRefresher interface {
	RefreshRunInputs(ctx context.Context) error
}

func run(ctx context.Context, w Store, opt RunOptions) ([]JudgeReport, error) {
	if opt.Repeats < 0 || opt.Repeats > 100 {
		return nil, fmt.Errorf("--repeats: expected 1 to 100 asks per item, found %d", opt.Repeats)
	}
	if t := opt.Client.Temperature; !(t >= 0 && t <= 2) {
		return nil, fmt.Errorf("--temperature: expected 0 to 2, found %g", t)
	}
	if err := opt.checkSamples(); err != nil {
		return nil, err
	}
	var reports []JudgeReport
	prices := map[string]Price{}
	for k, v := range DefaultPrices {
		prices[k] = v
	}
	for k, v := range opt.Prices {
		prices[k] = v
	}
	// The Go heap's soft limit while the judge runs: a slice's items and
	// the inputs met are a few hundred megabytes at most, and garbage is
	// collected before the heap doubles past them (a limit the user set
	// lower stands).
	if cur := debug.SetMemoryLimit(-1); cur > heapLimit {
		debug.SetMemoryLimit(heapLimit)
		defer debug.SetMemoryLimit(cur)
	}
	var prog Progress
	start := time.Now()
	// What a killed run had received goes in first, so that it is cached.
	recovered := 0
	if !opt.DryRun {
		var err error
		if recovered, err = ReplayJournal(ctx, w); err != nil {
			return nil, err
		}
	}
	defer func() {
		if recovered > 0 && len(reports) > 0 {
			reports[0].Notes = append([]string{fmt.Sprintf("%d answers that a killed run had received were saved first", recovered)}, reports[0].Notes...)
		}
	}()
	// A judge named like one whose judgments came from run logs would
	// silently stand in for them in every metric.
	rubs := opt.rubrics()
	names := opt.metricNames()
	for _, ep := range opt.Judges {
		have, err := w.IngestedJudgments(ctx, ep.Name, names)
		if err != nil {
			return nil, err
		}
		var parts []string
		var total int64
		for _, m := range names {
			if have[m] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", have[m], m))
				total += have[m]
			}
		}
		if total == 0 {
			continue
		}
		if !opt.Replace {
			return nil, fmt.Errorf("judge %q has %s judgments ingested from run logs; this run's answers would stand in for them: "+
				"give this judge another name, or pass --replace (ingesting the logs again with --replace restores them)", ep.Name, strings.Join(parts, ", "))
		}
		if !opt.DryRun {
			if _, err := w.SupersedeIngestedJudgments(ctx, ep.Name, names); err != nil {
				return nil, err
			}
		}
	}
	if !opt.DryRun && len(opt.Rubrics) > 0 {
		var defs []rows.Rubric
		for _, rb := range opt.Rubrics {
			defs = append(defs, rb.Definition())
		}
		if err := w.SaveRubrics(ctx, defs); err != nil {
			return nil, err
		}
	}
	// The runs are planned and asked a slice at a time, in run order: what
	// a judge run holds (the items, what the cache answers, the prompts in
	// flight) is one slice's, whatever the warehouse holds.
	slice := opt.SliceRuns
	if slice <= 0 {
		slice = sliceRuns
	}
	// What each slice may keep of its rendered items (none in a dry run,
	// which asks nothing).
	keep := opt.KeepBytes
	if keep == 0 {
		keep = keptItemBytes
	}
	if opt.DryRun || keep < 0 {
		keep = 0
	}
	// --limit's items: a stratified random sample (sample.go).
	var sampled map[itemKey]bool
	if opt.Limit > 0 {
		var err error
		if sampled, err = sampleItems(ctx, w, opt, rubs, slice); err != nil {
			return nil, err
		}
	}
	planned := map[string]int{} // items of each metric in the slices so far (for Limit)
	// next reads the next slice of runs (those of opt.Runs), nil after
	// the last.
	after := ""
	next := func() ([]*rows.JudgeRun, error) {
		for {
			if opt.Limit > 0 && len(planned) == len(rubs) && !slices.ContainsFunc(rubs, func(rb *Rubric) bool { return planned[rb.Metric] < opt.Limit }) {
				return nil, nil // every metric has its items
			}
			part, err := w.JudgeHeads(ctx, after, slice)
			if err != nil || len(part) == 0 {
				return nil, err
			}
			after = part[len(part)-1].RunID
			if opt.Runs != nil {
				part = slices.DeleteFunc(part, func(r *rows.JudgeRun) bool { return !opt.Runs[r.RunID] })
			}
			if len(part) > 0 {
				return part, nil
			}
		}
	}
	exporting := opt.Batch != nil && opt.Batch.Export != nil
	type plan struct {
		ep      Endpoint
		rb      *Rubric
		metric  string
		repeat  int
		co      ClientOptions // with the repeat's seed
		params  string
		rep     JudgeReport
		client  *Client // made when the plan first sends
		checked bool    // the endpoint has answered a check
		counts  *BatchCounts
	}
	// What a progress bar counts to: the items of every slice, counted
	// before the first is asked.
	total := map[string]int{}
	if opt.Progress != nil {
		for {
			part, err := next()
			if err != nil {
				return nil, err
			}
			if part == nil {
				break
			}
			for _, rb := range rubs {
				total[rb.Metric] += countItems(part, rb)
			}
		}
		after = ""
	}
	var plans []*plan
	for _, rb := range rubs {
		n := total[rb.Metric]
		if opt.Limit > 0 {
			n = min(n, opt.Limit)
		}
		for _, ep := range opt.Judges {
			for r := range opt.repeats() {
				co := opt.repeatOptions(r)
				p := &plan{ep: ep, rb: rb, metric: rb.Metric, repeat: r, co: co, params: ParamsOf(co),
					rep: JudgeReport{Judge: ep.Name, Model: ep.Model, Metric: rb.Metric}}
				if opt.repeats() > 1 {
					p.rep.Seed = &co.Seed
				}
				if opt.Batch != nil && !opt.DryRun {
					p.counts = &BatchCounts{}
					p.rep.Batch = p.counts
				}
				plans = append(plans, p)
				prog.Total += int64(n)
			}
		}
	}
	// finish gives the reports of the first n plans (every plan once a
	// slice is done), with what a batch import noted.
	finish := func(n int) []JudgeReport {
		out := make([]JudgeReport, 0, n)
		for _, p := range plans[:n] {
			if p.counts != nil && !exporting {
				p.rep.Notes = append(p.rep.Notes, p.counts.notes(p.ep.Name, p.metric)...)
			}
			out = append(out, p.rep)
		}
		sort.SliceStable(out, func(a, b int) bool { return out[a].Judge < out[b].Judge })
		return out
	}
	// An input first met in an earlier slice was asked there. A dry run
	// and a batch export save no answers for the cache to find, so they
	// remember each input met (16 bytes of its hash) for the later slices.
	var seen map[string]*inputSet
	if opt.DryRun || exporting {
		seen = map[string]*inputSet{}
		for _, rb := range rubs {
			seen[rb.Metric] = &inputSet{}
		}
	}
	// stopped is what a run ends with on an error between asks: after a
	// first slice, the reports of what it asked.
	stopped := func(first bool, err error) ([]JudgeReport, error) {
		if first {
			return nil, err
		}
		reports = finish(len(plans))
		return reports, err
	}
	for first := true; ; first = false {
		part, err := next()
		if err != nil {
			return stopped(first, err)
		}
		if part == nil {
			break
		}
		// First what the items would be made from, without reading a
		// trajectory: a rerun finds its answers by these source keys alone.
		stubs := map[string][]stub{}
		for _, rb := range rubs {
			rest := 0
			if opt.Limit > 0 {
				if rest = opt.Limit - planned[rb.Metric]; rest <= 0 {
					continue
				}
			}
			sts := stubsOf(part, rb)
			if sampled != nil {
				sts = slices.DeleteFunc(sts, func(st stub) bool { return !sampled[itemKey{rb.Metric, st.run.RunID, st.task}] })
			}
			if rest > 0 && len(sts) > rest {
				sts = sts[:rest]
			}
			stubs[rb.Metric] = sts
			planned[rb.Metric] += len(sts)
		}
		for _, p := range plans {
			p.rep.Items += len(stubs[p.metric])
		}
		src := make([]map[string]bool, len(plans)) // per plan: the source keys answered
		render := map[*rows.JudgeRun]bool{}
		for i, p := range plans {
			if !opt.Force {
				keys := make([]string, len(stubs[p.metric]))
				for j, st := range stubs[p.metric] {
					keys[j] = st.key
				}
				if src[i], err = w.JudgeSourceKeys(ctx, p.ep.Model, p.params, p.rb.Version, keys); err != nil {
					return stopped(first, err)
				}
			}
			for _, st := range stubs[p.metric] {
				if !src[i][st.key] {
					render[st.run] = true
				}
			}
		}
		// Then render what is not found that way: its answer may still be
		// cached under the hash of the rendered input.
		var toRender []*rows.JudgeRun
		for _, r := range part {
			if render[r] {
				toRender = append(toRender, r)
			}
		}
		// Items are planned from their hashes. A run's items keep their
		// text while the slice's budget lasts: the asks send them as they
		// are, and every repeat after the first too. The others are lean
		// (no prompt text in memory) and rendered again for each ask, a
		// few runs at a time.
		items, err := buildItems(ctx, w, rubs, toRender, newKeepBudget(keep))
		if err != nil {
			return stopped(first, err)
		}
		runByID := make(map[string]*rows.JudgeRun, len(part))
		for _, r := range part {
			runByID[r.RunID] = r
		}
		// With --repeats, each judgment becomes the mean of its item's
		// valid answers, also when the run stops early (what it received
		// counts).
		settle := func() error {
			if opt.repeats() < 2 || opt.DryRun || exporting {
				return nil
			}
			var params []string
			for r := range opt.repeats() {
				params = append(params, ParamsOf(opt.repeatOptions(r)))
			}
			for _, rb := range rubs {
				keys := map[[2]string]string{}
				for _, st := range stubs[rb.Metric] {
					keys[[2]string{st.run.RunID, st.task}] = st.key
				}
				for _, ep := range opt.Judges {
					spec := rows.RepeatSpec{Judge: ep.Name, Model: ep.Model, Prompt: rb.Version, Metric: rb.Metric, Params: params, Keys: keys,
						FirstRun: part[0].RunID, LastRun: part[len(part)-1].RunID}
					if _, err := w.SettleRepeats(context.WithoutCancel(ctx), spec); err != nil {
						return err
					}
				}
			}
			return nil
		}
		// fail gives the reports so far with err: the plans reached in a
		// first slice, every plan after it.
		fail := func(i int, err error) ([]JudgeReport, error) {
			if !first {
				i = len(plans) - 1
			}
			reports = finish(i + 1)
			return reports, withSettle(err, settle)
		}
		for i, p := range plans {
			metric, rb, ep, rep, params := p.metric, p.rb, p.ep, &p.rep, p.params
			// The input hashes are looked up only when a source key missed:
			// a rerun with nothing changed reads none.
			var hashes []string
			for _, st := range stubs[metric] {
				if !src[i][st.key] {
					it := items[itemKey{metric, st.run.RunID, st.task}]
					if it == nil {
						return stopped(first, fmt.Errorf("internal error: no %s item for run %s task %q", metric, st.run.RunID, st.task))
					}
					hashes = append(hashes, it.Hash)
				}
			}
			var inputs map[string][][2]string
			if !opt.Force && len(hashes) > 0 {
				if inputs, err = w.JudgeCachedInputs(ctx, ep.Model, params, rb.Version, hashes); err != nil {
					return stopped(first, err)
				}
			}
			// Each distinct input is asked once. An item whose input was
			// answered for another item (identical records) gets a copy of
			// that answer; so do the items sharing an input asked now.
			var todo, reuse []*Item
			leaders := map[string]*Item{}
			followers := map[*Item][]*Item{}
			cached := rep.Cached
			for _, st := range stubs[metric] {
				if src[i][st.key] {
					rep.Cached++
					continue
				}
				it := items[itemKey{metric, st.run.RunID, st.task}]
				it.SourceKey = st.key
				if owners, ok := inputs[it.Hash]; ok {
					rep.Cached++
					if !slices.Contains(owners, [2]string{it.RunID, it.Task}) {
						reuse = append(reuse, it)
					}
					continue
				}
				if l := leaders[it.Hash]; l != nil {
					followers[l] = append(followers[l], it)
					rep.Cached++
					continue
				}
				if seen != nil && seen[metric].has(hashKey(it.Hash)) {
					rep.Cached++
					continue
				}
				leaders[it.Hash] = it
				todo = append(todo, it)
				rep.EstInputTokens += int64(estTokens(it))
			}
			atomic.AddInt64(&prog.Cached, int64(rep.Cached-cached))
			if opt.DryRun {
				continue
			}
			var copies []rows.JudgeCall
			if len(reuse) > 0 {
				hashes := make([]string, len(reuse))
				for i, it := range reuse {
					hashes[i] = it.Hash
				}
				stored, err := w.JudgeAnswers(ctx, ep.Model, params, rb.Version, hashes)
				if err != nil {
					return stopped(first, err)
				}
				full, err := rendered(ctx, w, rb, reuse, runByID)
				if err != nil {
					return stopped(first, err)
				}
				for _, it := range full {
					c := &rows.JudgeCall{RunID: it.RunID, Task: it.Task, Metric: metric, InputHash: it.Hash, SourceKey: it.SourceKey}
					applyAnswer(c, it, rb, stored[it.Hash])
					copies = append(copies, *c)
				}
			}
			if opt.Batch != nil {
				var err error
				if exporting {
					err = exportBatch(ctx, w, ep, rb, todo, runByID, p.co, p.repeat, opt.Batch.Export, p.counts)
				} else {
					err = importBatch(ctx, w, ep, rb, p.repeat, todo, followers, copies, runByID, opt.Batch.Answers, stamper(ep, params, rb, prices), rep, p.counts)
				}
				if err != nil {
					return fail(i, err)
				}
				continue
			}
			if p.client == nil {
				p.client = NewClient(ep, p.co)
			}
			if err := ask(ctx, w, p.client, &p.checked, ep, rb, params, todo, followers, copies, runByID, opt, prices, rep, &prog, start); err != nil {
				return fail(i, err)
			}
		}
		if err := settle(); err != nil {
			reports = finish(len(plans))
			return reports, err
		}
		if seen != nil {
			met := map[string][]key16{}
			for k, it := range items {
				met[k.metric] = append(met[k.metric], hashKey(it.Hash))
			}
			for m, ks := range met {
				seen[m].add(ks)
			}
		}
	}
	reports = finish(len(plans))
	return reports, nil
}

// sliceRuns is how many runs a judge run plans and asks at a time.
const sliceRuns = 2000

// heapLimit is the Go heap's soft limit during a judge run.
const heapLimit = 320 << 20

// countItems is how many items of a metric runs have (as stubsOf lists
// them).
func countItems(runs []*rows.JudgeRun, rb *Rubric) int {
	n := 0
	for _, r := range runs {
		switch rb.Item {
		case TA:
			if r.TAStart != nil && r.TAEnd != nil {
				n++
			}
		case ItemRun:
			n++
		default:
			n += len(r.Tasks)
		}
	}
	return n
}

// key16 is what a dry run remembers of an input hash: its first 16
// bytes.
type key16 struct{ hi, lo uint64 }

func hashKey(h string) key16 {
	var b [16]byte
	if len(h) < 32 {
		sum := sha256.Sum256([]byte(h)) // not hex: hashed again
		copy(b[:], sum[:])
	} else if _, err := hex.Decode(b[:], []byte(h[:32])); err != nil {
		sum := sha256.Sum256([]byte(h))
		copy(b[:], sum[:])
	}
	return key16{binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])}
}

func cmpKey(a, b key16) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

// inputSet is a sorted set of inputs (16 bytes a hash: a quarter of a
// million runs' items in about a hundred megabytes).
type inputSet struct{ keys []key16 }

func (s *inputSet) has(k key16) bool {
	_, ok := slices.BinarySearchFunc(s.keys, k, cmpKey)
	return ok
}

// add merges ks (which it sorts) into the set.
func (s *inputSet) add(ks []key16) {
	slices.SortFunc(ks, cmpKey)
	ks = slices.Compact(ks)
	n := len(s.keys)
	s.keys = append(s.keys, ks...)
	for i, j, k := n-1, len(ks)-1, len(s.keys)-1; j >= 0; k-- {
		if i >= 0 && cmpKey(s.keys[i], ks[j]) > 0 {
			s.keys[k] = s.keys[i]
			i--
		} else {
			s.keys[k] = ks[j]
			j--
		}
	}
}

// withSettle is err after settle has run, with settle's error joined
// when it fails (err itself otherwise, so that errors.Is and == see it).
func withSettle(err error, settle func() error) error {
	if serr := settle(); serr != nil {
		return errors.Join(err, serr)
	}
	return err
}

// ask sends todo to the judge and saves each answer, with a copy for each
// of the item's followers (items with the same input); copies, answers
// already had, are saved first. Copies cost nothing and use no tokens.
func ask(ctx context.Context, w Store, c *Client, checked *bool, ep Endpoint, rb *Rubric, params string, todo []*Item, followers map[*Item][]*Item,
	copies []rows.JudgeCall, runByID map[string]*rows.JudgeRun, opt RunOptions, prices map[string]Price, rep *JudgeReport, prog *Progress, start time.Time) error {
	if len(todo) > 0 && !*checked {
		// A server that is not there fails the run now, not after hours
		// of retries.
		if err := c.Check(ctx); err != nil {
			return err
		}
		*checked = true
	}
	defer func() {
		rep.Notes = c.Notes()
		if urls := ep.URLs(); len(urls) > 1 {
			sent := c.Sent()
			var parts []string
			for _, u := range urls {
				parts = append(parts, fmt.Sprintf("%s %d", u, sent[u]))
			}
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: requests by server of its pool: %s", ep.Name, strings.Join(parts, ", ")))
		}
	}()
	_, known := prices[ep.Model]
	var mu sync.Mutex
	var firstErr error
	sv, err := newSaver(w)
	if err != nil {
		return err
	}
	stamp := stamper(ep, params, rb, prices)
	for i := range copies {
		stamp(&copies[i])
		sv.save(copies[i])
	}
	report := func() {
		// Under mu: the callback need not be safe for concurrent use.
		if opt.Progress != nil {
			opt.Progress(Progress{Total: atomic.LoadInt64(&prog.Total), Done: atomic.LoadInt64(&prog.Done),
				Cached: atomic.LoadInt64(&prog.Cached), Failed: atomic.LoadInt64(&prog.Failed), Retrying: c.Retrying(), Elapsed: time.Since(start)})
		}
	}
	// Progress every second too, so that waits and retries show.
	tick := time.NewTicker(time.Second)
	ticking := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick.C:
				mu.Lock()
				report()
				mu.Unlock()
			case <-ticking:
				return
			}
		}
	}()
	defer func() { tick.Stop(); close(ticking) }()
	type job struct{ full, lean *Item }
	jobs := make(chan job)
	var wg sync.WaitGroup
	for range c.Capacity() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				it := j.full
				call, attempts, err := judgeOne(ctx, c, it, rb)
				mu.Lock()
				rep.Requests += attempts
				mu.Unlock()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					atomic.AddInt64(&prog.Failed, 1)
					mu.Lock()
					rep.Failed++
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				stamp(call)
				// Unless forced, the cache was asked about this input
				// and had no answer (run): nothing stored to replace.
				call.New = !opt.Force
				sv.save(*call)
				for _, f := range followers[j.lean] {
					sv.save(copyOf(*call, f, stamp))
				}
				mu.Lock()
				rep.count(call)
				mu.Unlock()
				atomic.AddInt64(&prog.Done, 1)
				mu.Lock()
				report()
				mu.Unlock()
			}
		}()
	}
	// Rendered again a few runs at a time (todo is in run order), so that
	// memory holds a batch of prompts, not all of them.
	renderErr := eachRendered(ctx, w, rb, todo, runByID, func(it, lean *Item) error {
		select {
		case jobs <- job{full: it, lean: lean}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if ctx.Err() != nil {
		renderErr = nil // the interruption is reported below
	}
	close(jobs)
	wg.Wait()
	// Every answer received is written, also after Ctrl-C.
	if err := sv.close(); err != nil && firstErr == nil {
		firstErr = err
	}
	if renderErr != nil && firstErr == nil {
		firstErr = renderErr
	}
	if !known && rep.Sent > 0 {
		rep.CostUSD = nil
	}
	if ctx.Err() != nil {
		if firstErr != nil && rep.Failed == 0 {
			return firstErr
		}
		return ctx.Err()
	}
	if firstErr != nil && rep.Failed > 0 {
		return fmt.Errorf("%s: %d requests failed, the first: %v (every answer received is saved; run again to ask the rest)", ep.Name, rep.Failed, firstErr)
	}
	return firstErr
}

// count adds an answer sent (and received) to the report.
func (rep *JudgeReport) count(call *rows.JudgeCall) {
	rep.Sent++
	rep.InputTokens += call.InputTokens
	rep.OutputTokens += call.OutputTokens
	if call.Valid {
		rep.Valid++
	} else {
		rep.Invalid++
	}
	if call.CostUSD != nil {
		if rep.CostUSD == nil {
			rep.CostUSD = new(float64)
		}
		*rep.CostUSD += *call.CostUSD
	}
}

// copyOf is an answer's copy for an item with the same input: no
// request, no tokens, no cost.
func copyOf(call rows.JudgeCall, f *Item, stamp func(*rows.JudgeCall)) rows.JudgeCall {
	call.RunID, call.Task, call.SourceKey = f.RunID, f.Task, f.SourceKey
	call.InputTokens, call.OutputTokens, call.Attempts, call.Latency, call.CostUSD = 0, 0, 0, 0, nil
	stamp(&call)
	return call
}

// stamper sets what an answer was asked with: the judge, model,
// parameters and prompt version, and its cost when the model's price is
// known.
func stamper(ep Endpoint, params string, rb *Rubric, prices map[string]Price) func(*rows.JudgeCall) {
	price, known := prices[ep.Model]
	return func(call *rows.JudgeCall) {
		call.Model, call.Params, call.Prompt, call.Judge = ep.Model, params, rb.Version, ep.Name
		if known {
			cost := (float64(call.InputTokens)*price.Input + float64(call.OutputTokens)*price.Output) / 1e6
			call.CostUSD = &cost
		}
	}
}

// judgeOne asks about one item, and once more when the answer does not
// parse or cites what is not there.
func judgeOne(ctx context.Context, c *Client, it *Item, rb *Rubric) (*rows.JudgeCall, int, error) {
	call := &rows.JudgeCall{RunID: it.RunID, Task: it.Task, Metric: rb.Metric, InputHash: it.Hash, SourceKey: it.SourceKey}
	attempts := 0
	for try := 0; try < 2; try++ {
		r := Request{System: it.System, User: it.User, SchemaName: rb.schemaName(), Schema: rb.Schema(), EstTokens: estTokens(it)}
		if c.noSchema.Load() {
			r.Schema = nil
		}
		resp, err := c.Complete(ctx, r)
		if err != nil && r.Schema != nil && IsBadRequest(err) {
			// Maybe an endpoint without structured output: ask for plain
			// JSON (the prompt says so). Only when that works is the
			// endpoint taken to lack it, for the rest of the run: a 400
			// about this one item says nothing about the endpoint.
			attempts += attemptsOf(err)
			r.Schema = nil
			resp, err = c.Complete(ctx, r)
			if err == nil && c.noSchema.CompareAndSwap(false, true) {
				c.note(fmt.Sprintf("%s refused structured output (HTTP 400) and answered plain JSON: asking it for plain JSON from now on", c.ep.Name))
			}
		}
		if err != nil {
			return nil, attempts + attemptsOf(err), err
		}
		attempts += resp.Attempts
		call.Attempts = attempts
		call.InputTokens += resp.InputTokens
		call.OutputTokens += resp.OutputTokens
		call.Latency += resp.Latency
		if applyAnswer(call, it, rb, resp.Content) {
			break
		}
	}
	return call, attempts, nil
}

// attemptsOf is how many requests a failed Complete made.
func attemptsOf(err error) int {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Attempts
	}
	return 0
}

// applyAnswer parses an answer to an item and checks its evidence: a valid
// one sets the call's scores, reasons and evidence; an invalid one its
// reason. It says whether the answer is valid.
func applyAnswer(call *rows.JudgeCall, it *Item, rb *Rubric, content string) bool {
	call.Answer = content
	a, err := rb.ParseAnswer(content)
	if err == nil && rb.evidence {
		err = CheckEvidence(it, a)
	}
	if err != nil {
		call.Valid, call.Reason = false, err.Error()
		call.Scores, call.Reasons, call.Evidence = nil, "", nil
		return false
	}
	call.Valid, call.Reason = true, ""
	call.Reasons, call.Evidence = a.Reasons, a.Evidence
	call.Scores = map[string]float64{}
	for k, v := range a.Scores {
		call.Scores[rb.scoreKey(k)] = v
	}
	return true
}

// saver writes answers to the warehouse in batches, from one goroutine:
// every 512 answers or every second, and whatever is left when closed;
// but after a save that took d, the next waits until 4d have passed
// (savePaced).
type saver struct {
	in   chan rows.JudgeCall
	done chan error
}

const (
	saveBatch = 512
	saveEvery = time.Second
	// saveRest is how many times its own length the saver rests after a
	// save. A save replaces the calls and judgments of its items, found
	// by a join over the whole of judge_calls and judgments: its cost
	// grows with the warehouse, so batches of a fixed size cost the
	// square of the runs judged. Resting in proportion keeps saving to at
	// most a fifth of the run's time: where saves are slow, the batches
	// grow with the tables instead. The journal holds what waits.
	saveRest = 4
)

// savePaced tells whether a batch of n answers is to be saved now: n
// reached size or the ticker fired (due), and the rest after the last
// save, which took took and ended since ago, is over.
func savePaced(n, size int, due bool, took, since time.Duration) bool {
	if n == 0 || (n < size && !due) {
		return false
	}
	return since >= saveRest*took
}

// JournalPath is where a judge run keeps, line by line, the answers it has
// received and not yet written to the warehouse at path: written as each
// arrives, it survives a killed process (kill -9 included: the kernel has
// the bytes), and the next run puts what it holds into the warehouse
// before anything else (ReplayJournal).
func JournalPath(warehouse string) string { return warehouse + ".judge-journal.jsonl" }

// newSaver writes answers to the warehouse in batches (a statement per
// answer would cost a third of the client's CPU), each one first appended
// to the journal, which is emptied when its answers are in the warehouse.
func newSaver(w Store) (*saver, error) { return newSaverOf(w, saveBatch) }

// newSaverOf is newSaver writing every size answers (a batch import holds
// them all at once: fewer, larger transactions).
func newSaverOf(w Store, size int) (*saver, error) {
	j, err := os.OpenFile(JournalPath(w.Name()), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot keep a journal of answers beside the warehouse: %w", err)
	}
	s := &saver{in: make(chan rows.JudgeCall, size), done: make(chan error, 1)}
	go func() {
		var batch []rows.JudgeCall
		var firstErr error
		var line []byte
		var took time.Duration // how long the last save took
		var ended time.Time    // and when it ended
		flush := func() {
			if len(batch) == 0 {
				return
			}
			start := time.Now()
			defer func() { took, ended = time.Since(start), time.Now() }()
			if err := w.SaveJudgeCalls(context.Background(), batch); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return // the journal keeps them for the next run
			}
			batch = batch[:0]
			if err := j.Truncate(0); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		t := time.NewTicker(saveEvery)
		defer t.Stop()
		for {
			select {
			case c, ok := <-s.in:
				if !ok {
					flush()
					j.Close()
					if firstErr == nil {
						os.Remove(JournalPath(w.Name()))
					}
					s.done <- firstErr
					return
				}
				b, err := json.Marshal(c)
				if err == nil {
					line = append(append(line[:0], b...), '\n')
					_, err = j.Write(line)
				}
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("writing the journal of answers: %w", err)
				}
				batch = append(batch, c)
				if savePaced(len(batch), size, false, took, time.Since(ended)) {
					flush()
				}
			case <-t.C:
				if savePaced(len(batch), size, true, took, time.Since(ended)) {
					flush()
				}
			}
		}
	}()
	return s, nil
}

func (s *saver) save(c rows.JudgeCall) { s.in <- c }

func (s *saver) close() error {
	close(s.in)
	return <-s.done
}

// ReplayJournal writes to the warehouse the answers a killed judge run
// had received and not written (JournalPath), and removes the journal. A
// last line cut short by the kill is passed over. It returns how many
// answers it wrote.
func ReplayJournal(ctx context.Context, w Store) (int, error) {
	path := JournalPath(w.Name())
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var calls []rows.JudgeCall
	for _, ln := range bytes.Split(b, []byte("\n")) {
		var c rows.JudgeCall
		if len(ln) > 0 && json.Unmarshal(ln, &c) == nil {
			calls = append(calls, c)
		}
	}
	if err := w.SaveJudgeCalls(ctx, calls); err != nil {
		return 0, fmt.Errorf("writing the answers of a killed run (%s): %w", path, err)
	}
	return len(calls), os.Remove(path)
}

// renderVersion names the way Items turns a run into prompts. Change it
// whenever Items renders the same run differently: source keys made by
// an older gymlens must then miss.
const renderVersion = "items/1"

// rendered renders the lean items again, in full, in their order: their
// runs' records are read and the prompts made as when they were planned
// (the hash must match: rendering is deterministic). An item that kept
// its text is given as it is.
func rendered(ctx context.Context, w Store, rb *Rubric, lean []*Item, runByID map[string]*rows.JudgeRun) ([]*Item, error) {
	metric := rb.Metric
	var runs []*rows.JudgeRun
	seen := map[string]bool{}
	for _, it := range lean {
		if !it.isRendered() && !seen[it.RunID] {
			seen[it.RunID] = true
			runs = append(runs, runByID[it.RunID])
		}
	}
	items, err := buildItems(ctx, w, []*Rubric{rb}, runs, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*Item, len(lean))
	for i, l := range lean {
		if l.isRendered() {
			out[i] = l
			continue
		}
		full := items[itemKey{metric, l.RunID, l.Task}]
		if full == nil || full.Hash != l.Hash {
			return nil, fmt.Errorf("the %s item of run %s task %q rendered differently the second time (a gymlens bug: please report it)", metric, l.RunID, l.Task)
		}
		full.SourceKey = l.SourceKey
		out[i] = full
	}
	return out, nil
}

// stub is an item before rendering: the run and task it is about, and its
// source key.
type stub struct {
	run  *rows.JudgeRun
	task string
	key  string
}

type itemKey struct{ metric, run, task string }

// stubsOf lists the items of a metric in order (runs by id, then tasks as
// the scenario lists them).
func stubsOf(runs []*rows.JudgeRun, rb *Rubric) []stub {
	var out []stub
	for _, r := range runs {
		switch rb.Item {
		case TA:
			if r.TAStart != nil && r.TAEnd != nil {
				out = append(out, stub{run: r, key: sourceKey(rb, r, nil)})
			}
		case ItemRun:
			out = append(out, stub{run: r, key: sourceKey(rb, r, nil)})
		default:
			for i := range r.Tasks {
				out = append(out, stub{run: r, task: r.Tasks[i].Task, key: sourceKey(rb, r, &r.Tasks[i])})
			}
		}
	}
	return out
}

// sourceKey hashes what an item's rendered input is made of: the renderer
// and prompt, the run's and the scenario's content (which include the
// persona, the rubric, the final turn and the decision window), the task
// and, for TC, the depth the scores chose.
func sourceKey(rb *Rubric, r *rows.JudgeRun, t *rows.JudgeTask) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d\x00%d", renderVersion, rb.Version, rb.textDigest(), r.RunID, r.RunHash, r.ScenarioHash)
	if t != nil {
		fmt.Fprintf(h, "\x00%s", t.Task)
		if rb.Item == TC {
			fmt.Fprintf(h, "\x00%s", t.Chosen)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

var promptDigests sync.Map

func promptDigest(metric string) string {
	if d, ok := promptDigests.Load(metric); ok {
		return d.(string)
	}
	sum := sha256.Sum256([]byte(Prompt(metric)))
	d := hex.EncodeToString(sum[:])
	promptDigests.Store(metric, d)
	return d
}

// keptItemBytes is how much of a slice's rendered items (keepBudget,
// itemBytes) a judge run keeps from planning for the asks. The TA items
// of a 2,000-run slice of the sample take 19 MB; its TC items 112 MB and
// its TR-J items 219 MB, and those of the runs past the budget are
// rendered again for each ask (docs/benchmarks.md).
const keptItemBytes = 32 << 20

// keepBudget is what is left of the bytes of rendered items buildItems
// may keep; a nil budget keeps every item.
type keepBudget struct{ left atomic.Int64 }

func newKeepBudget(n int64) *keepBudget {
	b := &keepBudget{}
	b.left.Store(n)
	return b
}

// take says whether n more bytes fit, and if so counts them.
func (b *keepBudget) take(n int64) bool {
	if b == nil {
		return true
	}
	for {
		left := b.left.Load()
		if n > left {
			return false
		}
		if b.left.CompareAndSwap(left, left-n) {
			return true
		}
	}
}

// itemBytes is about what a rendered item holds in memory: its text, its
// data and the records it may cite.
func itemBytes(it *Item) int64 {
	n := int64(len(it.System) + len(it.User) + len(it.data) + len(it.Hash) + 256)
	for i := range it.Records {
		r := &it.Records[i]
		n += int64(len(r.Time)+len(r.Actor)+len(r.Kind)+len(r.Task)+len(r.Text)+len(r.Tool)+len(r.Args)+len(r.Result)) + 9*16
	}
	return n
}

// isRendered says whether an item holds its prompt (a lean one does not;
// a rendered prompt always has a user message).
func (it *Item) isRendered() bool { return it.User != "" }

// buildItems renders the items of every metric for the given runs, on
// every core, keyed by metric, run and task. A run's items keep their
// text if the budget has room for all of them; the others are lean: no
// text, data or records, only what plans an ask.
func buildItems(ctx context.Context, w Store, rubs []*Rubric, runs []*rows.JudgeRun, budget *keepBudget) (map[itemKey]*Item, error) {
	out := map[itemKey]*Item{}
	if len(runs) == 0 {
		return out, nil
	}
	jobs := make(chan *rows.JudgeRun, 64)
	results := make(chan []Item, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				var its []Item
				for _, rb := range rubs {
					its = append(its, rb.Items(r)...)
				}
				var size int64
				for i := range its {
					its[i].Tokens = estTokens(&its[i])
					size += itemBytes(&its[i])
				}
				if !budget.take(size) {
					for i := range its {
						its[i] = Item{Metric: its[i].Metric, RunID: its[i].RunID, Task: its[i].Task, Hash: its[i].Hash, Tokens: its[i].Tokens}
					}
				}
				results <- its
			}
		}()
	}
	var cwg sync.WaitGroup
	cwg.Add(1)
	go func() {
		defer cwg.Done()
		for its := range results {
			for i := range its {
				out[itemKey{its[i].Metric, its[i].RunID, its[i].Task}] = &its[i]
			}
		}
	}()
	err := w.ScanJudgeEvents(ctx, runs, func(r *rows.JudgeRun) error {
		// A copy: ScanJudgeEvents drops r.Events when this returns, while
		// the copy keeps them until the items are made.
		cp := *r
		select {
		case jobs <- &cp:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(jobs)
	wg.Wait()
	close(results)
	cwg.Wait()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadPrices reads a prices file: {"model": {"input": $ per 1M tokens,
// "output": …}}.
func ReadPrices(path string) (map[string]Price, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--prices: %w", err)
	}
	var p map[string]Price
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("--prices %s: expected {\"model\": {\"input\": …, \"output\": …}}: %w", path, err)
	}
	return p, nil
}

// ReportTable lays the reports out as one row per judge and metric: items,
// cache hits, answers by outcome, requests, tokens and cost (unknown
// without prices; none for a dry run or when nothing was sent).
func ReportTable(reps []JudgeReport, dry bool) ([]string, [][]any) {
	cols := []string{"judge", "model", "metric", "items", "cached", "sent", "valid", "invalid", "failed",
		"requests", "est_input_tokens", "input_tokens", "output_tokens", "cost_usd"}
	seeds := slices.ContainsFunc(reps, func(r JudgeReport) bool { return r.Seed != nil })
	if seeds {
		cols = slices.Insert(cols, 3, "seed")
	}
	var out [][]any
	for _, r := range reps {
		var cost any = "unknown"
		if r.CostUSD != nil {
			cost = *r.CostUSD
		}
		if dry || r.Sent == 0 {
			cost = any(nil)
			if dry {
				cost = "–"
			}
		}
		row := []any{r.Judge, r.Model, r.Metric, r.Items, r.Cached, r.Sent, r.Valid, r.Invalid, r.Failed,
			r.Requests, r.EstInputTokens, r.InputTokens, r.OutputTokens, cost}
		if seeds {
			var seed any
			if r.Seed != nil {
				seed = *r.Seed
			}
			row = slices.Insert(row, 3, seed)
		}
		out = append(out, row)
	}
	return cols, out
}

// Sent is the number of answers the reports received (and saved).
func Sent(reps []JudgeReport) int {
	n := 0
	for _, r := range reps {
		n += r.Sent
	}
	return n
}

// ReportNotes are the reports' notes, each once, in order.
func ReportNotes(reps []JudgeReport) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range reps {
		for _, n := range r.Notes {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}
