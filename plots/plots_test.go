package plots

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gymlens/gymlens/analysis"
)

func est(v float64) analysis.Estimate {
	return analysis.Estimate{Value: v, Lo: v - 3, Hi: v + 2, Level: 0.95, Resamples: 100, Method: "percentile"}
}

func result(group map[string]string, metric string, v float64) analysis.GroupEstimate {
	return analysis.GroupEstimate{Group: group, Metric: metric, NRuns: 30, Estimate: est(v)}
}

// figures builds every figure from small made-up results.
func figures(t *testing.T) map[string]*Figure {
	t.Helper()
	var bySize, byHarness, byEffort, byScen []analysis.GroupEstimate
	var bySwitch []Switch
	for _, f := range []struct {
		fam   string
		sizes []string
	}{{"Qwen", []string{"2", "9", "27"}}, {"Gemma", []string{"12", "31"}}} {
		for i, s := range f.sizes {
			bySize = append(bySize, result(map[string]string{"family": f.fam, "size": s}, "TC", 40+10*float64(i)))
		}
	}
	bySize = append(bySize, result(map[string]string{"family": "Claude", "size": "unknown"}, "TC", 90))
	// Sizes out of text order (12 < 2 as text): rows follow the numbers.
	for i, m := range []struct {
		name string
		size float64
	}{{"Qwen 2B", 2}, {"Qwen 9B", 9}, {"Gemma 12B", 12}} {
		from, to := 50+float64(i), 60-5*float64(i)
		bySwitch = append(bySwitch, Switch{Model: m.name, Effort: "none", Size: m.size, From: from, To: to, Lo: to - from - 1.5, Hi: to - from + 2})
	}
	bySwitch = append(bySwitch, Switch{Model: "Closed", Effort: "none", From: 80, To: 70, Lo: -12, Hi: -8})
	for i, h := range []string{"CC", "CD", "OC"} {
		for j, m := range analysis.MainMetrics {
			byHarness = append(byHarness, result(map[string]string{"harness": h}, m, float64(10*(i+j))))
		}
	}
	for i, e := range []string{"xhigh", "low", "none", "medium"} {
		for _, m := range analysis.MainMetrics {
			byEffort = append(byEffort, result(map[string]string{"effort": e}, m, float64(i)))
		}
	}
	for i := 0; i < 10; i++ {
		for _, m := range analysis.MainMetrics {
			byScen = append(byScen, result(map[string]string{"scenario": "scenario_" + string(rune('a'+i))}, m, float64(i)))
		}
	}
	corr := []analysis.CorrResult{
		{X: "TC", Y: "TA", Level: analysis.RunLevel, Method: analysis.PearsonR, R: 0.18},
		{X: "TC", Y: "TR-J", Level: analysis.RunLevel, Method: analysis.PearsonR, R: 0.71},
		{X: "TA", Y: "TR-J", Level: analysis.RunLevel, Method: analysis.PearsonR, R: -0.13},
	}
	var study []analysis.StudyStat
	for _, c := range []string{"AAA", "MMM"} {
		for d, day := range []int{2, 4, 7} {
			study = append(study, analysis.StudyStat{Kind: "over_days", Question: "trust", Condition: c, Day: day, N: 24, Estimate: est(4 + float64(d))})
		}
	}
	out := map[string]*Figure{}
	add := func(f *Figure, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = f
	}
	add(ModelSize(bySize, "TC"))
	add(HarnessSwitch(bySwitch, "TC", "CC", "OC", 1))
	add(CorrelationMatrix(corr))
	add(HarnessComparison(byHarness, analysis.MainMetrics))
	add(Effort(byEffort, analysis.MainMetrics, ""))
	add(Breakdown("by-scenario", "scenario", byScen, "scenario", analysis.MainMetrics))
	add(HumanTrust(study, "trust"))
	var curves []MDECurve
	for i, m := range analysis.MainMetrics {
		c := MDECurve{Metric: m, Current: 10}
		for s := 3; s <= 40; s++ {
			c.Scenarios, c.MDE = append(c.Scenarios, float64(s)), append(c.MDE, float64(10*(i+1))/math.Sqrt(float64(s)))
		}
		curves = append(curves, c)
	}
	add(MDE(curves))
	var ranks []RankPoint
	for i := range 12 {
		ranks = append(ranks, RankPoint{Label: fmt.Sprintf("Model %d | CC | none", i), Rank: float64(i + 1), Lo: math.Max(1, float64(i-1)), Hi: math.Min(12, float64(i+3))})
	}
	add(Ranks(ranks, "TC"))
	return out
}

// rendered is every figure of figures() rendered once in every format,
// for the tests that read the bytes (TestFiguresRender and
// TestRenderingIsDeterministic): the figures, the marks each had drawn
// before rendering, the bytes by "name.format" and when they were made.
var rendered struct {
	once  sync.Once
	figs  map[string]*Figure
	marks map[string]int
	bytes map[string][]byte
	at    time.Time
	err   error
}

func renderedFigures(t *testing.T) {
	t.Helper()
	rendered.once.Do(func() {
		rendered.figs, rendered.marks, rendered.bytes = figures(t), map[string]int{}, map[string][]byte{}
		for name, f := range rendered.figs {
			rendered.marks[name] = f.Marks
			for _, format := range Formats {
				b, err := f.Render(format)
				if err != nil {
					rendered.err = fmt.Errorf("%s.%s: %w", name, format, err)
					return
				}
				rendered.bytes[name+"."+format] = b
			}
		}
		rendered.at = time.Now()
	})
	if rendered.err != nil {
		t.Fatal(rendered.err)
	}
}

// Every figure renders in every format at its size, with the data drawn:
// the marks each should have, and the values and labels in the SVG text.
func TestFiguresRender(t *testing.T) {
	wantMarks := map[string]int{"model-size": 5, "harness-switch": 3, "correlations": 9, "harness-comparison": 12,
		"effort": 16, "by-scenario": 40, "human-trust": 6, "mde": 4, "rank": 12}
	renderedFigures(t)
	for name, f := range rendered.figs {
		if rendered.marks[name] != wantMarks[name] {
			t.Errorf("%s: %d marks drawn, want %d", name, rendered.marks[name], wantMarks[name])
		}
		for _, format := range Formats {
			b := rendered.bytes[name+"."+format]
			if len(b) < 1000 {
				t.Errorf("%s.%s: only %d bytes", name, format, len(b))
			}
			switch format {
			case "png":
				img, err := png.Decode(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				wpx := int(math.Round(f.Width.Points() / 72 * 300))
				if img.Bounds().Dx() != wpx {
					t.Errorf("%s.png: %d px wide, want %d (300 dpi)", name, img.Bounds().Dx(), wpx)
				}
			case "pdf":
				if !bytes.HasPrefix(b, []byte("%PDF-")) {
					t.Errorf("%s.pdf is not a PDF", name)
				}
			}
		}
	}
	svg := func(name string) string { return string(rendered.bytes[name+".svg"]) }
	// Values and names reach the image. SVG text is drawn as glyph
	// outlines or text elements; both keep the strings in the file.
	for name, wants := range map[string][]string{
		"correlations":   {"0.71", "-0.13", "TR-J"},
		"harness-switch": {"+10.0", "+4.0", "-2.0", "Gemma 12B", "when switching from CC to OC"},
		"human-trust":    {"AAA", "MMM"},
	} {
		s := svg(name)
		for _, w := range wants {
			if !strings.Contains(s, w) {
				t.Errorf("%s.svg lacks %q", name, w)
			}
		}
	}
	// The closed model (unknown size) is left out of both size figures.
	if s := svg("harness-switch"); strings.Contains(s, "Closed") {
		t.Error("harness-switch shows a model of unknown size")
	}
}

// The same data give the same bytes in every format, PDF included (its
// dates are fixed), a second apart.
func TestRenderingIsDeterministic(t *testing.T) {
	renderedFigures(t)
	first := rendered.bytes
	time.Sleep(time.Until(rendered.at.Add(1100 * time.Millisecond)))
	b := figures(t)
	for name := range b {
		for _, f := range Formats {
			y, _ := b[name].Render(f)
			if !bytes.Equal(first[name+"."+f], y) {
				t.Errorf("%s.%s: two renderings of the same data differ", name, f)
			}
		}
	}
	if x := first["model-size.pdf"]; !bytes.Contains(x, []byte("/CreationDate (D:19700101000000")) {
		t.Errorf("the PDF does not carry the fixed date: %.300q", x)
	}
}

func TestFiguresRefuseEmptyData(t *testing.T) {
	if _, err := ModelSize(nil, "TC"); err == nil {
		t.Error("model-size of nothing")
	}
	if _, err := HarnessSwitch(nil, "TC", "CC", "OC", 1); err == nil {
		t.Error("harness-switch of nothing")
	}
	if _, err := Effort(nil, analysis.MainMetrics, ""); err == nil {
		t.Error("effort of nothing")
	}
	if _, err := HumanTrust(nil, "trust"); err == nil {
		t.Error("human-trust of nothing")
	}
	if _, err := (&Figure{Name: "x"}).Render("png"); err == nil {
		t.Error("a figure with nothing to draw rendered")
	}
	if _, err := (&Figure{Name: "x", draw: func(draw.Canvas) {}}).Render("gif"); err == nil {
		t.Error("gif accepted")
	}
}

// A PDF reader sees the titles and labels as written: pdftotext finds no
// mojibake (a UTF-8 arrow drawn in the PDF's single-byte font read "â†'")
// in any figure. Without pdftotext (poppler-utils; .ci/run installs it) the
// test skips, except in CI.
func TestPDFTextReadsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs pdftotext, a process of its own, on every figure")
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext is not installed: .ci/run installs poppler-utils")
		}
		t.Skip("no pdftotext on this machine (apt-get install poppler-utils)")
	}
	dir := t.TempDir()
	for name, f := range figures(t) {
		b, err := f.Render("pdf")
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".pdf")
		os.WriteFile(p, b, 0o644)
		out, err := exec.Command("pdftotext", p, "-").Output()
		if err != nil {
			t.Fatalf("%s: pdftotext: %v", name, err)
		}
		text := string(out)
		if strings.ContainsAny(text, "âÃ€") {
			t.Errorf("%s.pdf reads %q: mojibake", name, text)
		}
		// The titles and axis labels are what they should be.
		for _, want := range map[string][]string{
			"harness-switch": {"TC when switching from CC to OC", "Qwen 2B", "+10.0 [+8.5, +12.0]"},
			"model-size":     {"TC against model size", "Parameters (billions, log scale)", "Qwen", "Gemma"},
			"human-trust":    {"Human trust over the study", "Checkpoint day", "AAA", "MMM"},
			"effort":         {"TC", "TA", "TR-D", "TR-J", "none", "xhigh"},
			"correlations":   {"0.71", "TR-J"},
		}[name] {
			if !strings.Contains(text, want) {
				t.Errorf("%s.pdf: no %q in its text %q", name, want, text)
			}
		}
	}
}

// PDF shows translucent bands in their own colour, as PNG and SVG do: the
// band's fill is the palette colour with its alpha, not the colour
// premultiplied by the alpha (which drew the effort bands grey-brown).
func TestPDFBandsKeepTheirColour(t *testing.T) {
	b, err := figures(t)["effort"].Render("pdf")
	if err != nil {
		t.Fatal(err)
	}
	var content strings.Builder
	for _, m := range regexp.MustCompile(`(?s)stream\r?\n(.*?)endstream`).FindAllSubmatch(b, -1) {
		r, err := zlib.NewReader(bytes.NewReader(m[1]))
		if err != nil {
			continue // not a compressed stream (fonts are named, not embedded)
		}
		d, _ := io.ReadAll(r)
		content.Write(d)
	}
	// Every fill is a palette colour or a grey (text, axes, the matrix's
	// white); a colour premultiplied by its alpha is neither.
	allowed := map[string]bool{}
	for _, c := range Palette {
		r, g, b, _ := c.RGBA()
		allowed[fmt.Sprintf("%.3f %.3f %.3f", float64(r>>8)/255, float64(g>>8)/255, float64(b>>8)/255)] = true
	}
	fills := regexp.MustCompile(`([0-9.]+) ([0-9.]+) ([0-9.]+) rg`).FindAllStringSubmatch(content.String(), -1)
	if len(fills) == 0 {
		t.Fatal("no fill in the PDF")
	}
	for _, f := range fills {
		if c := f[1] + " " + f[2] + " " + f[3]; !allowed[c] && !(f[1] == f[2] && f[2] == f[3]) {
			t.Errorf("fill %s: neither a palette colour nor a grey", c)
		}
	}
}

// Nothing is drawn outside the axes: every data mark (points with their
// radius, interval caps, arrow ends and labels) lies inside its plot's
// data area, in every figure and format.
func TestMarksInsideThePlotArea(t *testing.T) {
	var outside []string
	var n int
	markCheck = func(at string, inside bool) {
		n++
		if !inside {
			outside = append(outside, at)
		}
	}
	defer func() { markCheck = nil }()
	for name, f := range figures(t) {
		for _, format := range Formats {
			outside, n = nil, 0
			if _, err := f.Render(format); err != nil {
				t.Fatal(err)
			}
			if name != "correlations" && n == 0 {
				t.Errorf("%s.%s: no mark checked", name, format)
			}
			if len(outside) > 0 {
				t.Errorf("%s.%s: %d of %d marks outside the plot area, at %v", name, format, len(outside), n, outside)
			}
		}
	}
}

// Every text printed (titles, axis and tick labels, legends, the
// values written beside marks) lies whole inside the figure, in every
// figure and format, at both sizes: measured from the font's own metrics
// where the text is drawn, rotation included. The harness-switch figure is
// also drawn with a demo's rows (two decimals, a long model name, the
// widest interval on the right), whose last label lost its bracket.
func TestTextsInsideTheFigure(t *testing.T) {
	var outside []string
	var n int
	textCheck = func(s string, inside bool) {
		n++
		if !inside {
			outside = append(outside, s)
		}
	}
	defer func() { textCheck = nil }()
	figs := figures(t)
	demo, err := HarnessSwitch([]Switch{
		{Model: "Qwen3.5 2B", Size: 2, From: 60.12, To: 61.40, Lo: -1.22, Hi: 3.75},
		{Model: "Qwen3.5 9B", Size: 9, From: 70.50, To: 72.86, Lo: 0.61, Hi: 4.18},
		{Model: "Gemma 4 31B Instruct", Effort: "high", Size: 31, From: 74.03, To: 71.2, Lo: -4.96, Hi: -0.70},
	}, "TC", "CC", "OC", 2)
	if err != nil {
		t.Fatal(err)
	}
	figs["harness-switch-demo"] = demo
	for name, f := range figs {
		for _, size := range []string{"column", "page"} {
			if err := f.Resize(size); err != nil {
				t.Fatal(err)
			}
			for _, format := range Formats {
				outside, n = nil, 0
				if _, err := f.Render(format); err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					t.Errorf("%s.%s at %s: no text checked", name, format, size)
				}
				if len(outside) > 0 {
					t.Errorf("%s.%s at %s: %d of %d texts outside the figure: %v", name, format, size, len(outside), n, outside)
				}
			}
		}
	}
}

// svgTexts are the texts of an SVG with their positions.
func svgTexts(svg string) map[string][2]float64 {
	out := map[string][2]float64{}
	re := regexp.MustCompile(`<text x="([-0-9.]+)" y="([-0-9.]+)"[^>]*>([^<]*)</text>`)
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		out[m[3]] = [2]float64{x, -y} // drawn with scale(1, -1): y counts up
	}
	return out
}

// harness-switch: rows by model size as numbers, the smallest on top,
// each with its paired interval; model-size: a tick label at each size
// (neighbours closer than ×1.3 left blank), the legend right of the data.
func TestFigureLayout(t *testing.T) {
	figs := figures(t)
	b, _ := figs["harness-switch"].Render("svg")
	tx := svgTexts(string(b))
	if !(tx["Qwen 2B"][1] > tx["Qwen 9B"][1] && tx["Qwen 9B"][1] > tx["Gemma 12B"][1]) {
		t.Errorf("harness-switch rows: 2B at %v, 9B at %v, 12B at %v: want the sizes in order, smallest on top", tx["Qwen 2B"], tx["Qwen 9B"], tx["Gemma 12B"])
	}
	if _, ok := tx["+10.0 [+8.5, +12.0]"]; !ok {
		t.Errorf("harness-switch: no difference with its interval among %v", tx)
	}
	b, _ = figs["model-size"].Render("svg")
	tx = svgTexts(string(b))
	for _, l := range []string{"2", "9", "12", "27"} {
		if _, ok := tx[l]; !ok {
			t.Errorf("model-size: no tick label %q", l)
		}
	}
	if _, ok := tx["31"]; ok {
		t.Error("model-size: 31 labelled beside 27")
	}
	rightmost := 0.0
	for _, l := range []string{"2", "9", "12", "27"} {
		rightmost = math.Max(rightmost, tx[l][0])
	}
	if tx["Qwen"][0] <= rightmost || tx["Gemma"][0] <= rightmost {
		t.Errorf("model-size: the legend (Qwen at %v) stands inside the data (last tick at x = %.1f)", tx["Qwen"], rightmost)
	}
}

// --size makes a figure one column (3.3 in) or the page (6.9 in) wide,
// its height in proportion, its texts at their sizes in points.
func TestResize(t *testing.T) {
	for name, f := range figures(t) {
		ratio := f.Height / f.Width
		for size, w := range map[string]vg.Length{"column": 3.3 * vg.Inch, "page": 6.9 * vg.Inch} {
			if err := f.Resize(size); err != nil {
				t.Fatal(err)
			}
			if f.Width != w || math.Abs(float64(f.Height/f.Width-ratio)) > 1e-9 {
				t.Errorf("%s at %s: %v × %v", name, size, f.Width, f.Height)
			}
			b, _ := f.Render("png")
			img, _ := png.Decode(bytes.NewReader(b))
			if got := img.Bounds().Dx(); got != int(math.Round(w.Points()/72*300)) {
				t.Errorf("%s at %s: %d px wide at 300 dpi", name, size, got)
			}
		}
	}
	if err := figures(t)["effort"].Resize("poster"); err == nil {
		t.Error("size poster accepted")
	}
}

// A panel whose metric no run has (TR-J of a warehouse without judgments)
// renders, on an axis of its own: gonum/plot's tick search never ends on
// a NaN range, and the report hung on it.
func TestPanelWithNoValueRenders(t *testing.T) {
	var res []analysis.GroupEstimate
	for _, h := range []string{"CC", "OC"} {
		res = append(res, result(map[string]string{"harness": h}, "TC", 50), result(map[string]string{"harness": h}, "TR-J", math.NaN()))
	}
	f, err := HarnessComparison(res, []string{"TC", "TR-J"})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := f.Render("svg"); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("rendering a panel with no value did not end")
	}
}
