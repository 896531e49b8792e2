package imagework

import (
	"fmt"
	"image"
	"strconv"
	"strings"

	"github.com/disintegration/imaging"
)

// Margins are the pixels an extended canvas grows by on each side.
type Margins struct{ Left, Top, Right, Bottom int }

// IsZero reports whether the canvas does not grow.
func (m Margins) IsZero() bool { return m == Margins{} }

// String is the margins as ParseMargins reads them.
func (m Margins) String() string { return fmt.Sprintf("%d,%d,%d,%d", m.Left, m.Top, m.Right, m.Bottom) }

// MaxMargin is the most pixels a canvas grows by on one side.
const MaxMargin = 4096

// ParseMargins reads "L,T,R,B" in pixels (each 0…MaxMargin, at least one above 0).
func ParseMargins(s string) (Margins, error) {
	parts := strings.Split(s, ",")
	bad := fmt.Errorf("extend %q: write the pixels to add as left,top,right,bottom, like 0,0,256,0", s)
	if len(parts) != 4 {
		return Margins{}, bad
	}
	var v [4]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 || n > MaxMargin {
			return Margins{}, fmt.Errorf("extend %q: each side takes 0 to %d pixels", s, MaxMargin)
		}
		v[i] = n
	}
	m := Margins{v[0], v[1], v[2], v[3]}
	if m.IsZero() {
		return Margins{}, fmt.Errorf("extend %q adds nothing: give at least one side more than 0 pixels", s)
	}
	return m, nil
}

// ParseOffset reads a crop offset "X,Y": pixels right and down from the centre (negative: left
// and up).
func ParseOffset(s string) (image.Point, error) {
	parts := strings.Split(s, ",")
	var v [2]int
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || len(parts) != 2 || n < -MaxMargin || n > MaxMargin {
			return image.Point{}, fmt.Errorf("%q: write the pixels to move the crop right and down from the centre as X,Y, like 120,0 or -64,32 (each within ±%d)", s, MaxMargin)
		}
		v[i] = n
	}
	return image.Pt(v[0], v[1]), nil
}

// DefaultExtendFeather is how far, in pixels, an extension's mask reaches into the old image,
// fading out: two latent cells, so the seam is redrawn.
const DefaultExtendFeather = 32

// Extend is img on a canvas grown by m, and the mask of the new area. The new area is filled with
// the image's edge colours (each new pixel takes the nearest edge pixel), blurred so the model
// starts from a plausible colour field rather than grey; the mask is white there and fades
// into the old image over feather pixels from its edge (quadratically, as ComfyUI's
// ImagePadForOutpaint does), so the old edge is redrawn to meet the new area.
func Extend(img *image.NRGBA, m Margins, feather int) (*image.NRGBA, *image.Gray) {
	b := img.Bounds()
	iw, ih := b.Dx(), b.Dy()
	w, h := iw+m.Left+m.Right, ih+m.Top+m.Bottom
	canvas := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		sy := b.Min.Y + min(max(y-m.Top, 0), ih-1)
		for x := range w {
			sx := b.Min.X + min(max(x-m.Left, 0), iw-1)
			copy(canvas.Pix[canvas.PixOffset(x, y):canvas.PixOffset(x, y)+4], img.Pix[img.PixOffset(sx, sy):img.PixOffset(sx, sy)+4])
		}
	}
	if sigma := float64(max(m.Left, m.Top, m.Right, m.Bottom)) / 4; sigma > 0 {
		canvas = imaging.Blur(canvas, sigma)
	}
	canvas = imaging.Paste(canvas, img, image.Pt(m.Left, m.Top))

	mask := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			ix, iy := x-m.Left, y-m.Top
			if ix < 0 || iy < 0 || ix >= iw || iy >= ih {
				mask.Pix[y*mask.Stride+x] = 255
				continue
			}
			// Distance to the nearest edge that was extended.
			d := feather
			if m.Left > 0 {
				d = min(d, ix)
			}
			if m.Right > 0 {
				d = min(d, iw-1-ix)
			}
			if m.Top > 0 {
				d = min(d, iy)
			}
			if m.Bottom > 0 {
				d = min(d, ih-1-iy)
			}
			if d < feather {
				v := float64(feather-d) / float64(feather)
				mask.Pix[y*mask.Stride+x] = uint8(255*v*v + 0.5)
			}
		}
	}
	return canvas, mask
}
