// Package calibimage draws the small, varied, natural-looking pictures the live preview is
// calibrated on (app/preview): skies over hills, cloud and foliage textures, shapes on gradients,
// stripes, soft portraits, night and snow scenes, and cut-outs with transparent and soft-edged
// alpha (the VAE is RGBA). Everything is procedural and deterministic — a kind and a seed give
// the same pixels on every machine — so the committed set (assets/calibration, written by
// tools/mkcalib) carries no licence question, and tests draw held-out pictures of the same kinds
// with other seeds.
package calibimage

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"strconv"
)

// Kind is one family of pictures.
type Kind int

// The kinds, in the order the committed set uses them.
const (
	Landscape Kind = iota // sky gradient, sun, rolling hills, a lake
	Clouds                // fractal noise under a two-colour palette
	Shapes                // overlapping discs and boxes on a gradient
	Stripes               // bands of saturated colour, bent by noise
	Portrait              // a soft skin-toned head and shoulders on a plain ground
	Foliage               // leafy greens and bark browns
	Night                 // a dark sky, a moon, lit windows
	Snow                  // near-white ground, pale sky, dark trees
	Cutout                // a shape on a fully transparent background
	Glass                 // a soft alpha gradient over colour noise
	NumKinds
)

var kindNames = [...]string{"landscape", "clouds", "shapes", "stripes", "portrait", "foliage", "night", "snow", "cutout", "glass"}

// String is the kind's file-name stem.
func (k Kind) String() string {
	if k < 0 || k >= NumKinds {
		return "unknown"
	}
	return kindNames[k]
}

// Draw paints one w×h picture of kind k; seed varies palette and layout.
func Draw(k Kind, seed uint64, w, h int) *image.NRGBA {
	p := &painter{r: rand.New(rand.NewPCG(seed, uint64(k)+0xca11b)), noise: newNoise(seed ^ uint64(k)*0x9e3779b97f4a7c15)}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	f := p.shader(k)
	for y := range h {
		for x := range w {
			u, v := (float64(x)+0.5)/float64(w), (float64(y)+0.5)/float64(h)
			img.SetNRGBA(x, y, f(u, v).clamp())
		}
	}
	return img
}

// rgba is a colour in [0, 1] with straight alpha.
type rgba struct{ r, g, b, a float64 }

func (c rgba) clamp() color.NRGBA {
	q := func(v float64) uint8 { return uint8(math.Round(min(max(v, 0), 1) * 255)) }
	return color.NRGBA{q(c.r), q(c.g), q(c.b), q(c.a)}
}

func mix(a, b rgba, t float64) rgba {
	t = min(max(t, 0), 1)
	return rgba{a.r + (b.r-a.r)*t, a.g + (b.g-a.g)*t, a.b + (b.b-a.b)*t, a.a + (b.a-a.a)*t}
}

func (c rgba) scale(s float64) rgba { return rgba{c.r * s, c.g * s, c.b * s, c.a} }

// smooth is a soft step from 0 (at e0) to 1 (at e1).
func smooth(e0, e1, x float64) float64 {
	t := min(max((x-e0)/(e1-e0), 0), 1)
	return t * t * (3 - 2*t)
}

type painter struct {
	r     *rand.Rand
	noise *noise
}

// colour is a random opaque colour with hue h (0–1) jittered, saturation s and value v.
func (p *painter) colour(h, s, v float64) rgba {
	h = math.Mod(h+p.r.Float64()*0.08-0.04+1, 1)
	return hsv(h, min(max(s+p.r.Float64()*0.2-0.1, 0), 1), min(max(v+p.r.Float64()*0.2-0.1, 0), 1))
}

func hsv(h, s, v float64) rgba {
	i := math.Floor(h * 6)
	f := h*6 - i
	pp, q, t := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	switch int(i) % 6 {
	case 0:
		return rgba{v, t, pp, 1}
	case 1:
		return rgba{q, v, pp, 1}
	case 2:
		return rgba{pp, v, t, 1}
	case 3:
		return rgba{pp, q, v, 1}
	case 4:
		return rgba{t, pp, v, 1}
	}
	return rgba{v, pp, q, 1}
}

// shader is the per-pixel function of a kind, with its random choices made once.
func (p *painter) shader(k Kind) func(u, v float64) rgba {
	r, n := p.r, p.noise
	switch k {
	case Landscape:
		skyTop, skyLow := p.colour(0.6, 0.6, 0.75), p.colour(0.08+r.Float64()*0.5, 0.3, 0.95)
		hill, far := p.colour(0.25+r.Float64()*0.1, 0.6, 0.45), p.colour(0.55, 0.25, 0.6)
		water := p.colour(0.58, 0.5, 0.55)
		sx, sy := 0.2+r.Float64()*0.6, 0.15+r.Float64()*0.2
		horizon := 0.45 + r.Float64()*0.15
		return func(u, v float64) rgba {
			c := mix(skyTop, skyLow, v/horizon)
			c = mix(c, rgba{1, 0.95, 0.8, 1}, 1-smooth(0.04, 0.07, math.Hypot(u-sx, v-sy)))
			if v > horizon-0.12+0.08*n.fbm(u*3, 1.5, 3) {
				c = mix(far, skyLow, 0.3)
			}
			if v > horizon+0.05*n.fbm(u*5, 7.5, 4) {
				c = hill.scale(0.7 + 0.5*n.fbm(u*12, v*12, 4))
			}
			if v > 0.82 {
				c = mix(water, c, 0.2+0.3*n.fbm(u*30, v*4, 2))
			}
			return c
		}
	case Clouds:
		a, b := p.colour(r.Float64(), 0.6, 0.35), p.colour(r.Float64(), 0.3, 0.95)
		f := 2 + r.Float64()*4
		return func(u, v float64) rgba { return mix(a, b, n.fbm(u*f, v*f, 5)) }
	case Shapes:
		bg0, bg1 := p.colour(r.Float64(), 0.3, 0.8), p.colour(r.Float64(), 0.5, 0.4)
		type shape struct {
			x, y, s float64
			box     bool
			c       rgba
		}
		var sh []shape
		for range 4 + r.IntN(4) {
			sh = append(sh, shape{r.Float64(), r.Float64(), 0.08 + r.Float64()*0.2, r.IntN(2) == 0, p.colour(r.Float64(), 0.8, 0.8)})
		}
		return func(u, v float64) rgba {
			c := mix(bg0, bg1, (u+v)/2)
			for _, s := range sh {
				d := math.Hypot(u-s.x, v-s.y)
				if s.box {
					d = max(math.Abs(u-s.x), math.Abs(v-s.y))
				}
				c = mix(c, s.c.scale(1-0.4*(d/s.s)), 1-smooth(s.s-0.01, s.s+0.01, d))
			}
			return c
		}
	case Stripes:
		var cs []rgba
		for range 5 {
			cs = append(cs, p.colour(r.Float64(), 0.9, 0.9))
		}
		angle := r.Float64() * math.Pi
		ca, sa := math.Cos(angle), math.Sin(angle)
		return func(u, v float64) rgba {
			t := (u*ca+v*sa)*4 + 0.6*n.fbm(u*3, v*3, 3)
			i := int(math.Floor(t*2+100)) % len(cs)
			return cs[i]
		}
	case Portrait:
		bg, skin := p.colour(r.Float64(), 0.3, 0.5), p.colour(0.06, 0.45, 0.85)
		hair, cloth := p.colour(0.07, 0.6, 0.25), p.colour(r.Float64(), 0.6, 0.5)
		cx := 0.4 + r.Float64()*0.2
		return func(u, v float64) rgba {
			c := bg.scale(0.8 + 0.3*n.fbm(u*4, v*4, 3))
			head := math.Hypot((u-cx)/0.2, (v-0.4)/0.26)
			c = mix(c, cloth, 1-smooth(0.98, 1.02, math.Hypot((u-cx)/0.45, (v-1.05)/0.35)))
			c = mix(c, hair, 1-smooth(1.05, 1.12, math.Hypot((u-cx)/0.22, (v-0.36)/0.28)))
			shade := 1 - 0.35*smooth(-0.2, 0.25, u-cx)
			return mix(c, skin.scale(shade), 1-smooth(0.95, 1.0, head))
		}
	case Foliage:
		leaf, dark, bark := p.colour(0.28, 0.7, 0.6), p.colour(0.33, 0.7, 0.2), p.colour(0.07, 0.5, 0.35)
		return func(u, v float64) rgba {
			t := n.fbm(u*10, v*10, 5)
			c := mix(dark, leaf, smooth(0.35, 0.65, t))
			if math.Abs(u-0.5-0.1*n.fbm(v*3, 2, 2)) < 0.05 {
				c = bark.scale(0.7 + 0.6*n.fbm(u*40, v*8, 2))
			}
			return c
		}
	case Night:
		sky, glow := p.colour(0.65, 0.7, 0.12), p.colour(0.12, 0.7, 0.95)
		mx, my := 0.2+r.Float64()*0.6, 0.2
		return func(u, v float64) rgba {
			c := sky.scale(0.6 + 0.6*v)
			c = mix(c, rgba{0.95, 0.95, 0.85, 1}, 1-smooth(0.05, 0.06, math.Hypot(u-mx, v-my)))
			if v > 0.6+0.1*math.Sin(u*7) {
				c = rgba{0.03, 0.03, 0.05, 1}
				if n.value(u*24, v*24) > 0.75 && math.Mod(v*24, 1) > 0.3 {
					c = glow
				}
			}
			return c
		}
	case Snow:
		sky, tree := p.colour(0.58, 0.15, 0.9), p.colour(0.35, 0.5, 0.15)
		return func(u, v float64) rgba {
			c := mix(sky, rgba{1, 1, 1, 1}, v)
			if v > 0.55+0.05*n.fbm(u*4, 3, 3) {
				c = rgba{0.93, 0.95, 0.98, 1}.scale(0.9 + 0.1*n.fbm(u*20, v*20, 3))
			}
			x := math.Mod(u*5+100, 1)
			if tri := math.Abs(x-0.5) * 2; v > 0.25 && v < 0.7 && tri < (v-0.25)*1.6 {
				c = tree.scale(0.8 + 0.4*n.fbm(u*30, v*30, 2))
			}
			return c
		}
	case Cutout:
		fill, rim := p.colour(r.Float64(), 0.8, 0.85), p.colour(r.Float64(), 0.6, 0.3)
		cx, cy := 0.35+r.Float64()*0.3, 0.35+r.Float64()*0.3
		return func(u, v float64) rgba {
			d := math.Hypot(u-cx, v-cy) / (0.3 + 0.08*n.fbm(math.Atan2(v-cy, u-cx)*2, 1, 3))
			c := mix(fill, rim, smooth(0.6, 1, d))
			c.a = 1 - smooth(0.97, 1.0, d)
			if c.a == 0 {
				c.r, c.g, c.b = 0, 0, 0
			}
			return c
		}
	default: // Glass
		a, b := p.colour(r.Float64(), 0.8, 0.9), p.colour(r.Float64(), 0.7, 0.3)
		angle := r.Float64() * 2 * math.Pi
		return func(u, v float64) rgba {
			c := mix(a, b, n.fbm(u*5, v*5, 4))
			c.a = 0.15 + 0.85*smooth(-0.6, 0.6, (u-0.5)*math.Cos(angle)+(v-0.5)*math.Sin(angle))
			return c
		}
	}
}

// noise is 2-D value noise on a hashed lattice.
type noise struct{ seed uint64 }

func newNoise(seed uint64) *noise { return &noise{seed} }

func (n *noise) lattice(x, y int) float64 {
	h := uint64(int64(x))*0x9e3779b97f4a7c15 ^ uint64(int64(y))*0xc2b2ae3d27d4eb4f ^ n.seed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return float64(h>>11) / (1 << 53)
}

// value is smooth value noise in [0, 1].
func (n *noise) value(x, y float64) float64 {
	x0, y0 := math.Floor(x), math.Floor(y)
	fx, fy := smooth(0, 1, x-x0), smooth(0, 1, y-y0)
	ix, iy := int(x0), int(y0)
	top := n.lattice(ix, iy) + (n.lattice(ix+1, iy)-n.lattice(ix, iy))*fx
	bot := n.lattice(ix, iy+1) + (n.lattice(ix+1, iy+1)-n.lattice(ix, iy+1))*fx
	return top + (bot-top)*fy
}

// fbm is fractal noise: octaves of value noise, each twice as fine and half as strong, in [0, 1].
func (n *noise) fbm(x, y float64, octaves int) float64 {
	var s, amp, norm float64 = 0, 1, 0
	for range octaves {
		s += amp * n.value(x, y)
		norm += amp
		x, y, amp = x*2, y*2, amp/2
	}
	return s / norm
}

// Side is the committed pictures' edge in pixels (8×8 latents at the VAE's 16×).
const Side = 128

// Seeds are the seeds of the committed set (assets/calibration); tests draw held-out pictures of
// the same kinds with other seeds.
var Seeds = []uint64{1, 2, 3, 4}

// FileName is the committed file of one picture.
func FileName(k Kind, seed uint64) string {
	return k.String() + "-" + strconv.FormatUint(seed, 10) + ".png"
}
