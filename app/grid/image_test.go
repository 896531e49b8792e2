package grid

import (
	"image"
	"image/color"
	"testing"
)

func solid(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

// dark counts the pixels in r darker than mid-grey (drawn text).
func dark(img *image.NRGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := img.NRGBAAt(x, y)
			if int(c.R)+int(c.G)+int(c.B) < 3*128 {
				n++
			}
		}
	}
	return n
}

// The grid image has each cell at its slot, the X values labelled above each column, the Y
// values left of each row, and a placeholder for a cell not made.
func TestComposeLabelsAndOffsets(t *testing.T) {
	g, err := Parse([3]string{"seed=1-3", "cfg=2,4"}, Context{Prompt: "a fox"})
	if err != nil {
		t.Fatal(err)
	}
	cells := map[int]*image.NRGBA{}
	colours := map[int]color.NRGBA{}
	for i := range 5 { // cell 6 (index 5) is missing
		colours[i] = color.NRGBA{uint8(200 + 10*i), uint8(40 * i), 100, 255}
		cells[i] = solid(64, 48, colours[i])
	}
	img, l, err := g.Compose(0, cells)
	if err != nil {
		t.Fatal(err)
	}
	if l.CellW != 64 || l.CellH != 48 || l.Top < LabelSize || l.Left < LabelSize || img.Rect.Dx() != l.Left+3*64 || img.Rect.Dy() != l.Top+2*48 {
		t.Fatalf("layout %+v for an image of %v", l, img.Rect)
	}
	for _, c := range g.Cells() {
		r := l.CellRect(c.Pos[0], c.Pos[1])
		want, ok := colours[c.Index]
		if !ok {
			want = Placeholder
		}
		for _, p := range []image.Point{r.Min, r.Max.Sub(image.Pt(1, 1)), r.Min.Add(image.Pt(32, 24))} {
			if got := img.NRGBAAt(p.X, p.Y); got != want {
				t.Fatalf("cell %d at %v: %v, want %v", c.Index, p, got, want)
			}
		}
	}
	for x := range 3 {
		band := image.Rect(l.Left+x*64, 0, l.Left+(x+1)*64, l.Top)
		if dark(img, band) == 0 {
			t.Errorf("no label above column %d", x+1)
		}
	}
	for y := range 2 {
		band := image.Rect(0, l.Top+y*48, l.Left, l.Top+(y+1)*48)
		if dark(img, band) == 0 {
			t.Errorf("no label left of row %d", y+1)
		}
	}
	if dark(img, image.Rect(0, 0, l.Left, l.Top)) == 0 {
		t.Error("the corner names no axis")
	}
	s := g.Settings(0, []string{"a-1.png", "a-2.png", "a-3.png", "a-4.png", "a-5.png", ""})
	if len(s.Axes) != 2 || s.Axes[0].Name != "seed" || s.Axes[1].Place != "Y" || len(s.Axes[1].Values) != 2 || len(s.Cells) != 6 {
		t.Errorf("grid settings %+v", s)
	}
}

// ComposeZ puts the Z grids side by side under their titles.
func TestComposeZTitles(t *testing.T) {
	g, err := Parse([3]string{"seed=1,2", "", "cfg=2,4"}, Context{})
	if err != nil {
		t.Fatal(err)
	}
	var grids []*image.NRGBA
	for z := range 2 {
		cells := map[int]*image.NRGBA{}
		for i := range 2 {
			cells[z*2+i] = solid(40, 40, color.NRGBA{uint8(60 * (z + 1)), 0, 0, 255})
		}
		img, _, err := g.Compose(z, cells)
		if err != nil {
			t.Fatal(err)
		}
		grids = append(grids, img)
	}
	all, err := g.ComposeZ(grids)
	if err != nil {
		t.Fatal(err)
	}
	w0 := grids[0].Rect.Dx()
	if all.Rect.Dx() != 2*w0 || all.Rect.Dy() <= grids[0].Rect.Dy() {
		t.Fatalf("%v for two grids of %v", all.Rect, grids[0].Rect)
	}
	top := all.Rect.Dy() - grids[0].Rect.Dy()
	for z := range 2 {
		if dark(all, image.Rect(z*w0, 0, (z+1)*w0, top)) == 0 {
			t.Errorf("no title over Z grid %d", z+1)
		}
		l, _ := g.Layout(40, 40)
		p := l.CellRect(0, 0).Min.Add(image.Pt(z*w0+5, top+5))
		if c := all.NRGBAAt(p.X, p.Y); c.R != uint8(60*(z+1)) {
			t.Errorf("Z grid %d's first cell at %v is %v", z+1, p, c)
		}
	}
}

// Titles name the axes in the corner in their stead (a window's words), the PNG's settings keep
// the axes' names; without them the corner writes the names.
func TestCornerTitles(t *testing.T) {
	g, err := Parse([3]string{"prompt-sr=fox,owl", "cfg=2,4"}, Context{Prompt: "a fox"})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.cornerLines(); len(got) != 2 || got[0] != "X: prompt-sr" || got[1] != "Y: cfg" {
		t.Errorf("without titles the corner says %q", got)
	}
	g.Titles[0] = "Prompt: replace words"
	if got := g.cornerLines(); got[0] != "X: Prompt: replace words" || got[1] != "Y: cfg" {
		t.Errorf("with X's title the corner says %q", got)
	}
	if s := g.Settings(0, make([]string, 4)); s.Axes[0].Name != "prompt-sr" {
		t.Errorf("the settings name axis X %q", s.Axes[0].Name)
	}
}
