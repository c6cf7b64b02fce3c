package reports

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gymlens/gymlens/ingest/rows"
	"github.com/gymlens/gymlens/plots"
)

// Report is a report folder's content: tables, figures, what was left
// out and why, and the provenance of it all.
type Report struct {
	Title    string
	Tables   []*Table
	Figures  []*plots.Figure
	Skipped  []string // "judge-human: no human rating …"
	Manifest Manifest
	// Glossary explains the codes the tables and figures use (AddGlossary).
	Glossary []GlossaryEntry
	// Options are how the tables are written (Intervals is always on;
	// LaTeX is written at both layouts, NAME.tex in a column and
	// NAME.page.tex across the page).
	Options TableOptions
}

// Manifest is manifest.json: what the report was made from, how, and
// what it holds (docs/outputs.md describes every field;
// docs/manifest.schema.json is its JSON Schema).
type Manifest struct {
	ManifestVersion int                 `json:"manifest_version"`
	Tool            string              `json:"tool"`
	Version         string              `json:"version"`
	Build           Build               `json:"build"`
	Warehouse       string              `json:"warehouse"`  // its file name
	InputRoot       string              `json:"input_root"` // the name of the folder the inputs share
	SchemaVersion   int                 `json:"schema_version"`
	Inputs          []rows.InputFile    `json:"inputs"`
	Judges          []rows.JudgeVersion `json:"judges"`
	Steps           Steps               `json:"steps"`
	Bootstrap       Bootstrap           `json:"bootstrap"`
	Study           Bootstrap           `json:"human_study_bootstrap"`
	PDFDate         string              `json:"pdf_date"` // RFC 3339: what every PDF says it was made
	Tables          []Output            `json:"tables"`
	Figures         []Output            `json:"figures"`
	Skipped         []string            `json:"skipped"`
	Files           []OutputFile        `json:"files"`
}

// Bootstrap records how intervals were made.
type Bootstrap struct {
	Method    string  `json:"method"`
	Level     float64 `json:"level"`
	Resamples int     `json:"resamples"`
	Seed      uint64  `json:"seed"`
	Unit      string  `json:"unit"`
}

// Output is a table or figure and its files, relative to the report.
type Output struct {
	Name    string   `json:"name"`
	Caption string   `json:"caption"`
	Files   []string `json:"files"`
}

// WriteReport writes the report folder dir: tables/NAME.{tex,md,csv,html},
// figures/NAME.{png,svg,pdf}, index.html (self-contained: figures embedded,
// no script, nothing fetched) and manifest.json. It is built beside dir
// and moved into place at the end, so a failure leaves dir as it was.
func WriteReport(dir string, r *Report) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".gymlens-report-*")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, sub := range []string{"tables", "figures"} {
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
			return err
		}
	}
	ext := map[string]string{"latex": "tex", "md": "md", "csv": "csv", "html": "html"}
	m := r.Manifest
	m.ManifestVersion = ManifestVersion
	// Lists are lists, never null (docs/manifest.schema.json).
	m.Inputs, m.Judges = nonNil(m.Inputs), nonNil(m.Judges)
	m.Steps.Ingests, m.Steps.Scores, m.Steps.Judge = nonNil(m.Steps.Ingests), nonNil(m.Steps.Scores), nonNil(m.Steps.Judge)
	m.Steps.Report.Args, m.Build.Modules = nonNil(m.Steps.Report.Args), nonNil(m.Build.Modules)
	if m.Steps.Report.Options == nil {
		m.Steps.Report.Options = map[string]any{}
	}
	m.Tables, m.Figures, m.Skipped, m.Files = []Output{}, []Output{}, append([]string{}, r.Skipped...), nil
	put := func(rel string, b []byte) error {
		m.Files = append(m.Files, outputFile(filepath.ToSlash(rel), b))
		return os.WriteFile(filepath.Join(tmp, rel), b, 0o644)
	}
	for _, t := range r.Tables {
		o := Output{Name: t.Name, Caption: t.Caption}
		for _, f := range append(TableFormats, "latex-page") {
			var b bytes.Buffer
			opt := r.Options
			opt.Intervals = true
			format, file := f, t.Name+"."+ext[f]
			if f == "latex-page" { // the table across a two-column page
				format, opt.Layout, file = "latex", "page", t.Name+".page.tex"
			} else if f == "latex" {
				opt.Layout = "column"
			}
			if err := WriteTable(&b, format, t, opt); err != nil {
				return err
			}
			rel := filepath.Join("tables", file)
			if err := put(rel, b.Bytes()); err != nil {
				return err
			}
			o.Files = append(o.Files, filepath.ToSlash(rel))
		}
		m.Tables = append(m.Tables, o)
	}
	pngs := map[string][]byte{}
	for _, fig := range r.Figures {
		o := Output{Name: fig.Name, Caption: fig.Caption}
		for _, f := range plots.Formats {
			b, err := fig.Render(f)
			if err != nil {
				return err
			}
			if f == "png" {
				pngs[fig.Name] = b
			}
			rel := filepath.Join("figures", fig.Name+"."+f)
			if err := put(rel, b); err != nil {
				return err
			}
			o.Files = append(o.Files, filepath.ToSlash(rel))
		}
		m.Figures = append(m.Figures, o)
	}
	if len(r.Glossary) > 0 {
		var g bytes.Buffer
		g.WriteString("# Glossary\n\nThe codes the tables and figures of this report use.\n\n")
		WriteGlossary(&g, "md", r.Glossary)
		if err := put("glossary.md", g.Bytes()); err != nil {
			return err
		}
	}
	if err := put("index.html", indexHTML(r, &m, pngs)); err != nil {
		return err
	}
	// Last, the manifest, with every other file's hash.
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	mj, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, "manifest.json"), append(mj, '\n'), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Replace dir: move the old one aside, the new one in, then drop the old.
	old := ""
	if _, err := os.Stat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("--out: %w", err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

const reportCSS = `
:root{--fg:#1a1a1a;--muted:#555;--rule:#ccc;--accent:#0072b2}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Liberation Sans",Arial,sans-serif;color:var(--fg);margin:0 auto;max-width:1100px;padding:1rem}
h1{font-size:1.6rem;margin:.2rem 0}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--rule)}
nav ul{columns:2 16rem;padding-left:1.2rem}
a{color:var(--accent)}
.table-wrap{overflow-x:auto;margin:.5rem 0 .25rem}
table{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums}
caption{text-align:left;font-weight:600;padding:.3rem 0}
th,td{padding:.25rem .5rem;border-bottom:1px solid #e5e5e5;white-space:nowrap}
thead th{border-bottom:2px solid var(--fg);text-align:left}
th.num,td.num{text-align:right}
tr.group td{border-top:1px solid var(--fg)}
.ci{color:var(--muted);font-size:.85em}
.note,.files{color:var(--muted);font-size:.8rem;margin:.2rem 0}
figure{margin:1.2rem 0}
figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85rem;color:var(--muted)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem;font-size:.9rem}
dl.glossary{grid-template-columns:minmax(6rem,max-content) 1fr}
dt{font-weight:600}
code{font-size:.85em;word-break:break-all}
table.gl-table th[aria-sort]{cursor:pointer}
table.gl-table th[aria-sort="ascending"]::after{content:" \25B2"}
table.gl-table th[aria-sort="descending"]::after{content:" \25BC"}
@media print{body{max-width:none;font-size:10pt}nav{display:none}.table-wrap{overflow:visible}
 section,figure,.table-wrap{break-inside:avoid}a{color:inherit;text-decoration:none}}
`

// indexHTML is the report's page. Every text is escaped: names, captions
// and paths are data.
func indexHTML(r *Report, m *Manifest, pngs map[string][]byte) []byte {
	e := html.EscapeString
	var b bytes.Buffer
	title := r.Title
	if title == "" {
		title = "gymlens report"
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>%s</title>\n<style>%s</style>\n</head>\n<body>\n", e(title), reportCSS)
	fmt.Fprintf(&b, "<header><h1>%s</h1><p class=\"note\">Made by %s %s from %d input files; every table and figure is also a file in this folder (manifest.json lists them with the inputs' SHA-256).</p></header>\n",
		e(title), e(m.Tool), e(m.Version), len(m.Inputs))
	b.WriteString("<nav><h2>Contents</h2><ul>\n")
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "<li><a href=\"#table-%s\">%s</a></li>\n", e(t.Name), e(t.Caption))
	}
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "<li><a href=\"#figure-%s\">%s</a></li>\n", e(f.Name), e(figureTitle(f)))
	}
	if len(r.Glossary) > 0 {
		b.WriteString("<li><a href=\"#glossary\">Glossary</a></li>\n")
	}
	b.WriteString("<li><a href=\"#provenance\">Provenance</a></li>\n</ul></nav>\n")
	if len(r.Glossary) > 0 {
		b.WriteString("<section id=\"glossary\"><h2>Glossary</h2>\n")
		WriteGlossary(&b, "html", r.Glossary)
		b.WriteString("</section>\n")
	}

	b.WriteString("<section id=\"tables\"><h2>Tables</h2>\n")
	for i, t := range r.Tables {
		b.WriteString("<div class=\"table-wrap\">\n")
		var tb bytes.Buffer
		opt := r.Options
		opt.Intervals = true
		WriteTable(&tb, "html", t, opt)
		b.Write(tb.Bytes())
		b.WriteString("</div>\n")
		fmt.Fprintf(&b, "<p class=\"files\">Files: %s</p>\n", links(m.Tables[i].Files))
	}
	b.WriteString("</section>\n<section id=\"figures\"><h2>Figures</h2>\n")
	for i, f := range r.Figures {
		fmt.Fprintf(&b, "<figure id=\"figure-%s\"><img src=\"data:image/png;base64,%s\" alt=\"%s\" width=\"%d\" height=\"%d\">"+
			"<figcaption>%s<br><span class=\"files\">Files: %s</span></figcaption></figure>\n",
			e(f.Name), base64.StdEncoding.EncodeToString(pngs[f.Name]), e(f.Caption),
			int(f.Width.Points()/72*96), int(f.Height.Points()/72*96), e(f.Caption), links(m.Figures[i].Files))
	}
	b.WriteString("</section>\n")
	if len(r.Skipped) > 0 {
		b.WriteString("<section id=\"skipped\"><h2>Left out</h2><ul>\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "<li>%s</li>\n", e(s))
		}
		b.WriteString("</ul></section>\n")
	}
	b.WriteString("<section id=\"provenance\"><h2>Provenance</h2>\n<dl>\n")
	bs := m.Bootstrap
	fmt.Fprintf(&b, "<dt>Intervals</dt><dd>%g%% cluster bootstrap (%s), %d resamples of %s, seed %d</dd>\n", 100*bs.Level, e(bs.Method), bs.Resamples, e(bs.Unit), bs.Seed)
	st := m.Study
	fmt.Fprintf(&b, "<dt>Human study</dt><dd>%g%% cluster bootstrap (%s), %d resamples of %s, seed %d</dd>\n", 100*st.Level, e(st.Method), st.Resamples, e(st.Unit), st.Seed)
	fmt.Fprintf(&b, "<dt>Warehouse</dt><dd><code>%s</code> (schema %d)</dd>\n", e(m.Warehouse), m.SchemaVersion)
	if m.InputRoot != "" {
		fmt.Fprintf(&b, "<dt>Inputs under</dt><dd><code>%s</code></dd>\n", e(m.InputRoot))
	}
	fmt.Fprintf(&b, "<dt>Tool</dt><dd>%s %s</dd>\n", e(m.Tool), e(m.Version))
	b.WriteString("</dl>\n<h3>Judges and prompt versions</h3>\n<div class=\"table-wrap\"><table><thead><tr><th>Judge</th><th>Metric</th><th>Prompt</th><th class=\"num\">Judgments</th></tr></thead><tbody>\n")
	for _, j := range m.Judges {
		prompt := j.Prompt
		if prompt == "" {
			prompt = "(not given)"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"num\">%d</td></tr>\n", e(j.Judge), e(j.Metric), e(prompt), j.Judgments)
	}
	b.WriteString("</tbody></table></div>\n<h3>Inputs</h3>\n<div class=\"table-wrap\"><table><thead><tr><th>File</th><th>SHA-256</th><th class=\"num\">Bytes</th></tr></thead><tbody>\n")
	for _, f := range m.Inputs {
		fmt.Fprintf(&b, "<tr><td><code>%s</code></td><td><code>%s</code></td><td class=\"num\">%d</td></tr>\n", e(f.Path), e(f.SHA256), f.Size)
	}
	b.WriteString("</tbody></table></div>\n</section>\n<script>" + sortScript + "</script>\n</body>\n</html>\n")
	return b.Bytes()
}

// sortScript lets a reader sort every table by any column (click or Enter
// on its header; again to reverse): numbers by their value (a cell's first
// number, so "87.03 [83.08, 89.65]" sorts as 87.03; "–" last), text by
// its letters. Rows written under their group's key show the key once
// sorted. Without scripts the page reads the same, unsorted. It is the
// report's only script, fixed text that no input reaches.
const sortScript = `
(function () {
  function value(td) {
    var s = td.hasAttribute("data-key") ? td.getAttribute("data-key") : td.textContent;
    var m = /^\s*[+-]?\d+(\.\d+)?/.exec(s.replace("\u2212", "-"));
    return m ? {n: parseFloat(m[0]), s: s} : {n: NaN, s: s};
  }
  document.querySelectorAll("table.gl-table").forEach(function (t) {
    if (!t.tHead || !t.tBodies.length) { return; }
    Array.prototype.forEach.call(t.tHead.rows[0].cells, function (th, col) {
      th.setAttribute("aria-sort", "none");
      th.tabIndex = 0;
      th.title = "Sort by " + th.textContent;
      function sort() {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        Array.prototype.forEach.call(t.tHead.rows[0].cells, function (h) { h.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
        var rows = Array.prototype.slice.call(t.tBodies[0].rows);
        rows.forEach(function (r, i) {
          var k = r.cells[0];
          if (k && k.hasAttribute("data-key")) { k.textContent = k.getAttribute("data-key"); k.removeAttribute("data-key"); }
          r.classList.remove("group");
          r.dataset.order = r.dataset.order || String(i);
        });
        rows.sort(function (a, b) {
          var x = value(a.cells[col]), y = value(b.cells[col]);
          if (isNaN(x.n) !== isNaN(y.n)) { return isNaN(x.n) ? 1 : -1; }
          var c = !isNaN(x.n) ? x.n - y.n : x.s.localeCompare(y.s);
          return c !== 0 ? dir * c : a.dataset.order - b.dataset.order;
        });
        rows.forEach(function (r) { t.tBodies[0].appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { sort(); } });
    });
  });
})();
`

// figureTitle is a caption's first clause, for the contents.
func figureTitle(f *plots.Figure) string {
	c := f.Caption
	for _, sep := range []string{", with", ", from", ". ", " (arrow"} {
		if i := strings.Index(c, sep); i > 0 {
			c = c[:i]
		}
	}
	return strings.TrimSuffix(c, ".")
}

func links(files []string) string {
	var out []string
	for _, f := range files {
		e := html.EscapeString(f)
		out = append(out, fmt.Sprintf("<a href=\"%s\">%s</a>", e, html.EscapeString(filepath.Ext(f)[1:])))
	}
	return strings.Join(out, " · ")
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
