// Command mkicon draws Easel's application icon (assets/icon.png, 1024×1024) from vector shapes:
// a wooden easel holding a canvas with a sweep of paint, on a dusk-gradient squircle. Running
// it again reproduces the committed file byte for byte.
//
// Usage: go run ./tools/mkicon [-o assets/icon.png] [-size 1024]
package main

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"golang.org/x/image/vector"
)

func main() {
	out := flag.String("o", "assets/icon.png", "output PNG")
	size := flag.Int("size", 1024, "edge length in pixels")
	flag.Parse()
	img := Draw(*size)
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkicon:", err)
		os.Exit(1)
	}
	if err := png.Encode(f, img); err != nil {
		fmt.Fprintln(os.Stderr, "mkicon:", err)
		os.Exit(1)
	}
	if err := f.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "mkicon:", err)
		os.Exit(1)
	}
}

// canvas scales a 1024-unit design onto the output size.
type canvas struct {
	dst *image.RGBA
	k   float32
}

func (c *canvas) fill(src image.Image, path func(r *vector.Rasterizer, k float32)) {
	b := c.dst.Bounds()
	r := vector.NewRasterizer(b.Dx(), b.Dy())
	path(r, c.k)
	r.Draw(c.dst, b, src, image.Point{})
}

func solid(r, g, b, a uint8) image.Image { return image.NewUniform(color.NRGBA{r, g, b, a}) }

// gradient is a linear gradient from (x0,y0) colour a to (x1,y1) colour b.
type gradient struct {
	x0, y0, x1, y1 float64
	a, b           color.NRGBA
}

func (g gradient) ColorModel() color.Model { return color.NRGBAModel }
func (g gradient) Bounds() image.Rectangle {
	return image.Rect(-1e9, -1e9, 1e9, 1e9)
}
func (g gradient) At(x, y int) color.Color {
	dx, dy := g.x1-g.x0, g.y1-g.y0
	t := ((float64(x)-g.x0)*dx + (float64(y)-g.y0)*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + (float64(b)-float64(a))*t)) }
	return color.NRGBA{mix(g.a.R, g.b.R), mix(g.a.G, g.b.G), mix(g.a.B, g.b.B), mix(g.a.A, g.b.A)}
}

// squircle traces a superellipse |x|^n + |y|^n = 1, the macOS icon outline.
func squircle(cx, cy, rad, n float64) func(r *vector.Rasterizer, k float32) {
	return func(r *vector.Rasterizer, k float32) {
		const steps = 360
		for i := 0; i <= steps; i++ {
			th := 2 * math.Pi * float64(i) / steps
			c, s := math.Cos(th), math.Sin(th)
			x := cx + rad*math.Copysign(math.Pow(math.Abs(c), 2/n), c)
			y := cy + rad*math.Copysign(math.Pow(math.Abs(s), 2/n), s)
			if i == 0 {
				r.MoveTo(float32(x)*k, float32(y)*k)
			} else {
				r.LineTo(float32(x)*k, float32(y)*k)
			}
		}
		r.ClosePath()
	}
}

// poly fills a polygon given in design units.
func poly(pts ...float32) func(r *vector.Rasterizer, k float32) {
	return func(r *vector.Rasterizer, k float32) {
		r.MoveTo(pts[0]*k, pts[1]*k)
		for i := 2; i < len(pts); i += 2 {
			r.LineTo(pts[i]*k, pts[i+1]*k)
		}
		r.ClosePath()
	}
}

// bar is a thick line segment from (x0,y0) to (x1,y1) with half-width w.
func bar(x0, y0, x1, y1, w float64) func(r *vector.Rasterizer, k float32) {
	dx, dy := x1-x0, y1-y0
	l := math.Hypot(dx, dy)
	nx, ny := -dy/l*w, dx/l*w
	return poly(float32(x0+nx), float32(y0+ny), float32(x1+nx), float32(y1+ny),
		float32(x1-nx), float32(y1-ny), float32(x0-nx), float32(y0-ny))
}

// stroke sweeps a brush of varying half-width along a cubic Bézier.
func stroke(p [4][2]float64, w0, w1 float64) func(r *vector.Rasterizer, k float32) {
	return func(r *vector.Rasterizer, k float32) {
		const n = 64
		pt := func(t float64) (float64, float64) {
			u := 1 - t
			x := u*u*u*p[0][0] + 3*u*u*t*p[1][0] + 3*u*t*t*p[2][0] + t*t*t*p[3][0]
			y := u*u*u*p[0][1] + 3*u*u*t*p[1][1] + 3*u*t*t*p[2][1] + t*t*t*p[3][1]
			return x, y
		}
		var left, right [][2]float64
		for i := 0; i <= n; i++ {
			t := float64(i) / n
			x, y := pt(t)
			xa, ya := pt(math.Max(0, t-0.01))
			xb, yb := pt(math.Min(1, t+0.01))
			dx, dy := xb-xa, yb-ya
			l := math.Hypot(dx, dy)
			// Tapered ends, full in the middle.
			w := (w0 + (w1-w0)*t) * math.Pow(math.Sin(math.Pi*t), 0.35)
			nx, ny := -dy/l*w, dx/l*w
			left = append(left, [2]float64{x + nx, y + ny})
			right = append(right, [2]float64{x - nx, y - ny})
		}
		r.MoveTo(float32(left[0][0])*k, float32(left[0][1])*k)
		for _, q := range left[1:] {
			r.LineTo(float32(q[0])*k, float32(q[1])*k)
		}
		for i := len(right) - 1; i >= 0; i-- {
			r.LineTo(float32(right[i][0])*k, float32(right[i][1])*k)
		}
		r.ClosePath()
	}
}

// Draw renders the icon at size×size.
func Draw(size int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, size, size))
	draw.Draw(dst, dst.Bounds(), image.Transparent, image.Point{}, draw.Src)
	c := &canvas{dst: dst, k: float32(size) / 1024}
	k := float64(c.k)
	// Background: a dusk gradient squircle, inset as Apple's icon grid asks (824 of 1024).
	c.fill(gradient{200 * k, 100 * k, 820 * k, 930 * k, color.NRGBA{46, 38, 92, 255}, color.NRGBA{214, 92, 86, 255}},
		squircle(512, 512, 412, 5))
	// Soft glow behind the canvas.
	c.fill(solid(255, 214, 160, 40), squircle(512, 450, 290, 2))
	// Easel: two front legs and a back leg, a crossbar and a ledge, in warm wood.
	wood := solid(196, 134, 78, 255)
	woodDark := solid(138, 86, 48, 255)
	c.fill(woodDark, bar(512, 230, 512, 840, 14))
	c.fill(wood, bar(500, 200, 330, 850, 20))
	c.fill(wood, bar(524, 200, 694, 850, 20))
	c.fill(wood, bar(372, 700, 652, 700, 14))
	c.fill(solid(120, 74, 40, 255), poly(310, 612, 714, 612, 704, 646, 320, 646))
	// The canvas: off-white with a thin shadow, standing on the ledge.
	c.fill(solid(20, 14, 40, 90), poly(352, 262, 688, 262, 688, 622, 352, 622))
	c.fill(solid(250, 246, 236, 255), poly(340, 250, 676, 250, 676, 610, 340, 610))
	// Paint: a sun and two sweeping strokes, the way an image emerges from noise.
	c.fill(solid(255, 196, 84, 255), squircle(590, 350, 46, 2))
	c.fill(solid(64, 170, 170, 255), stroke([4][2]float64{{370, 520}, {440, 420}, {540, 600}, {650, 470}}, 34, 26))
	c.fill(solid(214, 92, 86, 255), stroke([4][2]float64{{372, 576}, {470, 520}, {560, 610}, {650, 556}}, 18, 14))
	return dst
}
