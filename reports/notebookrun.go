package reports

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/plots"
)

// NotebookCommands are the gymlens commands a notebook block may run:
// those that only read.
var NotebookCommands = []string{"table", "plot", "metrics", "compare", "corr", "agree", "human", "query", "reconcile", "decisions"}

// NotebookOptions say how a notebook's blocks run.
type NotebookOptions struct {
	// Store is the warehouse the table and plot blocks read, through one
	// Dataset per distinct selection, so that a table or estimate two
	// blocks share is computed once.
	Store Store
	Name  string // the warehouse, in messages
	// Query runs a ```sql block (read-only).
	Query func(ctx context.Context, sql string) ([]string, [][]any, error)
	// Command runs a ```gymlens block other than table and plot and returns
	// what it printed (the command's own text output).
	Command func(ctx context.Context, args []string) (string, error)
}

// RunNotebookFile runs the notebook file (its source src): ```sql blocks
// through Query, ```gymlens table and plot blocks through the library
// (Tables, Figure), the other commands through Command. It returns every
// file to write, by name: NAME.md, NAME.html and the figures.
func RunNotebookFile(ctx context.Context, file string, src []byte, opt NotebookOptions) (map[string][]byte, error) {
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	nb := &notebookRun{ctx: ctx, opt: opt, stem: stem, datasets: map[string]*Dataset{}}
	runners := map[string]func(Block) (BlockOutput, error){"sql": nb.sql, "gymlens": nb.gymlens}
	md, page, files, err := RunNotebook(file, src, runners)
	if err != nil {
		return nil, err
	}
	files[stem+".md"], files[stem+".html"] = md, page
	return files, nil
}

type notebookRun struct {
	ctx      context.Context
	opt      NotebookOptions
	stem     string
	nfig     int
	datasets map[string]*Dataset // by selection and bootstrap options
}

func (nb *notebookRun) sql(b Block) (BlockOutput, error) {
	cols, rows, err := nb.opt.Query(nb.ctx, b.Code)
	if err != nil {
		return BlockOutput{}, err
	}
	t := ResultTable(fmt.Sprintf("%s-%d", nb.stem, b.Line), fmt.Sprintf("%d rows", len(rows)), &Result{Columns: cols, Rows: rows})
	return tablesOutput([]*Table{t}, TableOptions{}, "<div class=\"table-wrap\">", "</div>")
}

func (nb *notebookRun) gymlens(b Block) (BlockOutput, error) {
	args, err := SplitArgs(b.Code)
	if err != nil {
		return BlockOutput{}, err
	}
	if len(args) == 0 || !slices.Contains(NotebookCommands, args[0]) {
		return BlockOutput{}, fmt.Errorf("a gymlens block runs one of %s", strings.Join(NotebookCommands, ", "))
	}
	switch args[0] {
	case "table", "plot":
		return nb.output(args)
	}
	out, err := nb.opt.Command(nb.ctx, args)
	if err != nil {
		return BlockOutput{}, err
	}
	return BlockOutput{Markdown: "```text\n" + strings.TrimRight(out, "\n") + "\n```",
		HTML: "<pre>" + html.EscapeString(out) + "</pre>"}, nil
}

// output runs a table or plot block: its flags (those of gymlens table and
// gymlens plot) choose the dataset, which is shared with every block that
// makes the same choice.
func (nb *notebookRun) output(args []string) (BlockOutput, error) {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d := analysis.DefaultBootstrap
	resamples := fs.Int("resamples", d.Resamples, "")
	seed := fs.Uint64("seed", d.Seed, "")
	level := fs.Float64("level", d.Level, "")
	method := fs.String("ci", d.Method, "")
	judge := fs.String("judge", "", "")
	var where []string
	fs.Func("where", "", func(s string) error { where = append(where, s); return nil })
	intervals, judges := new(bool), new(string)
	metric, sw, question := new(string), new(string), new(string)
	if args[0] == "table" {
		intervals = fs.Bool("intervals", true, "")
		judges = fs.String("judges", "", "")
	} else {
		metric = fs.String("metric", "TC", "")
		sw = fs.String("switch", "CC,OC", "")
		question = fs.String("question", "trust", "")
	}
	// The name may stand before or after the flags.
	rest := args[1:]
	var names []string
	for len(rest) > 0 {
		if err := fs.Parse(rest); err != nil {
			return BlockOutput{}, analysis.Optionf("%s: %v", args[0], err)
		}
		rest = fs.Args()
		if len(rest) > 0 {
			names, rest = append(names, rest[0]), rest[1:]
		}
	}
	if len(names) != 1 {
		return BlockOutput{}, analysis.Optionf("%s: name one", args[0])
	}
	o := Options{Name: nb.opt.Name, Keep: KeepTasks, Judge: *judge, Judges: SplitList(*judges), FigureMetric: *metric,
		Question: *question, Switch: SplitList(*sw),
		Bootstrap: analysis.BootstrapOptions{Resamples: *resamples, Seed: *seed, Level: *level, Method: *method, Workers: runtime.GOMAXPROCS(0)}}
	if err := o.Bootstrap.Check("level"); err != nil {
		return BlockOutput{}, &analysis.OptionError{Err: err}
	}
	if fs.Lookup("resamples") != nil && isSet(fs, "resamples") {
		o.StudyResamples = *resamples
	}
	var err error
	if o.Where, err = analysis.ParseWhere(where, nil, ""); err != nil {
		return BlockOutput{}, err
	}
	key := fmt.Sprint(o.Judge, o.Judges, o.Where, o.Bootstrap, o.StudyResamples, o.FigureMetric, o.Question, o.Switch)
	ds := nb.datasets[key]
	if ds == nil {
		if ds, err = NewDataset(nb.ctx, nb.opt.Store, o); err != nil {
			return BlockOutput{}, err
		}
		nb.datasets[key] = ds
	}
	if args[0] == "table" {
		if !slices.Contains(TableNames, names[0]) {
			return BlockOutput{}, analysis.Optionf("table: unknown table %q: expected one of %s", names[0], strings.Join(TableNames, ", "))
		}
		ts, err := Tables(ds, names[0])
		if err != nil {
			return BlockOutput{}, err
		}
		return tablesOutput(ts, TableOptions{Intervals: *intervals}, "", "")
	}
	if !slices.Contains(plots.FigureNames, names[0]) {
		return BlockOutput{}, analysis.Optionf("plot: unknown figure %q: expected one of %s", names[0], strings.Join(plots.FigureNames, ", "))
	}
	fig, err := Figure(ds, names[0])
	if err != nil {
		return BlockOutput{}, err
	}
	png, err := fig.Render("png")
	if err != nil {
		return BlockOutput{}, err
	}
	nb.nfig++
	name := fmt.Sprintf("%s-figure-%d.png", nb.stem, nb.nfig)
	return BlockOutput{
		Markdown: fmt.Sprintf("![%s](%s)", strings.Join(args, " "), name),
		HTML:     fmt.Sprintf("<img src=\"data:image/png;base64,%s\" alt=\"%s\">", base64.StdEncoding.EncodeToString(png), html.EscapeString(strings.Join(args, " "))),
		Files:    map[string][]byte{name: png},
	}, nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// SplitList splits a comma-separated list, each item trimmed, empty ones
// left out.
func SplitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// tablesOutput writes tables as Markdown and HTML (WriteTables), the HTML
// inside open and close.
func tablesOutput(ts []*Table, o TableOptions, open, close string) (BlockOutput, error) {
	var md, page bytes.Buffer
	if err := WriteTables(&md, "md", ts, o); err != nil {
		return BlockOutput{}, err
	}
	if err := WriteTables(&page, "html", ts, o); err != nil {
		return BlockOutput{}, err
	}
	return BlockOutput{Markdown: md.String(), HTML: open + page.String() + close}, nil
}

// SplitArgs splits a command line into words, with single and double
// quotes; "gymlens" in front is allowed and dropped; newlines are spaces
// and a backslash continues a line, as in a shell.
func SplitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '\\':
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if inWord {
		out = append(out, cur.String())
	}
	if len(out) > 0 && out[0] == "gymlens" {
		out = out[1:]
	}
	return out, nil
}
