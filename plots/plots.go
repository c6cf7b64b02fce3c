// Package plots draws the paper's figures from analysis results, with
// gonum/plot, as PNG, SVG or PDF. It computes nothing statistical: every
// value and interval comes from package analysis.
//
// Figures are sized for a two-column paper (6.9 in wide across both
// columns, 3.3 in for one; Figure.Resize), use the Okabe–Ito colours (distinguishable with every
// common colour-vision deficiency) and one sans-serif font at 8 pt.
package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"codeberg.org/go-pdf/fpdf"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// PDFDate is the creation and modification date of a PDF whose Figure
// has no Date: $SOURCE_DATE_EPOCH (seconds, the reproducible-builds
// convention) when set, else the Unix epoch, so that the same data give
// the same PDF bytes.
// The PDF library's catalogs are written in sorted order for the same
// reason.
var PDFDate = pdfDate()

func pdfDate() time.Time {
	if s, err := strconv.ParseInt(os.Getenv("SOURCE_DATE_EPOCH"), 10, 64); err == nil && s >= 0 {
		return time.Unix(s, 0).UTC()
	}
	return time.Unix(0, 0).UTC()
}

func init() {
	fpdf.SetDefaultCreationDate(PDFDate)
	fpdf.SetDefaultModificationDate(PDFDate)
	fpdf.SetDefaultCatalogSort(true)
}

// Formats are the image formats a figure is written in.
var Formats = []string{"png", "svg", "pdf"}

// Widths for a two-column paper: across the page, and one column.
const (
	FullWidth   = 6.9 * vg.Inch
	ColumnWidth = 3.3 * vg.Inch
)

// Sizes are the paper sizes a figure can be asked for (Figure.Resize).
var Sizes = []string{"column", "page"}

// Resize sets the figure's width to one column ("column") or the page
// ("page"), its height in proportion; "" keeps its own size (one column
// for a single plot, the page for panels). Texts keep their sizes in
// points, so that a figure placed at its width in a paper prints them at
// 7 pt or more.
func (f *Figure) Resize(size string) error {
	var w vg.Length
	switch size {
	case "":
		return nil
	case "column":
		w = ColumnWidth
	case "page":
		w = FullWidth
	default:
		return fmt.Errorf("size: expected column or page, found %q", size)
	}
	f.Height, f.Width = f.Height*w/f.Width, w
	return nil
}

// Palette is the Okabe–Ito palette, black last.
var Palette = []color.Color{
	color.RGBA{0, 114, 178, 255},   // blue
	color.RGBA{230, 159, 0, 255},   // orange
	color.RGBA{0, 158, 115, 255},   // bluish green
	color.RGBA{204, 121, 167, 255}, // reddish purple
	color.RGBA{86, 180, 233, 255},  // sky blue
	color.RGBA{213, 94, 0, 255},    // vermillion
	color.RGBA{240, 228, 66, 255},  // yellow
	color.RGBA{0, 0, 0, 255},       // black
}

func colour(i int) color.Color { return Palette[i%len(Palette)] }

// Figure is a figure ready to be rendered.
type Figure struct {
	Name          string
	Caption       string
	Width, Height vg.Length
	// Marks counts the data marks drawn (points, bars, cells, arrows):
	// a figure with none shows nothing.
	Marks int
	// Date is the PDF's creation and modification date (zero: PDFDate).
	// A report sets it from its data (reports.Dataset.DataDate), so the
	// PDF says when the data are from, and the same data give the same
	// bytes.
	Date time.Time
	draw func(dc draw.Canvas)
}

var pdfDateMu sync.Mutex

// newPDF makes a PDF canvas whose document carries date (zero: PDFDate).
// The PDF library copies its default dates into a document when it is
// made: they are set for this one, under a lock, and put back.
func newPDF(w, h vg.Length, date time.Time) *vgpdf.Canvas {
	if date.IsZero() {
		date = PDFDate
	}
	pdfDateMu.Lock()
	defer pdfDateMu.Unlock()
	fpdf.SetDefaultCreationDate(date.UTC())
	fpdf.SetDefaultModificationDate(date.UTC())
	defer fpdf.SetDefaultCreationDate(PDFDate)
	defer fpdf.SetDefaultModificationDate(PDFDate)
	return vgpdf.New(w, h)
}

var fontOnce sync.Once

// setFonts makes every text of the figures one sans-serif face.
func setFonts() {
	fontOnce.Do(func() {
		f := font.Font{Typeface: "Liberation", Variant: "Sans", Size: 8}
		plot.DefaultFont = f
		plotter.DefaultFont = f
	})
}

// newPlot is a plot with gymlens's styling.
func newPlot(title, xlabel, ylabel string) *plot.Plot {
	setFonts()
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = 9
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Size = 8
		a.Tick.Label.Font.Size = 7
	}
	p.Legend.TextStyle.Font.Size = 7
	p.Legend.ThumbnailWidth = vg.Points(14)
	return p
}

// single makes a figure of one plot. Its legend, if any, stands to the
// right of the plot, outside the data.
func single(name, caption string, w, h vg.Length, p *plot.Plot, marks int) *Figure {
	leg := p.Legend
	p.Legend = plot.NewLegend()
	return &Figure{Name: name, Caption: caption, Width: w, Height: h, Marks: marks, draw: func(dc draw.Canvas) {
		r := leg.Rectangle(dc)
		lw := r.Max.X - r.Min.X
		if lw <= 0 {
			p.Draw(dc)
			return
		}
		gap := vg.Points(4)
		p.Draw(draw.Crop(dc, 0, -(lw + gap), 0, 0))
		leg.Top, leg.Left = true, false
		top := -p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y - vg.Points(6)
		leg.Draw(draw.Crop(dc, dc.Max.X-dc.Min.X-lw, 0, 0, top))
	}}
}

// withRightColumn is single with a column of width w kept free right of
// the plot, for texts its plotters write beside the axes.
func withRightColumn(w vg.Length, name, caption string, fw, h vg.Length, p *plot.Plot, marks int) *Figure {
	f := single(name, caption, fw, h, p, marks)
	inner := f.draw
	f.draw = func(dc draw.Canvas) { inner(draw.Crop(dc, 0, -w, 0, 0)) }
	return f
}

// pad widens a continuous axis by 6% of its range on each side, so that
// markers and interval caps at the extremes are drawn whole, inside the
// axes.
//
// An axis with no finite range (a panel with no value: a metric no run
// has) gets [0, 1]: gonum/plot's tick search never ends on NaN.
func pad(a *plot.Axis) {
	if math.IsNaN(a.Min) || math.IsNaN(a.Max) || math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) {
		a.Min, a.Max = 0, 1
		return
	}
	span := a.Max - a.Min
	if span <= 0 || math.IsInf(span, 0) || math.IsNaN(span) {
		span = math.Max(math.Abs(a.Max), 1)
	}
	a.Min, a.Max = a.Min-0.06*span, a.Max+0.06*span
}

// padLog is pad for a log axis: 8% of the range's logarithm each side.
func padLog(a *plot.Axis) {
	if a.Min <= 0 || a.Max <= a.Min {
		return
	}
	f := math.Pow(a.Max/a.Min, 0.08)
	a.Min, a.Max = a.Min/f, a.Max*f
}

// panels makes a figure of plots side by side, each on its own scale.
func panels(name, caption string, w, h vg.Length, ps []*plot.Plot, marks int) *Figure {
	return &Figure{Name: name, Caption: caption, Width: w, Height: h, Marks: marks, draw: func(dc draw.Canvas) {
		t := draw.Tiles{Rows: 1, Cols: len(ps), PadX: vg.Millimeter * 2, PadY: vg.Millimeter, PadTop: vg.Millimeter, PadBottom: vg.Millimeter,
			PadLeft: vg.Millimeter, PadRight: vg.Millimeter}
		cs := plot.Align([][]*plot.Plot{ps}, t, dc)
		for i, p := range ps {
			p.Draw(cs[0][i])
		}
	}}
}

// Render draws the figure in format (png at 300 dpi, svg, pdf). SVG output
// is the same bytes for the same data.
func (f *Figure) Render(format string) ([]byte, error) {
	if f.draw == nil {
		return nil, fmt.Errorf("figure %s has nothing to draw", f.Name)
	}
	var c interface {
		vg.CanvasSizer
	}
	var write func(*bytes.Buffer) error
	switch format {
	case "png":
		img := vgimg.NewWith(vgimg.UseWH(f.Width, f.Height), vgimg.UseDPI(300), vgimg.UseBackgroundColor(color.White))
		c = img
		// Fast compression: a report writes many figures, and the
		// files stay small (flat colours compress well anyway).
		write = func(b *bytes.Buffer) error {
			return (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(b, img.Image())
		}
	case "svg":
		s := vgsvg.NewWith(vgsvg.UseWH(f.Width, f.Height), vgsvg.EmbedFonts(false))
		c = s
		write = func(b *bytes.Buffer) error {
			// Fonts are named, not embedded (an embedded face is 0.5 MB
			// per figure); a viewer without Liberation Sans uses a
			// metric-compatible or similar sans-serif.
			var raw bytes.Buffer
			if _, err := s.WriteTo(&raw); err != nil {
				return err
			}
			b.Write(bytes.ReplaceAll(raw.Bytes(), []byte("font-family:Liberation Sans"),
				[]byte("font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif")))
			return nil
		}
	case "pdf":
		p := newPDF(f.Width, f.Height, f.Date)
		sp := straightPDF{p, new(bool)}
		c = sp
		write = func(b *bytes.Buffer) error {
			var raw bytes.Buffer
			if _, err := p.WriteTo(&raw); err != nil {
				return err
			}
			out := raw.Bytes()
			if !*sp.translucent {
				// The PDF library marks every page a transparency group
				// once any alpha is set, even an opaque one; a figure
				// with nothing translucent needs none, and two such
				// groups on one page of a paper make pdfTeX warn. Blanked
				// in place (same length), so the offsets stay right.
				out = bytes.Replace(out, pageGroup, bytes.Repeat([]byte(" "), len(pageGroup)), 1)
			}
			b.Write(out)
			return nil
		}
	default:
		return nil, fmt.Errorf("format: expected one of %s, found %q", strings.Join(Formats, ", "), format)
	}
	if textCheck != nil {
		w, h := c.Size()
		c = &textBounds{CanvasSizer: c, w: w, h: h, m: affine{a: 1, d: 1}}
	}
	f.draw(draw.New(c))
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return nil, fmt.Errorf("rendering %s as %s: %w", f.Name, format, err)
	}
	return b.Bytes(), nil
}

// straightPDF hands vgpdf colours as it reads them: vgpdf takes a colour's
// RGBA() (premultiplied by alpha) as the colour and then applies the alpha
// again, so a translucent band came out darkened twice (grey-brown where
// PNG and SVG show a light tint). Un-premultiplied first, the PDF shows
// what the other formats show.
type straightPDF struct {
	*vgpdf.Canvas
	translucent *bool // a colour with alpha < 1 was set
}

func (c straightPDF) SetColor(clr color.Color) {
	if clr != nil {
		n := color.NRGBAModel.Convert(clr).(color.NRGBA)
		*c.translucent = *c.translucent || n.A < 255
		clr = straight(n)
	}
	c.Canvas.SetColor(clr)
}

// pageGroup is the transparency group the PDF library gives every page.
var pageGroup = []byte("/Group <</Type /Group /S /Transparency /CS /DeviceRGB>>")

// straight is a colour whose RGBA() is not premultiplied.
type straight color.NRGBA

func (s straight) RGBA() (r, g, b, a uint32) {
	return uint32(s.R) * 0x101, uint32(s.G) * 0x101, uint32(s.B) * 0x101, uint32(s.A) * 0x101
}

// markCheck, when set (by the tests), is told of every data mark drawn:
// whether it lies inside its plot's data area.
var markCheck func(name string, inside bool)

// textCheck, when set (by the tests), is told of every text drawn:
// whether its box (the font's advance width by its ascent and descent
// less a point, wherever the canvas's rotations and translations put it) lies inside
// the figure.
var textCheck func(text string, inside bool)

// affine maps x, y to a·x + c·y + e, b·x + d·y + f.
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.c*y + m.e, m.b*x + m.d*y + m.f
}

// textBounds is a canvas that follows its transformations and reports
// each text's box to textCheck.
type textBounds struct {
	vg.CanvasSizer
	w, h  vg.Length
	m     affine
	saved []affine
}

func (t *textBounds) Push() { t.saved = append(t.saved, t.m); t.CanvasSizer.Push() }

func (t *textBounds) Pop() {
	if n := len(t.saved); n > 0 {
		t.m, t.saved = t.saved[n-1], t.saved[:n-1]
	}
	t.CanvasSizer.Pop()
}

func (t *textBounds) Translate(pt vg.Point) {
	m := &t.m
	m.e, m.f = m.a*float64(pt.X)+m.c*float64(pt.Y)+m.e, m.b*float64(pt.X)+m.d*float64(pt.Y)+m.f
	t.CanvasSizer.Translate(pt)
}

func (t *textBounds) Rotate(rad float64) {
	m, sin, cos := t.m, math.Sin(rad), math.Cos(rad)
	t.m.a, t.m.b, t.m.c, t.m.d = m.a*cos+m.c*sin, m.b*cos+m.d*sin, -m.a*sin+m.c*cos, -m.b*sin+m.d*cos
	t.CanvasSizer.Rotate(rad)
}

func (t *textBounds) Scale(x, y float64) {
	t.m.a, t.m.b, t.m.c, t.m.d = t.m.a*x, t.m.b*x, t.m.c*y, t.m.d*y
	t.CanvasSizer.Scale(x, y)
}

func (t *textBounds) FillString(f font.Face, pt vg.Point, s string) {
	ext := f.Extents()
	x0, x1 := float64(pt.X), float64(pt.X+f.Width(s))
	// A point of slack across the line: the font's ascent and descent
	// leave room for accents and descenders that gonum/plot's layout
	// gives a little less of.
	y0, y1 := float64(pt.Y-ext.Descent)+1, float64(pt.Y+ext.Ascent)-1
	const eps = 0.01
	inside := true
	lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, p := range [][2]float64{{x0, y0}, {x0, y1}, {x1, y0}, {x1, y1}} {
		x, y := t.m.apply(p[0], p[1])
		lo, hi = [2]float64{math.Min(lo[0], x), math.Min(lo[1], y)}, [2]float64{math.Max(hi[0], x), math.Max(hi[1], y)}
		inside = inside && x >= -eps && x <= float64(t.w)+eps && y >= -eps && y <= float64(t.h)+eps
	}
	textCheck(fmt.Sprintf("%q from (%.1f, %.1f) to (%.1f, %.1f) on %.1f × %.1f", s, lo[0], lo[1], hi[0], hi[1], t.w.Points(), t.h.Points()), inside)
	t.CanvasSizer.FillString(f, pt, s)
}

// mark reports a data mark of radius r at pt on the data area c.
func mark(c draw.Canvas, pt vg.Point, r ...vg.Length) {
	if markCheck == nil {
		return
	}
	var rad vg.Length
	if len(r) > 0 {
		rad = r[0]
	}
	const eps = 0.01
	markCheck(fmt.Sprintf("(%.1f, %.1f)", pt.X, pt.Y), pt.X-rad >= c.Min.X-eps && pt.X+rad <= c.Max.X+eps && pt.Y-rad >= c.Min.Y-eps && pt.Y+rad <= c.Max.Y+eps)
}

// intervals draws points with vertical interval bars: the usual way to
// show an estimate and its bootstrap interval.
type intervals struct {
	xs, ys, lo, hi []float64
	color          color.Color
	shape          draw.GlyphDrawer // nil: a circle
	radius         vg.Length
	horizontal     bool // values along x, categories (xs) along y
}

func (iv *intervals) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	line := draw.LineStyle{Color: iv.color, Width: vg.Points(0.8)}
	cap := vg.Points(2)
	for i := range iv.xs {
		if math.IsNaN(iv.ys[i]) {
			continue
		}
		if iv.horizontal {
			y := trY(iv.xs[i])
			if !math.IsNaN(iv.lo[i]) && !math.IsNaN(iv.hi[i]) {
				lo, hi := trX(iv.lo[i]), trX(iv.hi[i])
				c.StrokeLine2(line, lo, y, hi, y)
				c.StrokeLine2(line, lo, y-cap, lo, y+cap)
				c.StrokeLine2(line, hi, y-cap, hi, y+cap)
				mark(c, vg.Point{X: lo, Y: y}, cap)
				mark(c, vg.Point{X: hi, Y: y}, cap)
			}
			pt := vg.Point{X: trX(iv.ys[i]), Y: y}
			c.DrawGlyph(draw.GlyphStyle{Color: iv.color, Radius: iv.radius, Shape: iv.glyph()}, pt)
			mark(c, pt, iv.radius)
			continue
		}
		x := trX(iv.xs[i])
		if !math.IsNaN(iv.lo[i]) && !math.IsNaN(iv.hi[i]) {
			lo, hi := trY(iv.lo[i]), trY(iv.hi[i])
			c.StrokeLine2(line, x, lo, x, hi)
			c.StrokeLine2(line, x-cap, lo, x+cap, lo)
			c.StrokeLine2(line, x-cap, hi, x+cap, hi)
			mark(c, vg.Point{X: x, Y: lo}, cap)
			mark(c, vg.Point{X: x, Y: hi}, cap)
		}
		pt := vg.Point{X: x, Y: trY(iv.ys[i])}
		c.DrawGlyph(draw.GlyphStyle{Color: iv.color, Radius: iv.radius, Shape: iv.glyph()}, pt)
		mark(c, pt, iv.radius)
	}
}

// Glyphs are the marker shapes, one per series as the colours are, so
// that a figure reads in grey too.
var Glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{},
	draw.RingGlyph{}, draw.BoxGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

func (iv *intervals) glyph() draw.GlyphDrawer {
	if iv.shape != nil {
		return iv.shape
	}
	return draw.CircleGlyph{}
}

// Thumbnail draws the series' marker in a legend.
func (iv *intervals) Thumbnail(c *draw.Canvas) {
	pt := vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: (c.Min.Y + c.Max.Y) / 2}
	c.DrawGlyph(draw.GlyphStyle{Color: iv.color, Radius: iv.radius, Shape: iv.glyph()}, pt)
}

func (iv *intervals) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, ymin = math.Inf(1), math.Inf(1)
	xmax, ymax = math.Inf(-1), math.Inf(-1)
	for i := range iv.xs {
		for _, v := range []float64{iv.ys[i], iv.lo[i], iv.hi[i]} {
			if !math.IsNaN(v) {
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
			}
		}
		xmin, xmax = math.Min(xmin, iv.xs[i]), math.Max(xmax, iv.xs[i])
	}
	if iv.horizontal {
		return ymin, ymax, xmin, xmax
	}
	return
}

func (iv *intervals) marks() int {
	n := 0
	for _, y := range iv.ys {
		if !math.IsNaN(y) {
			n++
		}
	}
	return n
}

// band is a shaded interval around a line.
func band(xs, lo, hi []float64, c color.Color) *plotter.Polygon {
	var pts plotter.XYs
	for i := range xs {
		if !math.IsNaN(lo[i]) {
			pts = append(pts, plotter.XY{X: xs[i], Y: lo[i]})
		}
	}
	for i := len(xs) - 1; i >= 0; i-- {
		if !math.IsNaN(hi[i]) {
			pts = append(pts, plotter.XY{X: xs[i], Y: hi[i]})
		}
	}
	if len(pts) < 3 {
		return nil
	}
	poly, err := plotter.NewPolygon(pts)
	if err != nil {
		return nil
	}
	r, g, b, _ := c.RGBA()
	poly.Color = color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), 60}
	poly.LineStyle.Width = 0
	return poly
}

// line is a line through the points that have a value.
func line(xs, ys []float64, c color.Color, dashed bool) *plotter.Line {
	var pts plotter.XYs
	for i := range xs {
		if !math.IsNaN(ys[i]) {
			pts = append(pts, plotter.XY{X: xs[i], Y: ys[i]})
		}
	}
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil
	}
	l.Color, l.Width = c, vg.Points(1.2)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
	}
	return l
}
