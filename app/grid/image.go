package grid

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// LabelSize is the labels' font size in pixels: legible at 100 %.
const LabelSize = 16

// pad is the space around a label, in pixels.
const pad = 6

// labelFace is Go Regular (golang.org/x/image/font/gofont) at LabelSize pixels; a new face each
// time, as a face may not be shared between goroutines.
func labelFace() (font.Face, error) {
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return nil, err
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: LabelSize, DPI: 72, Hinting: font.HintingFull})
}

// Layout places a grid image's parts: the label band above (Top pixels, the X values) and to the
// left (Left pixels, the Y values), then the cells, each CellW × CellH, cell (x, y) at
// (Left + x·CellW, Top + y·CellH).
type Layout struct {
	Left, Top     int
	CellW, CellH  int
	Width, Height int
}

// CellRect is where cell (x, y) of one grid image lies.
func (l Layout) CellRect(x, y int) image.Rectangle {
	return image.Rect(l.Left+x*l.CellW, l.Top+y*l.CellH, l.Left+(x+1)*l.CellW, l.Top+(y+1)*l.CellH)
}

// Layout is the layout of g's grid images for cells of at most cellW × cellH pixels.
func (g *Grid) Layout(cellW, cellH int) (Layout, error) {
	f, err := labelFace()
	if err != nil {
		return Layout{}, fmt.Errorf("the label font: %w", err)
	}
	line := f.Metrics().Height.Ceil()
	l := Layout{CellW: cellW, CellH: cellH, Top: 2*line + 2*pad}
	left := 0
	for _, s := range g.cornerLines() {
		left = max(left, font.MeasureString(f, s).Ceil())
	}
	if a := g.Axes[1]; a != nil {
		for _, v := range a.Values {
			left = max(left, min(font.MeasureString(f, v.Text).Ceil(), 4*cellW))
		}
	}
	l.Left = left + 2*pad
	d := g.Dims()
	l.Width, l.Height = l.Left+d[0]*cellW, l.Top+d[1]*cellH
	return l, nil
}

// cornerLines name the axes in the top-left corner: "X: seed", "Y: steps" (or their Titles).
func (g *Grid) cornerLines() []string {
	var out []string
	for i, a := range g.Axes[:2] {
		if a != nil {
			title := g.Titles[i]
			if title == "" {
				title = a.Name()
			}
			out = append(out, fmt.Sprintf("%s: %s", Labels[i], title))
		}
	}
	return out
}

// Placeholder fills a cell not made (yet, or because the run was cancelled).
var Placeholder = color.NRGBA{0x40, 0x40, 0x40, 0xff}

// Compose draws grid image z (the Z axis's value index; 0 without one) from the cells made so
// far: cells maps a cell's Index to its picture (a missing one is drawn as Placeholder). Each
// picture is placed at the top left of its slot; the slots are as large as the largest picture.
func (g *Grid) Compose(z int, cells map[int]*image.NRGBA) (*image.NRGBA, Layout, error) {
	cw, ch := 1, 1
	for _, img := range cells {
		cw, ch = max(cw, img.Rect.Dx()), max(ch, img.Rect.Dy())
	}
	l, err := g.Layout(cw, ch)
	if err != nil {
		return nil, l, err
	}
	f, err := labelFace()
	if err != nil {
		return nil, l, err
	}
	out := image.NewNRGBA(image.Rect(0, 0, l.Width, l.Height))
	draw.Draw(out, out.Rect, image.White, image.Point{}, draw.Src)
	d := g.Dims()
	per := g.PerGrid()
	line := f.Metrics().Height.Ceil()
	ascent := f.Metrics().Ascent.Ceil()
	for i, s := range g.cornerLines() {
		text(out, f, s, pad, pad+ascent+i*line, l.Left-pad)
	}
	if a := g.Axes[0]; a != nil {
		for x, v := range a.Values {
			r := l.CellRect(x, 0)
			w := font.MeasureString(f, v.Text).Ceil()
			text(out, f, v.Text, r.Min.X+max(0, (l.CellW-w)/2), pad+ascent+line/2, r.Max.X)
		}
	}
	if a := g.Axes[1]; a != nil {
		for y, v := range a.Values {
			r := l.CellRect(0, y)
			text(out, f, v.Text, pad, r.Min.Y+(l.CellH+ascent)/2, l.Left-pad)
		}
	}
	for y := range d[1] {
		for x := range d[0] {
			r := l.CellRect(x, y)
			img, ok := cells[z*per+y*d[0]+x]
			if !ok {
				draw.Draw(out, r, image.NewUniform(Placeholder), image.Point{}, draw.Src)
				continue
			}
			draw.Draw(out, image.Rectangle{Min: r.Min, Max: r.Min.Add(img.Rect.Size())}, img, img.Rect.Min, draw.Src)
		}
	}
	return out, l, nil
}

// text draws s in black with its baseline at (x, y), cut with "…" to end before maxX.
func text(dst draw.Image, f font.Face, s string, x, y, maxX int) {
	if font.MeasureString(f, s).Ceil() > maxX-x {
		r := []rune(s)
		for len(r) > 0 && font.MeasureString(f, string(r)+"…").Ceil() > maxX-x {
			r = r[:len(r)-1]
		}
		s = string(r) + "…"
	}
	d := font.Drawer{Dst: dst, Src: image.Black, Face: f, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// ComposeZ puts the grid images of each Z value side by side under a title band naming the Z
// axis and each value ("cfg: 2"), as A1111's X/Y/Z plot answers first; without a Z axis it is
// the one grid image itself.
func (g *Grid) ComposeZ(grids []*image.NRGBA) (*image.NRGBA, error) {
	z := g.Axes[2]
	if z == nil || len(grids) == 1 {
		return grids[0], nil
	}
	f, err := labelFace()
	if err != nil {
		return nil, fmt.Errorf("the label font: %w", err)
	}
	line := f.Metrics().Height.Ceil()
	top := line + 2*pad
	w, h := 0, 0
	for _, gi := range grids {
		w, h = w+gi.Rect.Dx(), max(h, gi.Rect.Dy())
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, top+h))
	draw.Draw(out, out.Rect, image.White, image.Point{}, draw.Src)
	x := 0
	for i, gi := range grids {
		title := z.Name() + ": " + z.Values[i].Text
		tw := font.MeasureString(f, title).Ceil()
		text(out, f, title, x+max(pad, (gi.Rect.Dx()-tw)/2), pad+f.Metrics().Ascent.Ceil(), x+gi.Rect.Dx())
		draw.Draw(out, image.Rect(x, top, x+gi.Rect.Dx(), top+gi.Rect.Dy()), gi, gi.Rect.Min, draw.Src)
		x += gi.Rect.Dx()
	}
	return out, nil
}
