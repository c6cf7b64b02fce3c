package reports

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gymlens/gymlens/analysis"
	"github.com/gymlens/gymlens/ingest/rows"
)

// NotebookOptions say how a notebook's blocks run.
type NotebookOptions struct {
	// Store is the warehouse the blocks read (read-only); blocks that
	// make the same choice of runs, judge and bootstrap share one Dataset,
	// so that a table or estimate two blocks share is computed once.
	Store Warehouse
	Name  string // the warehouse, in messages
	// ReadRatings reads the ratings file of an `agree --input` block
	// (Exec.ReadRatings).
	ReadRatings func(path string, categories []string, level string) ([]rows.RatingSet, error)
	// Strict fails on a block whose data the warehouse lacks
	// (analysis.ErrNoData); otherwise the block's output is a note saying
	// so and the notebook goes on.
	Strict bool
}

// RunNotebookFile runs the notebook file (its source src): ```sql blocks
// as read-only queries, ```gymlens blocks as the reading commands
// (Commands) through the library: a table as a table, a figure as an
// image, any other command as the text it prints. It returns every file
// to write, by name: NAME.md, NAME.html and the figures.
func RunNotebookFile(ctx context.Context, file string, src []byte, opt NotebookOptions) (map[string][]byte, error) {
	stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	nb := &notebookRun{ctx: ctx, opt: opt, stem: stem, datasets: map[string]*Dataset{}}
	runners := map[string]func(Block) (BlockOutput, error){"sql": nb.sql, "gymlens": func(b Block) (BlockOutput, error) {
		out, err := nb.gymlens(b)
		if errors.Is(err, analysis.ErrNoData) && !opt.Strict {
			msg := "Not run on this warehouse: " + err.Error() + "."
			return BlockOutput{Markdown: "> **Note.** " + mdEscaper.Replace(msg), HTML: `<p class="note">` + html.EscapeString(msg) + "</p>"}, nil
		}
		return out, err
	}}
	md, page, files, err := RunNotebook(file, src, runners)
	if err != nil {
		return nil, err
	}
	files[stem+".md"], files[stem+".html"] = md, page
	return files, nil
}

// WriteNotebookFolder reads the notebook file, then opens the warehouse
// its blocks read (open fills in opt.Store), runs them
// (RunNotebookFile) and writes what they make into dir, made when
// missing: nothing unless every block ran, each file whole
// (WriteFileAtomic). It returns the paths written, in name order.
func WriteNotebookFolder(ctx context.Context, file, dir string, opt NotebookOptions, open func(context.Context) (Warehouse, error)) ([]string, error) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if opt.Store, err = open(ctx); err != nil {
		return nil, err
	}
	files, err := RunNotebookFile(ctx, file, src, opt)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	var paths []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p, b := filepath.Join(dir, name), files[name]
		if err := WriteFileAtomic(p, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return nil, err
		}
		paths = append(paths, p)
	}
	return paths, nil
}

type notebookRun struct {
	ctx      context.Context
	opt      NotebookOptions
	stem     string
	nfig     int
	datasets map[string]*Dataset // by their options
}

func (nb *notebookRun) sql(b Block) (BlockOutput, error) {
	cols, rows, err := nb.opt.Store.Query(nb.ctx, b.Code)
	if err != nil {
		return BlockOutput{}, err
	}
	t := ResultTable(fmt.Sprintf("%s-%d", nb.stem, b.Line), fmt.Sprintf("%d rows", len(rows)), &Result{Columns: cols, Rows: rows})
	return tablesOutput([]*Table{t}, TableOptions{}, "<div class=\"table-wrap\">", "</div>")
}

func (nb *notebookRun) gymlens(b Block) (BlockOutput, error) {
	words, err := SplitArgs(b.Code)
	if err != nil {
		return BlockOutput{}, err
	}
	var c *Command
	if len(words) > 0 {
		c = CommandNamed(words[0])
	}
	if c == nil {
		return BlockOutput{}, fmt.Errorf("a gymlens block runs one of %s", strings.Join(NotebookCommands, ", "))
	}
	args, err := c.Parse(words[1:])
	if err != nil {
		return BlockOutput{}, err
	}
	var out bytes.Buffer
	x := &Exec{Args: args, Format: c.Default, Out: &out, Err: io.Discard, Quiet: true, Name: nb.opt.Name, Datasets: nb.datasets,
		Open: func(context.Context) (Warehouse, error) { return nb.opt.Store, nil }, ReadRatings: nb.opt.ReadRatings}
	switch c.Name {
	case "table":
		if x.String("source") == "inspect" {
			ts, opt, err := x.inspectTables(nb.ctx)
			if err != nil {
				return BlockOutput{}, err
			}
			return tablesOutput(ts, opt, "", "")
		}
		name, err := x.tableName()
		if err != nil {
			return BlockOutput{}, err
		}
		ds, err := x.Dataset(nb.ctx, KeepPacked)
		if err != nil {
			return BlockOutput{}, err
		}
		ts, err := Tables(ds, name)
		if err != nil {
			return BlockOutput{}, err
		}
		opt, err := x.TableOptions()
		if err != nil {
			return BlockOutput{}, err
		}
		return tablesOutput(ts, opt, "", "")
	case "plot":
		fig, err := x.figure(nb.ctx)
		if err != nil {
			return BlockOutput{}, err
		}
		if err := fig.Resize(x.String("size")); err != nil {
			return BlockOutput{}, &analysis.OptionError{Err: err}
		}
		png, err := fig.Render("png")
		if err != nil {
			return BlockOutput{}, err
		}
		nb.nfig++
		name := fmt.Sprintf("%s-figure-%d.png", nb.stem, nb.nfig)
		alt := html.EscapeString(strings.Join(words, " "))
		return BlockOutput{
			Markdown: fmt.Sprintf("![%s](%s)", strings.Join(words, " "), name),
			HTML:     fmt.Sprintf("<img src=\"data:image/png;base64,%s\" alt=\"%s\">", base64.StdEncoding.EncodeToString(png), alt),
			Files:    map[string][]byte{name: png},
		}, nil
	}
	if err := c.Run(nb.ctx, x); err != nil {
		return BlockOutput{}, err
	}
	text := out.String()
	return BlockOutput{Markdown: "```text\n" + strings.TrimRight(text, "\n") + "\n```",
		HTML: "<pre>" + html.EscapeString(text) + "</pre>"}, nil
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
