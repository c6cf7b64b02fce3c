package reports

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// LaTeX tables compile with pdflatex, lualatex and xelatex in a plain
// article that loads booktabs (the rules) and graphicx (shrinking a table
// wider than the column): the text is pure ASCII, every symbol written as
// a command (docs/outputs.md).

// Layouts are the LaTeX layouts: one column of a two-column page
// (table), or across the page (table*).
var Layouts = []string{"column", "page"}

// latexSymbols are the non-ASCII characters gymlens writes (and those
// names in run logs use most), as text-mode commands; \ensuremath works
// in text and in math alike.
var latexSymbols = map[rune]string{
	'α': `\ensuremath{\alpha}`, 'β': `\ensuremath{\beta}`, 'γ': `\ensuremath{\gamma}`, 'δ': `\ensuremath{\delta}`,
	'ε': `\ensuremath{\varepsilon}`, 'θ': `\ensuremath{\theta}`, 'κ': `\ensuremath{\kappa}`, 'λ': `\ensuremath{\lambda}`,
	'μ': `\ensuremath{\mu}`, 'π': `\ensuremath{\pi}`, 'ρ': `\ensuremath{\rho}`, 'σ': `\ensuremath{\sigma}`,
	'τ': `\ensuremath{\tau}`, 'φ': `\ensuremath{\phi}`, 'χ': `\ensuremath{\chi}`, 'ω': `\ensuremath{\omega}`,
	'Γ': `\ensuremath{\Gamma}`, 'Δ': `\ensuremath{\Delta}`, 'Θ': `\ensuremath{\Theta}`, 'Λ': `\ensuremath{\Lambda}`,
	'Π': `\ensuremath{\Pi}`, 'Σ': `\ensuremath{\Sigma}`, 'Φ': `\ensuremath{\Phi}`, 'Ω': `\ensuremath{\Omega}`,
	'−': `\ensuremath{-}`, '×': `\ensuremath{\times}`, '·': `\ensuremath{\cdot}`, '±': `\ensuremath{\pm}`,
	'≤': `\ensuremath{\leq}`, '≥': `\ensuremath{\geq}`, '≠': `\ensuremath{\neq}`, '≈': `\ensuremath{\approx}`,
	'→': `\ensuremath{\rightarrow}`, '←': `\ensuremath{\leftarrow}`, '↔': `\ensuremath{\leftrightarrow}`,
	'∧': `\ensuremath{\wedge}`, '∨': `\ensuremath{\vee}`, '∈': `\ensuremath{\in}`, '√': `\ensuremath{\surd}`,
	'∞': `\ensuremath{\infty}`, '²': `\ensuremath{^2}`, '³': `\ensuremath{^3}`, '₀': `\ensuremath{_0}`,
	'½': `\ensuremath{1/2}`, '°': `\ensuremath{^\circ}`,
	'–': `--`, '—': `---`, '…': `\ldots{}`, '‘': "`", '’': `'`, '“': "``", '”': `''`, '\u00a0': `~`,
	'£': `\pounds{}`, '§': `\S{}`, '¶': `\P{}`, '©': `\copyright{}`,
	'ß': `\ss{}`, 'æ': `\ae{}`, 'Æ': `\AE{}`, 'œ': `\oe{}`, 'Œ': `\OE{}`, 'ø': `\o{}`, 'Ø': `\O{}`,
	'ł': `\l{}`, 'Ł': `\L{}`, 'ı': `\i{}`,
}

// latexASCII are the ASCII characters TeX reads as commands.
var latexASCII = map[rune]string{
	'\\': `\textbackslash{}`, '&': `\&`, '%': `\%`, '$': `\$`, '#': `\#`, '_': `\_`, '{': `\{`, '}': `\}`,
	'~': `\textasciitilde{}`, '^': `\textasciicircum{}`, '<': `\textless{}`, '>': `\textgreater{}`, '|': `\textbar{}`,
	'\n': ` `, '\r': ` `, '\t': ` `,
}

// latexAccents are the combining marks of accented Latin letters (after
// Unicode decomposition), as LaTeX's accent commands.
var latexAccents = map[rune]string{
	'\u0300': "\\`", '\u0301': `\'`, '\u0302': `\^`, '\u0303': `\~`, '\u0304': `\=`, '\u0306': `\u`, '\u0307': `\.`,
	'\u0308': `\"`, '\u030a': `\r`, '\u030b': `\H`, '\u030c': `\v`, '\u0327': `\c`, '\u0328': `\k`,
}

// latex escapes text for LaTeX: TeX's special characters, and every
// character beyond ASCII as a command (a symbol, or a letter with its
// accents); one gymlens does not know is written as its code point,
// [U+XXXX], rather than left to break a pdflatex run.
func latex(s string) string {
	var b strings.Builder
	for _, r := range s {
		if e, ok := latexASCII[r]; ok {
			b.WriteString(e)
			continue
		}
		if r < utf8.RuneSelf {
			if r >= ' ' {
				b.WriteRune(r)
			}
			continue
		}
		if e, ok := latexSymbols[r]; ok {
			b.WriteString(e)
			continue
		}
		b.WriteString(latexLetter(r))
	}
	return b.String()
}

// latexLetter writes an accented Latin letter with LaTeX's accents
// (é → \'{e}, ǘ → \'{\"{u}}), anything else as [U+XXXX].
func latexLetter(r rune) string {
	d := []rune(norm.NFD.String(string(r)))
	if len(d) < 2 || d[0] >= utf8.RuneSelf {
		return fmt.Sprintf("[U+%04X]", r)
	}
	out := string(d[0])
	if d[0] == 'i' || d[0] == 'j' {
		out = `\` + string(d[0]) // the dotless letter carries the accent
	}
	for _, m := range d[1:] {
		a, ok := latexAccents[m]
		if !ok {
			return fmt.Sprintf("[U+%04X]", r)
		}
		out = a + "{" + out + "}"
	}
	return out
}

var latexStyle = style{esc: latex, best: func(s string) string { return `\textbf{` + s + "}" },
	second:   func(s string) string { return `\underline{` + s + "}" },
	interval: func(lo, hi string) string { return fmt.Sprintf(`{\scriptsize[%s, %s]}`, lo, hi) },
	// The interval under its value: a column as wide as the wider of
	// the two, not their sum.
	join: func(v, ci string) string { return `\begin{tabular}[t]{@{}r@{}}` + v + `\\` + ci + `\end{tabular}` }}

// The widths gymlens lays LaTeX tables out for, in TeX points: the
// column and the text of a two-column article at 10 pt (229.5 pt and
// 469 pt; ACL, NeurIPS and IEEE columns lie within 10% of them).
const (
	columnWidth = 229.5
	pageWidth   = 469.0
	// minScale is the least a part of a table is shrunk: a table that
	// would need more is split into parts, each with the key columns
	// (unless the parts would not fit a page's height).
	minScale = 0.75
)

// latexFont is the font size (pt) and column gap of a layout.
func latexFont(layout string) (size, sep float64, cmd string) {
	if layout == "page" {
		return 9, 4, `\small`
	}
	return 8, 3, `\footnotesize`
}

// emWidth estimates the width of plain text in ems of Computer Modern
// (digits half an em, capitals wider, punctuation narrower): good to some
// 10%, which is what splitting needs (the shrinking is exact).
func emWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			w += 0.5
		case r >= 'A' && r <= 'Z':
			w += 0.72
		case r == ' ' || r == '-' || r == '(' || r == ')':
			w += 0.33
		case r == '.' || r == ',' || r == '[' || r == ']' || r == 'i' || r == 'l' || r == ':' || r == ';':
			w += 0.28
		case r == 'm' || r == 'w' || r == 'M' || r == 'W':
			w += 0.83
		default:
			w += 0.5
		}
	}
	return w
}

// widths estimates each column's width (pt) at a layout: the key columns,
// then the value columns.
func (t *Table) widths(opt TableOptions) []float64 {
	size, sep, _ := latexFont(opt.Layout)
	n := len(t.Keys) + len(t.Columns)
	w := make([]float64, n)
	for k, h := range t.Keys {
		w[k] = emWidth(h) * size
	}
	for j, c := range t.Columns {
		w[len(t.Keys)+j] = emWidth(c.Header) * size
	}
	for _, r := range t.Rows {
		for k, key := range r.Keys {
			w[k] = max(w[k], emWidth(key)*size)
		}
		for j, c := range r.Cells {
			col := t.Columns[j]
			v := emWidth(col.format(c.V)) * size
			if opt.Intervals && c.CI {
				ci := emWidth("["+col.format(c.Lo)+", "+col.format(c.Hi)+"]") * size * 0.75 // \scriptsize
				v = max(v, ci)
			}
			w[len(t.Keys)+j] = max(w[len(t.Keys)+j], v)
		}
	}
	for i := range w {
		w[i] += 2 * sep
	}
	return w
}

// textHeight is the height a table may take (pt): nine tenths of the
// 9 in of text of a letter page.
const textHeight = 0.9 * 9 * 72

// height estimates a part's height (pt) at a layout: a header and a line
// per row, two where the row shows intervals (the interval under its
// value), and a rule between groups.
func (t *Table) height(opt TableOptions) float64 {
	size, _, _ := latexFont(opt.Layout)
	h := 3 * size
	for i, r := range t.Rows {
		line := 1.35 * size
		for _, c := range r.Cells {
			if opt.Intervals && c.CI {
				line = 2.6 * size
				break
			}
		}
		h += line
		if i > 0 && t.groupStart(i) {
			h += 0.5 * size
		}
	}
	return h
}

// parts splits the value columns into runs that each fit the layout's
// width (with the key columns) when shrunk by no less than minScale, as
// evenly as it can; a table whose parts, stacked, would be taller than a
// page is split into as many as fit (or none), and shrunk more instead.
func (t *Table) parts(opt TableOptions) [][2]int {
	budget := columnWidth
	if opt.Layout == "page" {
		budget = pageWidth
	}
	budget /= minScale
	w := t.widths(opt)
	keys, total := 0.0, 0.0
	for _, x := range w[:len(t.Keys)] {
		keys += x
	}
	for _, x := range w[len(t.Keys):] {
		total += x
	}
	n := len(t.Columns)
	k := 1
	if keys+total > budget && budget > keys {
		k = int(math.Ceil(total / (budget - keys)))
	}
	k = min(k, n, max(1, int(textHeight/t.height(opt))))
	for ; k > 1; k-- {
		if p := t.balanced(w[len(t.Keys):], k, budget-keys); p != nil {
			return p
		}
	}
	return [][2]int{{0, n}}
}

// balanced cuts the columns of widths w into k consecutive runs, each no
// wider than room, the widest run as narrow as it can be; nil when no cut
// into k fits.
func (t *Table) balanced(w []float64, k int, room float64) [][2]int {
	// Try the narrowest limit that admits k runs: search on the limit.
	lo, hi := 0.0, room
	for _, x := range w {
		lo = max(lo, x)
	}
	if lo > room {
		return nil
	}
	cut := func(limit float64) [][2]int {
		var out [][2]int
		start, used := 0, 0.0
		for j, x := range w {
			if j > start && used+x > limit {
				out = append(out, [2]int{start, j})
				start, used = j, 0
			}
			used += x
		}
		return append(out, [2]int{start, len(w)})
	}
	if len(cut(hi)) > k {
		return nil
	}
	for i := 0; i < 40; i++ {
		mid := (lo + hi) / 2
		if len(cut(mid)) > k {
			lo = mid
		} else {
			hi = mid
		}
	}
	return cut(hi)
}

// writeLaTeX writes a booktabs table in a float of the layout's width
// (table in a column, table* across the page): a table too wide for it is
// split into parts by columns, each part repeating the key columns, and a
// part still wider than the width is shrunk to it (never enlarged). The
// notes stand under it as small text.
func writeLaTeX(b *bytes.Buffer, t *Table, opt TableOptions) {
	env := "table"
	if opt.Layout == "page" {
		env = "table*"
	}
	_, sep, size := latexFont(opt.Layout)
	marks := t.marks()
	fmt.Fprintf(b, "\\begin{%s}[t]\n\\centering\n%s\n\\setlength{\\tabcolsep}{%gpt}\n", env, size, sep)
	// The caption and the notes are set in boxes first and measured: the
	// parts share the height of the page they leave (gymlensroom), less
	// the skips between parts and a little slack.
	b.WriteString("\\ifdefined\\gymlensroom\\else\\newdimen\\gymlensroom\\newbox\\gymlenshead\\newbox\\gymlensnotes\\fi\n")
	b.WriteString("\\setbox\\gymlenshead=\\vbox{")
	if t.Caption != "" {
		fmt.Fprintf(b, "\\caption{%s}", latex(t.Caption))
	}
	fmt.Fprintf(b, "\\label{tab:%s}}\n", latex(t.Name))
	b.WriteString("\\setbox\\gymlensnotes=\\vbox{")
	for _, n := range t.Notes {
		fmt.Fprintf(b, "\\par\\smallskip{\\footnotesize %s\\par}", latex(n))
	}
	b.WriteString("}\n")
	parts := t.parts(opt)
	room := "\\textheight-\\ht\\gymlenshead-\\dp\\gymlenshead-\\ht\\gymlensnotes-\\dp\\gymlensnotes-6pt"
	if len(parts) > 1 {
		room = fmt.Sprintf("(%s-%d\\medskipamount)/%d", room, len(parts)-1, len(parts))
	}
	fmt.Fprintf(b, "\\gymlensroom=\\dimexpr%s\\relax\n", room)
	b.WriteString("\\unvbox\\gymlenshead\n")
	for p, part := range parts {
		if p > 0 {
			b.WriteString("\\par\\medskip\n")
		}
		// Shrunk to the line's width, and to its share of the page's
		// height, never enlarged.
		b.WriteString("\\resizebox*{!}{\\ifdim\\totalheight>\\gymlensroom\\gymlensroom\\else\\totalheight\\fi}{%\n")
		b.WriteString("\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%\n")
		fmt.Fprintf(b, "\\begin{tabular}{@{}%s%s@{}}\n\\toprule\n", strings.Repeat("l", len(t.Keys)), strings.Repeat("r", part[1]-part[0]))
		var head []string
		for _, k := range t.Keys {
			head = append(head, latex(k))
		}
		for _, c := range t.Columns[part[0]:part[1]] {
			head = append(head, latex(c.Header))
		}
		b.WriteString(strings.Join(head, " & ") + " \\\\\n\\midrule\n")
		for i := range t.Rows {
			if i > 0 && t.groupStart(i) {
				b.WriteString("\\midrule\n")
			}
			keys, nums := t.cells(i, marks, opt, latexStyle)
			b.WriteString(strings.Join(append(keys, nums[part[0]:part[1]]...), " & ") + " \\\\\n")
		}
		b.WriteString("\\bottomrule\n\\end{tabular}}}\n")
	}
	b.WriteString("\\par\\unvbox\\gymlensnotes\n")
	fmt.Fprintf(b, "\\end{%s}\n", env)
}
