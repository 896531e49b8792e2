package main

import (
	"container/list"
	"fmt"
	"io"
	"strings"

	"easel/engine/qi21"
)

// The kernel variants (kernels/variants.go, docs/METAL.md §7): their work is the baseline's; what
// changes is the traffic (the grid order decides what the caches catch) and the issue cost per
// FLOP (staging, tile shape, epilogue), whose gains are the kernel review's estimates. Every
// figure here is an estimate; awaits a Mac.

// lruCache models a cache of capacity bytes holding whole tiles, least recently used evicted
// first; missed is the bytes fetched from DRAM.
type lruCache struct {
	capacity, used, missed float64
	order                  *list.List
	at                     map[string]*list.Element
	size                   map[string]float64
}

func newLRU(capacity float64) *lruCache {
	return &lruCache{capacity: capacity, order: list.New(), at: map[string]*list.Element{}, size: map[string]float64{}}
}

func (c *lruCache) touch(key string, bytes float64) {
	if e, ok := c.at[key]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.missed += bytes
	c.at[key], c.size[key] = c.order.PushFront(key), bytes
	c.used += bytes
	for c.used > c.capacity && c.order.Len() > 1 {
		e := c.order.Back()
		k := e.Value.(string)
		c.order.Remove(e)
		c.used -= c.size[k]
		delete(c.at, k)
		delete(c.size, k)
	}
}

// gemmDispatch is one z-batched GEMM dispatch of a block: z weights of rows × k (q4tp bytes wb
// each) over n tokens whose x the z slices share.
type gemmDispatch struct {
	name        string
	z, rows, k  int
	weightBytes float64
}

// gemmOrder is a variant's grid as the kernels/variants.go table gives it: token tile rows, and
// whether the grid is swizzled in bands of 8 weight tiles.
type gemmOrder struct {
	variant string
	tileM   int
	swizzle bool
	// gain is the issue-cost speed-up over the baseline (lo, hi), from the kernel review.
	gainLo, gainHi float64
}

var gemmOrders = []gemmOrder{
	{"base", 64, false, 1, 1},
	{"staged", 64, false, 1.10, 1.25},
	{"swizzle", 64, true, 1.10, 1.25},
	{"wide", 128, true, 1.13, 1.35},
	{"spec", 64, true, 1.12, 1.30},
}

// dramBytes replays one block's GEMM dispatches in the order the variant's grid issues its
// threadgroups (x fastest, then y, then z, as Metal numbers them; the swizzle remaps inside the
// kernel) through an LRU cache of capacity bytes, each threadgroup touching its x tile and its
// weight tile, and returns the bytes missed plus the outputs written once.
func dramBytes(ds []gemmDispatch, n int, o gemmOrder, capacity float64) float64 {
	c := newLRU(capacity)
	var out float64
	for _, d := range ds {
		gx, gy := ceilDiv(n, o.tileM), d.rows/64
		xTile := float64(o.tileM * d.k * 2)
		wTile := d.weightBytes * 64 / float64(d.rows)
		for z := 0; z < d.z; z++ {
			for id := 0; id < gx*gy; id++ {
				tx, ty := id%gx, id/gx
				if o.swizzle {
					band, in := id/(8*gx), id%(8*gx)
					width := min(8, gy-band*8)
					tx, ty = in/width, band*8+in%width
				}
				c.touch(fmt.Sprintf("%s x %d", d.name, tx), xTile)
				c.touch(fmt.Sprintf("%s w %d %d", d.name, z, ty), wTile)
			}
		}
		out += float64(d.z*n*d.rows) * 3 // half or float outputs, written once (≈ 3 B average)
	}
	return c.missed + out
}

// blockGemms is one block's GEMM dispatches (engine/qi21/qi21metal/encode.go).
func blockGemms(c qi21.Config, w weights) []gemmDispatch {
	D, F := c.Hidden(), c.MLPHidden()
	return []gemmDispatch{
		{"qkv", 3, D, D, w.dd}, {"o", 1, D, D, w.dd}, {"gate/up", 2, F, D, w.fd}, {"down", 1, D, F, w.df},
	}
}

// runVariants prints the variants' estimated GEMM traffic and time per step at 1024² t2i, and
// the attention variants' estimated time, on the chips with a known peak.
func runVariants(w io.Writer, c qi21.Config, wt weights, aEff float64, prefix int) {
	const n = 4096
	const slc = 8e6 // modelled cache in front of DRAM: an assumption, Apple does not publish the SLC per chip
	L := float64(c.Layers)
	gemm := stepClasses(c, wt, n, prefix)[0]
	attn := stepClasses(c, wt, n, prefix)[1]
	ds := blockGemms(c, wt)
	fmt.Fprintf(w, "### Kernel variants at 1024² t2i: GEMM traffic through an LRU model and estimated seconds per step (estimate; awaits a Mac)\n\n")
	fmt.Fprintf(w, "Work is the baseline's (%.1f TFLOP of GEMM, %.1f of attention per step). DRAM bytes: one block's GEMM threadgroups replayed in dispatch order through an LRU cache of %.0f MB of whole tiles (an assumption), × %d blocks. Speed-ups over the baseline's issue cost are the kernel review's estimates (lo–hi); time = max(compute at %.2f of peak × speed-up, traffic at %.2f of bandwidth).\n\n",
		gemm.flops/1e12, attn.flops/1e12, slc/1e6, c.Layers, gemmEff, bwEff)
	fmt.Fprint(w, "| GEMM variant | grid | DRAM GB per step |")
	var shown []chip
	for _, ch := range chips {
		if ch.peakLo > 0 && (strings.HasPrefix(ch.name, "M1 (") || strings.HasPrefix(ch.name, "M4") || strings.HasPrefix(ch.name, "M1 Max") || strings.HasPrefix(ch.name, "M3 Pro")) {
			shown = append(shown, ch)
			fmt.Fprintf(w, " %s s |", ch.name)
		}
	}
	fmt.Fprint(w, "\n|---|---|---:|")
	for range shown {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, o := range gemmOrders {
		grid := fmt.Sprintf("%d×64, token tile fastest", o.tileM)
		if o.swizzle {
			grid = fmt.Sprintf("%d×64, bands of 8 weight tiles", o.tileM)
		}
		traffic := L * dramBytes(ds, n, o, slc)
		fmt.Fprintf(w, "| %s | %s | %.0f |", o.variant, grid, traffic/1e9)
		for _, ch := range shown {
			t := func(peak, gain float64) float64 {
				return max(gemm.flops/(gemmEff*gain*peak*1e12), traffic/(bwEff*ch.bw*1e9))
			}
			fmt.Fprintf(w, " %s |", secs(t(ch.peakHi, o.gainHi), t(ch.peakLo, o.gainLo)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| tensor | 64×64, MPP matmul2d | as staged | not estimated: M5 (Apple10) has no published peak in the sources; peers report 3.5–4.6× an M4 for diffusion |")
	for range shown[1:] {
		fmt.Fprint(w, " |")
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| attention variant | threadgroup memory | barriers per 64 keys | speed-up (review) |")
	fmt.Fprintln(w, "|---|---:|---:|---|")
	fmt.Fprintln(w, "| base | 16 392 B | 4 | 1 |")
	fmt.Fprintln(w, "| staged | 17 416 B | 4 | 1.2–1.4 (staging, padded rows) |")
	fmt.Fprintln(w, "| k64 | 17 416 B | 4 | 1.2–1.4 as staged; half the softmax rescalings (unknown beyond) |")
	fmt.Fprintln(w)
	for _, ch := range shown {
		at := attn.flops / (aEff * ch.peakHi * 1e12)
		fmt.Fprintf(w, "Attention on %s: base %.1f s per step, staged / k64 %.1f–%.1f s (estimate; awaits a Mac).\n", ch.name, at, at/1.4, at/1.2)
	}
	fmt.Fprintln(w)
}
