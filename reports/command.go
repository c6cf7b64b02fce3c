package reports

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// A Command is one of the commands that only read the warehouse (metrics,
// compare, table, …), declared once: its parameters, its help and what it
// runs. The CLI makes its flags from the parameters, a notebook block
// parses the same parameters (Command.Parse) and the viewer reads them
// from a query, so that every face computes the same thing the same way.
type Command struct {
	Name, Usage, ArgsUsage, Description string
	Params                              []Param
	// Formats are the --format values the command writes, Default the
	// one it writes when none is asked for.
	Formats []string
	Default string
	Run     func(ctx context.Context, x *Exec) error
}

// A Param is one option of a command. Default is a string, int, uint64,
// float64 or bool; nil makes a list (a flag given once per value).
type Param struct {
	Name             string
	Default          any
	Usage            string
	Required, Hidden bool
}

// Args are the values of a command's parameters (each the default unless
// set) and its positional arguments.
type Args struct {
	Pos    []string
	values map[string]any
	set    map[string]bool
}

// NewArgs makes empty Args with the positional arguments pos.
func NewArgs(pos []string) *Args {
	return &Args{Pos: pos, values: map[string]any{}, set: map[string]bool{}}
}

// Put gives the parameter name the value v; set says that the caller
// named it (rather than leaving the default).
func (a *Args) Put(name string, v any, set bool) {
	a.values[name] = v
	a.set[name] = set
}

// Has says whether the command has the parameter name.
func (a *Args) Has(name string) bool { _, ok := a.values[name]; return ok }

// IsSet says whether the caller gave the parameter name.
func (a *Args) IsSet(name string) bool { return a.set[name] }

func (a *Args) String(name string) string  { v, _ := a.values[name].(string); return v }
func (a *Args) Int(name string) int        { v, _ := a.values[name].(int); return v }
func (a *Args) Uint(name string) uint64    { v, _ := a.values[name].(uint64); return v }
func (a *Args) Float(name string) float64  { v, _ := a.values[name].(float64); return v }
func (a *Args) Bool(name string) bool      { v, _ := a.values[name].(bool); return v }
func (a *Args) List(name string) []string  { v, _ := a.values[name].([]string); return v }
func (a *Args) Split(name string) []string { return SplitList(a.String(name)) }

// Parse reads a command line of the command (its words after the
// command's name: flags as -name value, --name=value, flags and
// positional arguments in any order).
func (c *Command) Parse(words []string) (*Args, error) {
	fs := flag.NewFlagSet(c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	lists := map[string]*[]string{}
	get := map[string]func() any{}
	for _, p := range c.Params {
		switch d := p.Default.(type) {
		case string:
			v := fs.String(p.Name, d, "")
			get[p.Name] = func() any { return *v }
		case int:
			v := fs.Int(p.Name, d, "")
			get[p.Name] = func() any { return *v }
		case uint64:
			v := fs.Uint64(p.Name, d, "")
			get[p.Name] = func() any { return *v }
		case float64:
			v := fs.Float64(p.Name, d, "")
			get[p.Name] = func() any { return *v }
		case bool:
			v := fs.Bool(p.Name, d, "")
			get[p.Name] = func() any { return *v }
		case nil:
			l := new([]string)
			lists[p.Name] = l
			fs.Func(p.Name, "", func(s string) error { *l = append(*l, s); return nil })
			get[p.Name] = func() any { return *l }
		}
	}
	var pos []string
	for rest := words; len(rest) > 0; {
		if err := fs.Parse(rest); err != nil {
			return nil, analysis.Optionf("%s: %v", c.Name, err)
		}
		if rest = fs.Args(); len(rest) > 0 {
			pos, rest = append(pos, rest[0]), rest[1:]
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	a := NewArgs(pos)
	for _, p := range c.Params {
		a.Put(p.Name, get[p.Name](), set[p.Name])
	}
	return a, nil
}

// Warehouse is what the reading commands read: the runs and ratings
// (Store), the PARE rows, and read-only SQL. ingest.Warehouse is one.
type Warehouse interface {
	Store
	PAREStore
	LoadPARESamples(ctx context.Context) ([]rows.PARESampleRow, int, error)
	DecisionTable(ctx context.Context) ([]string, [][]any, error)
	Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error)
	QueryFunc(ctx context.Context, query string, head func(cols []string) error, row func(vals []any) error, args ...any) error
}

// Exec is one run of a command: its arguments, where it writes and in
// which format, and how it reaches the warehouse (opened when the command
// first needs it, after its arguments are checked).
type Exec struct {
	*Args
	Format   string
	Out, Err io.Writer // results; notes (unless Quiet)
	Quiet    bool
	Name     string // the warehouse, in messages
	Open     func(ctx context.Context) (Warehouse, error)
	// ReadRatings reads a long-format ratings file (agree --input) into
	// one rating set per question (ingest/runlog.ReadRatingSets).
	ReadRatings func(path string, categories []string, level string) ([]rows.RatingSet, error)
	// Progress, when not nil, is told how a long read goes (Options.Progress).
	Progress func(Progress)
	// Datasets, when not nil, keeps the datasets made, by their options,
	// for the next Exec that shares the map (the blocks of a notebook).
	Datasets map[string]*Dataset
	w        Warehouse
	made     []*Dataset        // the datasets it used
	noted    map[*Dataset]bool // those whose judge notes are said
}

// Warehouse opens the warehouse on first use.
func (x *Exec) Warehouse(ctx context.Context) (Warehouse, error) {
	if x.w == nil {
		w, err := x.Open(ctx)
		if err != nil {
			return nil, err
		}
		x.w = w
	}
	return x.w, nil
}

// Writer is the results writer of the run's format.
func (x *Exec) Writer() *Writer { return NewWriter(x.Out, x.Format, x.Quiet) }

// note prints a note on Err unless Quiet.
func (x *Exec) note(format string, args ...any) {
	if !x.Quiet {
		fmt.Fprintf(x.Err, "note: "+format+"\n", args...)
	}
}

// Bootstrap reads the bootstrap parameters (resamples, seed, level or
// confidence, ci); a command without them gets analysis.DefaultBootstrap.
func (a *Args) Bootstrap() (analysis.BootstrapOptions, error) {
	o := analysis.DefaultBootstrap
	o.Workers = runtime.GOMAXPROCS(0)
	if !a.Has("resamples") {
		return o, nil
	}
	o.Resamples, o.Seed, o.Level, o.Method = a.Int("resamples"), a.Uint("seed"), a.Float("level"), a.String("ci")
	level := "level"
	if a.Has("confidence") {
		level, o.Level = "confidence", a.Float("confidence")
	}
	if err := o.Check(level); err != nil {
		return o, &analysis.OptionError{Err: err}
	}
	return o, nil
}

// Where reads the repeated where parameter (DIM=VALUE) against dims (nil:
// the 3T dimensions).
func (a *Args) Where(dims []string) (map[string][]string, error) {
	return analysis.ParseWhere(a.List("where"), dims, "PARE runs")
}

// Options turns the selection, bootstrap and figure parameters a command
// has into the options of a Dataset over the warehouse name.
func (a *Args) Options(name string, keep Keep) (Options, error) {
	opt := Options{Name: name, Keep: keep, Judge: a.String("judge"), JudgeNoise: a.Bool("judge-noise"), Metrics: a.Split("metrics"), Judges: a.Split("judges"),
		FigureMetric: a.String("metric"), Question: a.String("question"), Switch: a.Split("switch"), Mark: a.String("mark"),
		Families: a.String("families")}
	if opt.Mark != "" && opt.Mark != "rank" && opt.Mark != "significance" {
		return opt, analysis.Optionf("--mark: expected rank or significance, found %q", opt.Mark)
	}
	var err error
	if opt.Bootstrap, err = a.Bootstrap(); err != nil {
		return opt, err
	}
	opt.Bootstrap.TwoLevel = a.Bool("two-level")
	if opt.Where, err = a.Where(nil); err != nil {
		return opt, err
	}
	if a.IsSet("resamples") {
		opt.StudyResamples = a.Int("resamples")
	}
	return opt, nil
}

// Dataset makes the dataset the arguments choose (shared through
// Datasets when the run has them).
func (x *Exec) Dataset(ctx context.Context, keep Keep) (*Dataset, error) {
	opt, err := x.Options(x.Name, keep)
	if err != nil {
		return nil, err
	}
	w, err := x.Warehouse(ctx)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%+v", opt)
	if ds := x.Datasets[key]; ds != nil {
		x.made = append(x.made, ds)
		return ds, nil
	}
	opt.Progress = x.Progress // not in the key: the same read whoever watches it
	ds, err := NewDataset(ctx, w, opt)
	if err != nil {
		return nil, err
	}
	if x.Datasets != nil {
		// Another block's dataset may hold the same runs: share them.
		for _, k := range slices.Sorted(maps.Keys(x.Datasets)) {
			if ds.ShareFrom(x.Datasets[k]) {
				break
			}
		}
		x.Datasets[key] = ds
	}
	x.made = append(x.made, ds)
	return ds, nil
}

// footnotes prints the notes and returns the footnote that says how the
// intervals were made.
func (x *Exec) footnotes(notes []string, opt analysis.BootstrapOptions, clusters string) []string {
	for _, n := range notes {
		x.note("%s", n)
	}
	return []string{fmt.Sprintf("%g%% intervals; bootstrap: %s, clusters = %s, %d resamples, seed %d",
		100*opt.Level, opt.Method, clusters, opt.Resamples, opt.Seed)}
}

// CommandNamed returns the reading command name, or nil.
func CommandNamed(name string) *Command {
	for _, c := range Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// NotebookCommands are the commands a notebook block may run: the
// reading commands.
var NotebookCommands []string

func init() {
	for _, c := range Commands {
		NotebookCommands = append(NotebookCommands, c.Name)
		// Every reading command notes the judges that judged some of
		// the items its numbers average, unless its output did.
		run := c.Run
		c.Run = func(ctx context.Context, x *Exec) error {
			err := run(ctx, x)
			if err == nil && !(c.Name == "agree" && !x.Bool("human")) { // agree compares judges, never averages them
				x.noteJudges()
			}
			return err
		}
	}
}

// judgesNoted records that the output of ds's numbers carries its judge
// notes (Dataset.JudgeNotes) already.
func (x *Exec) judgesNoted(ds *Dataset) {
	if x.noted == nil {
		x.noted = map[*Dataset]bool{}
	}
	x.noted[ds] = true
}

// noteJudges prints the judge notes of each dataset this Exec read
// whose output did not carry them.
func (x *Exec) noteJudges() {
	for _, ds := range x.made {
		if x.noted[ds] || ds.values == nil {
			continue
		}
		x.judgesNoted(ds)
		if notes, err := ds.JudgeNotes(); err == nil {
			for _, n := range notes {
				x.note("%s", n)
			}
		}
	}
}

// BootstrapParams are the parameters of the cluster bootstrap, with
// resamples by default and the confidence level named level.
func BootstrapParams(resamples int, level string) []Param {
	d := analysis.DefaultBootstrap
	return []Param{
		{Name: "resamples", Default: resamples, Usage: "bootstrap `N` resamples"},
		{Name: "seed", Default: d.Seed, Usage: "bootstrap `SEED`"},
		{Name: level, Default: d.Level, Usage: "confidence `LEVEL`"},
		{Name: "ci", Default: d.Method, Usage: "interval `METHOD`: expanded-percentile, percentile or bca"},
	}
}

// bootstrapParams are BootstrapParams with the default resamples.
func bootstrapParams() []Param { return BootstrapParams(analysis.DefaultBootstrap.Resamples, "level") }

// SelectionParams choose the runs, the metrics and the judge.
func SelectionParams() []Param {
	return []Param{
		{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat; values of one dimension are alternatives)"},
		{Name: "metrics", Default: "", Usage: "`NAMES` to estimate, or \"all\" (default: " + strings.Join(analysis.MainMetrics, ",") + " and your rubrics' custom.NAME)"},
		{Name: "judge", Default: "", Usage: "use one `JUDGE`'s judgments instead of the average"},
		{Name: "two-level", Default: false, Usage: "the metrics' intervals by a two-level bootstrap: the scenarios, then the runs within each scenario drawn"},
		{Name: "judge-noise", Default: false, Usage: "intervals include the judges' own noise: each resample also redraws the answers of items asked again (judge --repeats)"},
	}
}

var (
	whereParam = Param{Name: "where", Usage: "keep runs with `DIM=VALUE` (repeat)"}
	judgeParam = Param{Name: "judge", Default: "", Usage: "use one `JUDGE`'s judgments instead of the average"}
)

func params(lists ...[]Param) []Param { return slices.Concat(lists...) }
