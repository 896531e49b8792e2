package metal

import (
	"fmt"
	"math"
	"strings"
)

// The overflow watch: every pass of the denoiser folds the largest stored |value| of each guarded
// half site of each block into its own slot (the qi_amax reduction, a read of each half activation on the
// device; no activation comes back to the host), and the host checks those few floats and the
// velocity it reads back anyway. A site that stored ±inf or NaN, or came within a factor of two
// of half's largest value, overflowed: the pass runs again with that site's guard widened by
// WidenBits, and the widened guards are remembered for the model (the denoiser keeps them; the
// self-test report carries them to the next process). When the widest
// guard still overflows, the device declines and the CPU runs the rest; a NaN velocity never
// reaches an image.

// HalfSites names the guarded half sites in the order of the watch's slots.
var HalfSites = [...]string{"attn-in", "qkv", "attn-out", "ffn-in", "hidden"}

// halfMax is half precision's largest finite value.
const halfMax = 65504

// OverflowLimit is the stored magnitude the watch treats as an overflow: half's largest value over
// two, so a site that came that close is widened before the next pass goes past it.
const OverflowLimit = halfMax / 2

// WidenBits is how far one recovery widens an overflowed site's guard.
const WidenBits = 4

// Overflowed lists the sites whose stored maximum (one per HalfSites entry) is not finite or
// reached OverflowLimit.
func Overflowed(amax []float32) []int {
	var sites []int
	for i, v := range amax {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) || f >= OverflowLimit {
			sites = append(sites, i)
		}
	}
	return sites
}

// Finite reports whether every value is finite (the velocity check after a pass).
func Finite(v []float32) bool {
	for _, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
	}
	return true
}

// Site returns the guard of HalfSites[i].
func (g *Guards) Site(i int) *int {
	switch i {
	case 0:
		return &g.Attn
	case 1:
		return &g.QKV
	case 2:
		return &g.AO
	case 3:
		return &g.FFN
	}
	return &g.Hid
}

// Widen returns g with the guards of sites raised by WidenBits (at most maxShift), and whether
// any guard moved: false means the guards are as wide as they go and the overflow stands.
func (g Guards) Widen(sites []int) (Guards, bool) {
	moved := false
	for _, s := range sites {
		p := g.Site(s)
		if n := min(*p+WidenBits, maxShift); n != *p {
			*p, moved = n, true
		}
	}
	return g, moved
}

// String lists the guards as diagnostics show them.
func (g Guards) String() string {
	var parts []string
	for i, name := range HalfSites {
		parts = append(parts, fmt.Sprintf("%s %d", name, *g.Site(i)))
	}
	return strings.Join(parts, " · ")
}

// OverflowError is an overflow the widest guards did not fix; the denoiser turns it into a
// decline.
type OverflowError struct {
	Sites []string
	Pass  string
}

func (e *OverflowError) Error() string {
	return fmt.Sprintf("half precision overflowed at %s in the %s even with the widest guards", strings.Join(e.Sites, ", "), e.Pass)
}

// SiteNames names sites.
func SiteNames(sites []int) []string {
	var out []string
	for _, s := range sites {
		if s >= 0 && s < len(HalfSites) {
			out = append(out, HalfSites[s])
		}
	}
	return out
}
