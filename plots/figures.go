package plots

import (
	"fmt"
	"hash/fnv"
	"image/color"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/gymlens/gymlens/analysis"
)

// FigureNames are the figures gymlens draws.
var FigureNames = []string{"model-size", "harness-switch", "correlations", "harness-comparison", "effort", "by-scenario",
	"by-persona", "human-trust", "mde", "rank"}

// estimates indexes results by group value (of one dimension) and metric.
type estimates map[[2]string]analysis.Estimate

func index(res []analysis.GroupEstimate, dims ...string) (estimates, [][]string) {
	e := estimates{}
	var keys [][]string
	seen := map[string]bool{}
	for _, r := range res {
		var k []string
		for _, d := range dims {
			k = append(k, r.Group[d])
		}
		id := fmt.Sprint(k)
		e[[2]string{id, r.Metric}] = r.Estimate
		if !seen[id] {
			seen[id] = true
			keys = append(keys, k)
		}
	}
	return e, keys
}

func (e estimates) get(key []string, metric string) (analysis.Estimate, bool) {
	v, ok := e[[2]string{fmt.Sprint(key), metric}]
	if !ok || math.IsNaN(v.Value) {
		return v, false
	}
	return v, true
}

// ModelSize draws a metric against model size (log scale), a line per
// family from its smallest to its largest model, from results grouped by
// family and size; models of unknown size are left out.
func ModelSize(res []analysis.GroupEstimate, metric string) (*Figure, error) {
	e, keys := index(res, "family", "size")
	byFam := map[string][][2]float64{}
	var fams []string
	for _, k := range keys {
		size, err := strconv.ParseFloat(k[1], 64)
		if err != nil || size <= 0 {
			continue
		}
		if _, ok := byFam[k[0]]; !ok {
			fams = append(fams, k[0])
		}
		byFam[k[0]] = append(byFam[k[0]], [2]float64{size, 0})
	}
	if len(fams) == 0 {
		return nil, analysis.NoDataf("model-size: no model of known size")
	}
	sort.Strings(fams)
	p := newPlot(metric+" against model size", "Parameters (billions, log scale)", metric)
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	sizes := map[float64]bool{}
	marks := 0
	for _, f := range fams {
		pts := byFam[f]
		sort.Slice(pts, func(a, b int) bool { return pts[a][0] < pts[b][0] })
		var xs, ys, lo, hi []float64
		for _, pt := range pts {
			est, ok := e.get([]string{f, strconv.FormatFloat(pt[0], 'g', -1, 64)}, metric)
			if !ok {
				continue
			}
			xs, ys, lo, hi = append(xs, pt[0]), append(ys, est.Value), append(lo, est.Lo), append(hi, est.Hi)
			sizes[pt[0]] = true
		}
		if len(xs) == 0 {
			continue
		}
		col, shape := FamilyStyle(f)
		iv := &intervals{xs: xs, ys: ys, lo: lo, hi: hi, color: col, shape: shape, radius: vg.Points(2.2)}
		if l := line(xs, ys, col, false); l != nil {
			p.Add(l)
			p.Legend.Add(f, l, iv)
		}
		p.Add(iv)
		marks += iv.marks()
	}
	// A tick at every model size, labelled with it: a log axis over one
	// decade or two would otherwise label one or two powers of ten.
	// Labels closer than a factor 1.3 to the last one shown stay blank,
	// so that neighbours (27 and 31) do not overprint.
	last := 0.0
	for _, x := range slices.Sorted(maps.Keys(sizes)) {
		label := strconv.FormatFloat(x, 'g', -1, 64)
		if last > 0 && x/last < 1.3 {
			label = ""
		} else {
			last = x
		}
		ticks = append(ticks, plot.Tick{Value: x, Label: label})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	padLog(&p.X)
	pad(&p.Y)
	return single("model-size", metric+" against model size per family, from the smallest model to the largest, with 95% bootstrap intervals.",
		ColumnWidth, 2.6*vg.Inch, p, marks), nil
}

// families are the model families gymlens knows, each with its colour and
// marker in every figure; another family takes the next free pair, in
// order of its name's hash, so that it too keeps them from figure to
// figure.
var families = []string{"Qwen", "Gemma", "GPT", "Claude", "Llama", "DeepSeek", "Mistral", "Kimi"}

// FamilyStyle is a model family's colour and marker.
func FamilyStyle(family string) (color.Color, draw.GlyphDrawer) {
	i := slices.Index(families, family)
	if i < 0 {
		h := fnv.New32a()
		h.Write([]byte(family))
		i = int(h.Sum32() % uint32(len(Palette)))
	}
	return colour(i), Glyphs[i%len(Glyphs)]
}

// arrows draws, per row, an arrow from one value to another, the paired
// interval of the difference as a bar around the arrow's head (from + lo
// to from + hi), and the difference with its interval beside it.
type arrows struct {
	from, to, lo, hi []float64 // lo, hi: the difference's interval (NaN: none)
	ys               []float64
	digits           int
}

func (a *arrows) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	for i := range a.ys {
		if math.IsNaN(a.from[i]) || math.IsNaN(a.to[i]) {
			continue
		}
		col := Palette[0]
		if a.to[i] < a.from[i] {
			col = Palette[5]
		}
		y := trY(a.ys[i])
		x0, x1 := trX(a.from[i]), trX(a.to[i])
		if !math.IsNaN(a.lo[i]) && !math.IsNaN(a.hi[i]) {
			lo, hi := trX(a.from[i]+a.lo[i]), trX(a.from[i]+a.hi[i])
			ci := draw.LineStyle{Color: color.Gray{110}, Width: vg.Points(0.8)}
			cap := vg.Points(2.5)
			c.StrokeLine2(ci, lo, y, hi, y)
			c.StrokeLine2(ci, lo, y-cap, lo, y+cap)
			c.StrokeLine2(ci, hi, y-cap, hi, y+cap)
			mark(c, vg.Point{X: lo, Y: y})
			mark(c, vg.Point{X: hi, Y: y})
		}
		c.StrokeLine2(draw.LineStyle{Color: col, Width: vg.Points(1.2)}, x0, y, x1, y)
		dir := vg.Length(1)
		if x1 < x0 {
			dir = -1
		}
		head := vg.Points(4)
		var path vg.Path
		path.Move(vg.Point{X: x1, Y: y})
		path.Line(vg.Point{X: x1 - dir*head, Y: y + head/2})
		path.Line(vg.Point{X: x1 - dir*head, Y: y - head/2})
		path.Close()
		c.SetColor(col)
		c.Fill(path)
		c.DrawGlyph(draw.GlyphStyle{Color: col, Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}, vg.Point{X: x0, Y: y})
		mark(c, vg.Point{X: x0, Y: y})
		mark(c, vg.Point{X: x1, Y: y})
		// The labels stand in a column right of the axes, in the room
		// the figure keeps for the widest (labelWidth).
		c.FillText(a.labelStyle(), vg.Point{X: c.Max.X + labelGap, Y: y}, a.label(i))
	}
}

// labelGap is the space between the axes and the column of labels.
const labelGap = vg.Length(4)

func (a *arrows) labelStyle() text.Style {
	sty := text.Style{Color: color.Black, Font: plotter.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XLeft, YAlign: draw.YCenter}
	sty.Font.Size = 7
	return sty
}

// label is row i's difference with its interval.
func (a *arrows) label(i int) string {
	label := fmt.Sprintf("%+.*f", a.digits, a.to[i]-a.from[i])
	if !math.IsNaN(a.lo[i]) && !math.IsNaN(a.hi[i]) {
		label += fmt.Sprintf(" [%+.*f, %+.*f]", a.digits, a.lo[i], a.digits, a.hi[i])
	}
	return label
}

// labelWidth is the width of the widest label, with its gap.
func (a *arrows) labelWidth() vg.Length {
	var w vg.Length
	sty := a.labelStyle()
	for i := range a.ys {
		if !math.IsNaN(a.from[i]) && !math.IsNaN(a.to[i]) {
			w = max(w, sty.Width(a.label(i)))
		}
	}
	return w + labelGap
}

func (a *arrows) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = math.Inf(1), math.Inf(-1)
	for i := range a.ys {
		for _, v := range []float64{a.from[i], a.to[i], a.from[i] + a.lo[i], a.from[i] + a.hi[i]} {
			if !math.IsNaN(v) {
				xmin, xmax = math.Min(xmin, v), math.Max(xmax, v)
			}
		}
	}
	span := xmax - xmin
	if span == 0 {
		span = 1
	}
	return xmin - 0.05*span, xmax + 0.05*span, -0.6, float64(len(a.ys)) - 0.4
}

// Switch is one row of the harness-switch figure: a model (of known size)
// and effort, its metric on both harnesses, and the paired difference's
// interval (to − from, the same resampled scenarios on both sides).
type Switch struct {
	Model, Effort string
	Size          float64
	From, To      float64
	Lo, Hi        float64
}

// HarnessSwitch draws, for each open model (one of known size), the change
// of a metric when switching from one harness to another, with the paired
// bootstrap interval of the change; rows in order of model size.
func HarnessSwitch(rows []Switch, metric, from, to string, digits int) (*Figure, error) {
	var keep []Switch
	for _, r := range rows {
		if r.Size > 0 {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		return nil, analysis.NoDataf("harness-switch: no open model was run with both %s and %s", from, to)
	}
	// The smallest model on top: ys count up from the bottom.
	sort.SliceStable(keep, func(a, b int) bool {
		if keep[a].Size != keep[b].Size {
			return keep[a].Size > keep[b].Size
		}
		return keep[a].Model+keep[a].Effort > keep[b].Model+keep[b].Effort
	})
	a := &arrows{digits: digits}
	var names []string
	for i, r := range keep {
		a.from, a.to, a.lo, a.hi, a.ys = append(a.from, r.From), append(a.to, r.To), append(a.lo, r.Lo), append(a.hi, r.Hi), append(a.ys, float64(i))
		name := r.Model
		if r.Effort != "" && r.Effort != "none" {
			name += " (" + r.Effort + ")"
		}
		names = append(names, name)
	}
	p := newPlot(fmt.Sprintf("%s when switching from %s to %s", metric, from, to), metric, "")
	p.Add(a)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(keep))-0.4
	h := vg.Length(0.9+0.22*float64(len(keep))) * vg.Inch
	return withRightColumn(a.labelWidth(), "harness-switch", fmt.Sprintf("Change in %s per open model when switching harness from %s to %s (arrow from %s to %s; "+
		"grey bar and brackets: the paired cluster-bootstrap 95%% interval of the change, scenarios resampled), smallest model on top.",
		metric, from, to, from, to), ColumnWidth, h, p, len(keep)), nil
}

// matrix draws a symmetric matrix of correlations as coloured cells with
// their values.
type matrix struct {
	r [][]float64
}

func (m *matrix) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(m.r)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			v := m.r[i][j]
			x0, x1 := trX(float64(j)-0.5), trX(float64(j)+0.5)
			y0, y1 := trY(float64(n-1-i)-0.5), trY(float64(n-1-i)+0.5)
			var path vg.Path
			path.Move(vg.Point{X: x0, Y: y0})
			path.Line(vg.Point{X: x1, Y: y0})
			path.Line(vg.Point{X: x1, Y: y1})
			path.Line(vg.Point{X: x0, Y: y1})
			path.Close()
			c.SetColor(diverging(v))
			c.Fill(path)
			sty := text.Style{Color: color.Black, Font: plotter.DefaultFont, Handler: plot.DefaultTextHandler, XAlign: draw.XCenter, YAlign: draw.YCenter}
			sty.Font.Size = 8
			if math.Abs(v) > 0.6 {
				sty.Color = color.White
			}
			label := "–"
			if !math.IsNaN(v) {
				label = fmt.Sprintf("%.2f", v)
			}
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
		}
	}
}

func (m *matrix) DataRange() (xmin, xmax, ymin, ymax float64) {
	n := float64(len(m.r))
	return -0.5, n - 0.5, -0.5, n - 0.5
}

// diverging maps r in [−1, 1] from vermillion through white to blue.
func diverging(r float64) color.Color {
	if math.IsNaN(r) {
		return color.Gray{Y: 220}
	}
	r = math.Max(-1, math.Min(1, r))
	end := [3]float64{0, 90, 160} // a dark blue
	if r < 0 {
		end = [3]float64{180, 60, 0} // a dark vermillion
	}
	t := math.Abs(r)
	mix := func(a float64) uint8 { return uint8(math.Round(255 + (a-255)*t)) }
	return color.RGBA{mix(end[0]), mix(end[1]), mix(end[2]), 255}
}

// CorrelationMatrix draws the run-level Pearson correlations of the
// metrics (analysis.RunCorrelationMatrix) as an annotated heat map.
func CorrelationMatrix(res []analysis.CorrResult) (*Figure, error) {
	var names []string
	pos := map[string]int{}
	for _, r := range res {
		for _, m := range []string{r.X, r.Y} {
			if _, ok := pos[m]; !ok {
				pos[m] = len(names)
				names = append(names, m)
			}
		}
	}
	if len(names) < 2 {
		return nil, fmt.Errorf("correlations: fewer than two metrics")
	}
	n := len(names)
	r := make([][]float64, n)
	for i := range r {
		r[i] = make([]float64, n)
		for j := range r[i] {
			r[i][j] = math.NaN()
		}
		r[i][i] = 1
	}
	for _, c := range res {
		if c.Level != "" && c.Level != analysis.RunLevel || c.Method != "" && c.Method != analysis.PearsonR {
			continue
		}
		r[pos[c.X]][pos[c.Y]], r[pos[c.Y]][pos[c.X]] = c.R, c.R
	}
	p := newPlot("Run-level Pearson r", "", "")
	p.Add(&matrix{r: r})
	p.NominalX(names...)
	rev := make([]string, n)
	for i, s := range names {
		rev[n-1-i] = s
	}
	p.NominalY(rev...)
	return single("correlations", "Run-level Pearson correlations between the metrics.", ColumnWidth, ColumnWidth*0.85, p, n*n), nil
}

// metricPanels draws, for each metric, one panel of estimates per
// category (points with intervals), each panel on its own scale. With
// many categories they run down the side (names once, on the left).
func metricPanels(name, caption string, e estimates, cats [][]string, labels []string, metrics []string) (*Figure, error) {
	horizontal := len(cats) > 4
	var ps []*plot.Plot
	marks := 0
	n := float64(len(cats))
	for mi, m := range metrics {
		p := newPlot(m, "", "")
		iv := &intervals{color: colour(mi), radius: vg.Points(2), horizontal: horizontal}
		for i, k := range cats {
			est, ok := e.get(k, m)
			v, lo, hi := math.NaN(), math.NaN(), math.NaN()
			if ok {
				v, lo, hi = est.Value, est.Lo, est.Hi
			}
			pos := float64(i)
			if horizontal {
				pos = n - 1 - float64(i) // the first category on top
			}
			iv.xs, iv.ys, iv.lo, iv.hi = append(iv.xs, pos), append(iv.ys, v), append(iv.lo, lo), append(iv.hi, hi)
		}
		p.Add(iv)
		if horizontal {
			names := make([]string, len(labels))
			if mi == 0 {
				for i, l := range labels {
					names[len(labels)-1-i] = l
				}
			}
			p.NominalY(names...)
			p.Y.Min, p.Y.Max = -0.6, n-0.4
			p.Y.Tick.Label.Font.Size = 7
			pad(&p.X)
		} else {
			p.NominalX(labels...)
			p.X.Min, p.X.Max = -0.5, n-0.5
			pad(&p.Y)
		}
		marks += iv.marks()
		ps = append(ps, p)
	}
	if marks == 0 {
		return nil, analysis.NoDataf("%s: no estimate to draw", name)
	}
	h := 2.2 * vg.Inch
	if horizontal {
		h = vg.Length(0.8+0.16*n) * vg.Inch
	}
	return panels(name, caption, FullWidth, h, ps, marks), nil
}

// HarnessComparison draws the metrics per harness, one panel per metric,
// from results grouped by harness.
func HarnessComparison(res []analysis.GroupEstimate, metrics []string) (*Figure, error) {
	e, keys := index(res, "harness")
	var labels []string
	for _, k := range keys {
		labels = append(labels, k[0])
	}
	return metricPanels("harness-comparison", "The metrics per harness, each panel on its own scale, with 95% bootstrap intervals.",
		e, keys, labels, metrics)
}

// Breakdown draws the metrics per value of a dimension (scenario, persona
// group, …), from results grouped by it.
func Breakdown(name, dimLabel string, res []analysis.GroupEstimate, dim string, metrics []string) (*Figure, error) {
	e, keys := index(res, dim)
	var labels []string
	for _, k := range keys {
		labels = append(labels, k[0])
	}
	return metricPanels(name, "The metrics per "+dimLabel+", each panel on its own scale, with 95% bootstrap intervals.",
		e, keys, labels, metrics)
}

// Effort draws the metrics against reasoning effort, a line with its 95%
// bootstrap band per metric, from results grouped by effort (of one model
// and harness).
func Effort(res []analysis.GroupEstimate, metrics []string, what string) (*Figure, error) {
	e, keys := index(res, "effort")
	rank := analysis.EffortRank
	sort.SliceStable(keys, func(a, b int) bool {
		ra, rb := rank(keys[a][0]), rank(keys[b][0])
		if ra != rb {
			return ra < rb
		}
		return keys[a][0] < keys[b][0]
	})
	if len(keys) < 2 {
		return nil, fmt.Errorf("effort: fewer than two effort levels")
	}
	var labels []string
	for _, k := range keys {
		labels = append(labels, k[0])
	}
	var ps []*plot.Plot
	marks := 0
	for mi, m := range metrics {
		p := newPlot(m, "effort", "")
		var xs, ys, lo, hi []float64
		for i, k := range keys {
			est, ok := e.get(k, m)
			if !ok {
				est = analysis.Estimate{Value: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
			}
			xs, ys, lo, hi = append(xs, float64(i)), append(ys, est.Value), append(lo, est.Lo), append(hi, est.Hi)
		}
		if b := band(xs, lo, hi, colour(mi)); b != nil {
			p.Add(b)
		}
		if l := line(xs, ys, colour(mi), false); l != nil {
			p.Add(l)
		}
		iv := &intervals{xs: xs, ys: ys, lo: ys, hi: ys, color: colour(mi), radius: vg.Points(2)}
		p.Add(iv)
		marks += iv.marks()
		p.NominalX(labels...)
		p.X.Min, p.X.Max = -0.3, float64(len(keys))-0.7
		pad(&p.Y)
		ps = append(ps, p)
	}
	return panels("effort", "The metrics against reasoning effort"+what+", with 95% bootstrap bands.", FullWidth, 2.2*vg.Inch, ps, marks), nil
}

// HumanTrust draws a study question's mean over checkpoint days, a line
// with its 95% bootstrap band per condition (analysis.Study).
func HumanTrust(stats []analysis.StudyStat, question string) (*Figure, error) {
	byCond := map[string][]analysis.StudyStat{}
	var conds []string
	for _, s := range stats {
		if s.Kind != "over_days" || s.Question != question {
			continue
		}
		if _, ok := byCond[s.Condition]; !ok {
			conds = append(conds, s.Condition)
		}
		byCond[s.Condition] = append(byCond[s.Condition], s)
	}
	if len(conds) == 0 {
		return nil, analysis.NoDataf("human-trust: no %q rating over days", question)
	}
	sort.Strings(conds)
	p := newPlot("Human "+question+" over the study", "Checkpoint day", question)
	marks := 0
	for i, c := range conds {
		ss := byCond[c]
		sort.Slice(ss, func(a, b int) bool { return ss[a].Day < ss[b].Day })
		var xs, ys, lo, hi []float64
		for _, s := range ss {
			xs, ys, lo, hi = append(xs, float64(s.Day)), append(ys, s.Value), append(lo, s.Lo), append(hi, s.Hi)
		}
		if b := band(xs, lo, hi, colour(i)); b != nil {
			p.Add(b)
		}
		if l := line(xs, ys, colour(i), i%2 == 1); l != nil {
			p.Add(l)
		}
		iv := &intervals{xs: xs, ys: ys, lo: ys, hi: ys, color: colour(i), shape: Glyphs[i%len(Glyphs)], radius: vg.Points(1.8)}
		if l := line(xs, ys, colour(i), i%2 == 1); l != nil {
			p.Legend.Add(c, l, iv)
		}
		p.Add(iv)
		marks += iv.marks()
	}
	pad(&p.X)
	pad(&p.Y)
	return single("human-trust", "Human "+question+" at each checkpoint day by condition, with 95% bootstrap bands (participants resampled).",
		ColumnWidth, 2.6*vg.Inch, p, marks), nil
}

// MDECurve is a metric's minimum detectable effect against the number of
// scenarios of a design (analysis.MDE), the design's own marked.
type MDECurve struct {
	Metric    string
	Scenarios []float64
	MDE       []float64
	Current   float64 // the warehouse's number of scenarios (0: none)
}

// MDE draws each metric's MDE against the scenarios, a panel per metric
// on its own scale (its units), the warehouse's design marked.
func MDE(curves []MDECurve) (*Figure, error) {
	if len(curves) == 0 {
		return nil, analysis.NoDataf("mde: no metric has variance components")
	}
	var ps []*plot.Plot
	marks := 0
	for i, c := range curves {
		p := newPlot(c.Metric, "scenarios", "MDE")
		if l := line(c.Scenarios, c.MDE, colour(i), false); l != nil {
			p.Add(l)
		}
		for k, s := range c.Scenarios {
			if s == c.Current {
				iv := &intervals{xs: []float64{s}, ys: []float64{c.MDE[k]}, lo: []float64{c.MDE[k]}, hi: []float64{c.MDE[k]}, color: colour(i), radius: vg.Points(2.2)}
				p.Add(iv)
				marks += iv.marks()
			}
		}
		pad(&p.X)
		p.Y.Min = 0
		pad(&p.Y)
		p.Y.Min = math.Max(p.Y.Min, 0)
		ps = append(ps, p)
	}
	return panels("mde", "The smallest difference between two configurations a design detects (paired test over scenarios, α = 0.05, power 0.8) against its number of scenarios, personas and repetitions as the warehouse's; the dot: the warehouse's own design.",
		FullWidth, 2.2*vg.Inch, ps, marks), nil
}

// RankPoint is a configuration's rank with its interval (analysis.Ranks).
type RankPoint struct {
	Label        string
	Rank, Lo, Hi float64
	PBest        float64
}

// Ranks draws each configuration's rank on a metric with its interval,
// the best on top (points given best first).
func Ranks(points []RankPoint, metric string) (*Figure, error) {
	if len(points) == 0 {
		return nil, analysis.NoDataf("rank: no configuration has a value of %s", metric)
	}
	n := float64(len(points))
	p := newPlot("Ranks on "+metric, "rank (1: the highest)", "")
	iv := &intervals{color: colour(0), radius: vg.Points(2), horizontal: true}
	names := make([]string, len(points))
	for i, r := range points {
		pos := n - 1 - float64(i)
		iv.xs, iv.ys, iv.lo, iv.hi = append(iv.xs, pos), append(iv.ys, r.Rank), append(iv.lo, r.Lo), append(iv.hi, r.Hi)
		names[len(points)-1-i] = r.Label
	}
	p.Add(iv)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, n-0.4
	p.Y.Tick.Label.Font.Size = 6
	p.X.Min, p.X.Max = 0.5, n+0.5
	return single("rank", "Each configuration's rank on "+metric+" with its 95% interval (joint cluster bootstrap: the same scenarios drawn for every configuration).",
		ColumnWidth, vg.Length(0.8+0.13*n)*vg.Inch, p, iv.marks()), nil
}
