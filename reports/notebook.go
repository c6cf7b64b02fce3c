package reports

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// A notebook is a Markdown file whose fenced blocks in the languages a
// runner knows (```sql, ```gymlens) are executed, their outputs placed
// after them. Other fenced blocks are text.

// Block is an executable fenced block.
type Block struct {
	Lang, Code string
	Line       int // of the opening fence, 1-based
}

// BlockOutput is what a block printed, as Markdown and as HTML; Files are
// extra files (figures) to write beside the outputs, by name.
type BlockOutput struct {
	Markdown, HTML string
	Files          map[string][]byte
}

// segment is prose or an executable block.
type segment struct {
	prose string
	block *Block
	fence string // the block's source, fences included
}

// parseNotebook splits a notebook into prose and executable blocks.
func parseNotebook(src []byte, langs map[string]bool) []segment {
	lines := strings.SplitAfter(string(src), "\n")
	var out []segment
	var prose strings.Builder
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trim := strings.TrimSpace(l)
		if !strings.HasPrefix(trim, "```") {
			prose.WriteString(l)
			continue
		}
		lang := strings.Fields(strings.TrimPrefix(trim, "```"))
		// Find the closing fence.
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) != "```" {
			j++
		}
		if len(lang) == 0 || !langs[lang[0]] || j >= len(lines) {
			// Text, or an unclosed fence: left as written.
			end := min(j, len(lines)-1)
			for k := i; k <= end; k++ {
				prose.WriteString(lines[k])
			}
			i = end
			continue
		}
		if prose.Len() > 0 {
			out = append(out, segment{prose: prose.String()})
			prose.Reset()
		}
		out = append(out, segment{
			block: &Block{Lang: lang[0], Code: strings.TrimRight(strings.Join(lines[i+1:j], ""), "\n"), Line: i + 1},
			fence: strings.Join(lines[i:j+1], ""),
		})
		i = j
	}
	if prose.Len() > 0 {
		out = append(out, segment{prose: prose.String()})
	}
	return out
}

// BlockError names the block that failed.
type BlockError struct {
	File  string
	Block Block
	Err   error
}

func (e *BlockError) Error() string {
	first := strings.SplitN(e.Block.Code, "\n", 2)[0]
	return fmt.Sprintf("%s:%d: the %s block %q failed: %v", e.File, e.Block.Line, e.Block.Lang, first, e.Err)
}

func (e *BlockError) Unwrap() error { return e.Err }

// RunNotebook executes the notebook's blocks in order with run (one per
// language) and returns the notebook with the outputs inline, as Markdown
// and as a self-contained HTML page, and the files the blocks made. The
// first block that fails stops the run with a BlockError.
func RunNotebook(file string, src []byte, run map[string]func(Block) (BlockOutput, error)) (md, page []byte, files map[string][]byte, err error) {
	langs := map[string]bool{}
	for l := range run {
		langs[l] = true
	}
	segs := parseNotebook(src, langs)
	files = map[string][]byte{}
	var mdb, body bytes.Buffer
	conv := goldmark.New(goldmark.WithExtensions(extension.GFM)) // raw HTML in the prose is dropped, not passed
	title := file
	for _, s := range segs {
		if s.block == nil {
			mdb.WriteString(s.prose)
			if err := conv.Convert([]byte(s.prose), &body); err != nil {
				return nil, nil, nil, err
			}
			if t := firstHeading(s.prose); t != "" && title == file {
				title = t
			}
			continue
		}
		out, err := run[s.block.Lang](*s.block)
		if err != nil {
			return nil, nil, nil, &BlockError{File: file, Block: *s.block, Err: err}
		}
		mdb.WriteString(s.fence)
		mdb.WriteString("\n")
		mdb.WriteString(strings.TrimRight(out.Markdown, "\n"))
		mdb.WriteString("\n\n")
		fmt.Fprintf(&body, "<div class=\"block\"><pre class=\"code\"><code>%s</code></pre>\n<div class=\"output\">%s</div></div>\n",
			html.EscapeString(s.block.Code), out.HTML)
		for name, b := range out.Files {
			files[name] = b
		}
	}
	var pb bytes.Buffer
	fmt.Fprintf(&pb, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>%s%s</style>\n</head>\n<body>\n",
		html.EscapeString(title), reportCSS, notebookCSS)
	pb.Write(body.Bytes())
	pb.WriteString("</body>\n</html>\n")
	return mdb.Bytes(), pb.Bytes(), files, nil
}

const notebookCSS = `
.block{margin:1rem 0}
pre.code{background:#f5f5f5;padding:.5rem .75rem;overflow-x:auto;font-size:.85rem;border-left:3px solid #0072b2}
.output pre{font-size:.8rem;overflow-x:auto}
.output img{max-width:100%;height:auto}
`

func firstHeading(prose string) string {
	for _, l := range strings.Split(prose, "\n") {
		if strings.HasPrefix(l, "# ") {
			return strings.TrimSpace(l[2:])
		}
	}
	return ""
}

// ResultTable lays out a query result (a Result) as a Table of text cells
// without groups, for the Markdown and HTML writers.
func ResultTable(name, caption string, r *Result) *Table {
	t := &Table{Name: name, Caption: caption, Keys: r.Columns, NoGroups: true}
	for _, row := range r.Rows {
		keys := make([]string, len(row))
		for i, v := range row {
			keys[i] = Cell(v)
		}
		t.Rows = append(t.Rows, Row{Keys: keys})
	}
	return t
}
