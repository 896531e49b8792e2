// Command metalplan prints the per-step work of the Metal denoiser (engine/qi21/qi21metal) at the
// published Qwen-Image-2.1 geometry: floating-point operations and bytes moved per kernel class,
// and the step time that peak rates predict for Apple GPUs; then the same for the text encoder,
// the vision tower and the VAE on Metal (stages.go). docs/METAL.md is its output with
// the formulas and sources written out; every time it prints is an estimate from published
// peaks, not a measurement.
//
// Usage: go run ./tools/metalplan [-prefix 256]
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"easel/engine/qi21"
	"easel/engine/quant"
)

// scenario is one step's geometry: target rows (the image being generated, one row per 16×16
// pixels) against cached prefix rows (text, then condition-image latents).
type scenario struct {
	name           string
	target, prefix int
}

// class is one kernel class's work over a whole step (all blocks).
type class struct {
	name string
	// flops counts multiply and add as two; for the elementwise classes it is approximate
	// (per-element constants below), and flash's exponentials are not counted.
	flops float64
	// bytes is every buffer byte a dispatch must touch once (weights, activations, K/V): the
	// DRAM traffic if the caches catch all reuse inside a dispatch.
	bytes float64
	// tileBytes is what the threadgroups request in all (each GEMM tile re-reads its weight rows
	// and its x rows, each flash tile re-reads its head's K/V): the DRAM traffic if the caches
	// caught none of that reuse. The truth lies between the two.
	tileBytes float64
}

// Kernel tiles (kernels/grids.go, gemm.metal, flash.metal).
const (
	mmTile     = 64 // tokens and outputs per qi_mm threadgroup
	flashQTile = 64 // queries per qi_flash threadgroup
)

// Approximate FLOPs per element of the elementwise kernels.
const (
	rowOpFlops  = 10 // gated residual (2), LayerNorm statistics (3), normalize and modulate (5)
	qkRopeFlops = 7  // per q or k element: RMSNorm (4), rotation (3)
	swigluFlops = 6  // silu (4 with the exponential as one), product (1), guard scale (1)
)

// weights holds the q4tp payload bytes of one block's projections.
type weights struct{ dd, fd, df float64 }

func q4tpBytes(rows, cols int) float64 {
	n, ok := quant.PayloadSize(quant.Q4TP, []int{rows, cols})
	if !ok {
		panic(fmt.Sprintf("q4tp cannot hold [%d, %d]", rows, cols))
	}
	return float64(n)
}

func blockWeights(c qi21.Config) weights {
	D, F := c.Hidden(), c.MLPHidden()
	return weights{dd: q4tpBytes(D, D), fd: q4tpBytes(F, D), df: q4tpBytes(D, F)}
}

func (w weights) block() float64 { return 4*w.dd + 2*w.fd + w.df }

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// stepClasses is one step's work: n target rows through every block against p cached prefix
// rows, then the embedding and the final layer, following engine/qi21/qi21metal/encode.go. Half
// activations are 2 bytes, float ones 4.
func stepClasses(c qi21.Config, w weights, n, p int) []class {
	D, F, L := float64(c.Hidden()), float64(c.MLPHidden()), float64(c.Layers)
	N, P := float64(n), float64(p)
	T := float64(ceilDiv(n, mmTile))     // GEMM token tiles
	Q := float64(ceilDiv(n, flashQTile)) // flash query tiles (per head)
	gemmFlops, attnFlops := qi21.BlockFlops(c, n, p)

	// GEMMs: qkv (z 3, half out), O (float out), gate/up (z 2, float out), down (float out).
	gemmBytes := w.block() +
		(2*N*D + 3*2*N*D) + // qkv: read xn once, write the q|k|v panel
		(2*N*D + 4*N*D) + // O: read attn, write y
		(2*N*D + 2*4*N*F) + // gate/up: read xn, write gu
		(2*N*F + 4*N*D) // down: read hid, write y
	gemmTile := 3*(w.dd*T+2*N*D*D/mmTile) + 3*2*N*D +
		(w.dd*T + 2*N*D*D/mmTile) + 4*N*D +
		2*(w.fd*T+2*N*D*F/mmTile) + 2*4*N*F +
		(w.df*T + 2*N*F*D/mmTile) + 4*N*D

	// Flash: q, own k|v and output from the panel, the prefix K|V from the cache.
	attnBytes := 2*N*D + 4*N*D + 4*P*D + 2*N*D
	attnTile := Q*4*D*(N+P) + Q*flashQTile*D*(2+2)

	// qk-norm + RoPE in place on q and k, cos and sin tables f32 [n][HeadDim/2].
	ropeBytes := 2*2*N*D + 2*2*N*D + 2*N*float64(c.HeadDim/2)*4
	// Two row ops per block: read x and y (f32), write x (f32) and xn (half).
	normBytes := 2 * (4*N*D + 4*N*D + 4*N*D + 2*N*D)
	// SwiGLU: read gate and up (f32), write hid (half).
	actBytes := 2*4*N*F + 2*N*F

	in, out := float64(c.InChannels), float64(c.OutChannels)
	embedFinalFlops := 2*N*in*D + 2*N*D*out + rowOpFlops*N*D
	embedFinalBytes := (4*N*in + 4*D*in + 4*N*D) + (4*N*D + 4*D + 4*out*D + 4*N*out)

	return []class{
		{"gemm (7 q4tp projections)", L * gemmFlops, L * gemmBytes, L * gemmTile},
		{"attn (flash)", L * attnFlops, L * attnBytes, L * attnTile},
		{"rope (qk-norm + RoPE)", L * qkRopeFlops * 2 * N * D, L * ropeBytes, L * ropeBytes},
		{"norm (2 row ops)", L * 2 * rowOpFlops * N * D, L * normBytes, L * normBytes},
		{"act (SwiGLU)", L * swigluFlops * N * F, L * actBytes, L * actBytes},
		{"embed + final", embedFinalFlops, embedFinalBytes, embedFinalBytes},
	}
}

// prefillClasses is the once-per-program pass of p prefix rows. Attention is counted as if
// every prefix row saw every prefix row: the block-causal mask makes it less (an upper bound).
func prefillClasses(c qi21.Config, w weights, p int) []class {
	cl := stepClasses(c, w, p, 0)[:5]
	D, L, P := float64(c.Hidden()), float64(c.Layers), float64(p)
	cl = append(cl, class{"copy (prefix K/V into the cache)", 0, L * 2 * 4 * P * D, L * 2 * 4 * P * D})
	return cl
}

// chip is one Apple GPU's published peak (FP16 = FP32 ALU rate on M1–M4) and memory bandwidth,
// as recorded with their sources in docs/reference/peers.md §5.1. peakLo = peakHi = 0
// means unknown.
type chip struct {
	name           string
	peakLo, peakHi float64 // TFLOP/s
	bw             float64 // GB/s
	note           string
}

var chips = []chip{
	{"M1 (8-core GPU)", 2.6, 2.6, 68.25, ""},
	{"M1 Pro (16)", 5.3, 5.3, 200, ""},
	{"M1 Max (32)", 10.6, 10.6, 400, ""},
	{"M1 Ultra (64)", 21.2, 21.2, 800, ""},
	{"M2 (10)", 3.6, 3.6, 100, ""},
	{"M2 Pro (19)", 6.8, 6.8, 200, ""},
	{"M2 Max (38)", 13.6, 13.6, 400, ""},
	{"M2 Ultra (76)", 27.2, 27.2, 800, "peak = 2 × M2 Max (derived, not a published figure)"},
	{"M3 (10)", 4.1, 4.1, 100, ""},
	{"M3 Pro (18)", 6.4, 7.4, 150, "two published figures"},
	{"M3 Max (40)", 0, 0, 400, "peak unknown: peers.md's ≈ 16.4 is recalled, not sourced; another table says 14.2"},
	{"M3 Ultra (80)", 0, 0, 819, "peak unknown: peers.md's ≈28 is second-hand"},
	{"M4 (10)", 3.58, 4.6, 120, "3.58 (metal-benchmarks clock) matches the seed's 2.9 TF/s = 83 %; 4.6 assumes a higher clock"},
	{"M4 Pro (20)", 9.2, 9.2, 273, "same source as M4's 4.6: may be high in the same way (× 3.58/4.6 ≈ 7.2, derived)"},
	{"M4 Max (40)", 14.1, 18.4, 546, "14.1 at default clocks (applegpuinfo), 18.4 (huggingface.js PR #1044)"},
}

// Achievable fractions of the published peaks.
const (
	// gemmEff: the seed measured its q4tp GEMMs at ≈ 2.9 TF/s = 83 % of the half MMA peak on an M4
	// (the seed: cortiq-engine 0.8.3 `gpu_metal/qi21.rs`, docs/reference/README.md).
	gemmEff = 0.83
	// bwEff: a streaming kernel's share of the published bandwidth — cortiq's q4tp_matvec at
	// 96 of 120 GB/s on an M4 (peers.md §5.2, second-hand).
	bwEff = 0.80
	// The seed's 512² step (1024 target rows): GEMM 91 % at 2.9 TF/s, flash 7 %. Its prefix
	// length is not stated; seedPrefix is this tool's assumption.
	seedGemmRate   = 2.9e12
	seedGemmShare  = 0.91
	seedFlashShare = 0.07
	seedTarget     = 1024
	seedPrefix     = 256
)

// attnEff is flash's fraction of the peak implied by the seed's split: the flash time is the
// GEMM time × 7/91, the peak is 2.9 TF/s / 0.83.
func attnEff(c qi21.Config) float64 {
	g, a := qi21.BlockFlops(c, seedTarget, seedPrefix)
	gemmTime := g / seedGemmRate
	flashTime := gemmTime * seedFlashShare / seedGemmShare
	return (a / flashTime) / (seedGemmRate / gemmEff)
}

// classTime is one class's time on a chip of peak TFLOP/s and bw GB/s from the given bytes: the
// larger of its compute time at the class's achievable fraction and its memory time.
func classTime(cl class, bytes, peak, bw, aEff float64) float64 {
	eff := 0.0
	switch {
	case strings.HasPrefix(cl.name, "gemm"):
		eff = gemmEff
	case strings.HasPrefix(cl.name, "attn"):
		eff = aEff
	}
	mem := bytes / (bwEff * bw * 1e9)
	if eff == 0 { // elementwise: bandwidth-bound
		return mem
	}
	return math.Max(cl.flops/(eff*peak*1e12), mem)
}

func stepTime(cls []class, peak, bw, aEff float64, tile bool) float64 {
	var t float64
	for _, cl := range cls {
		b := cl.bytes
		if tile {
			b = cl.tileBytes
		}
		t += classTime(cl, b, peak, bw, aEff)
	}
	return t
}

func sum(cls []class, f func(class) float64) float64 {
	var s float64
	for _, cl := range cls {
		s += f(cl)
	}
	return s
}

func secs(lo, hi float64) string {
	if math.Abs(lo-hi) < 0.05*hi {
		return fmt.Sprintf("%.1f", hi)
	}
	return fmt.Sprintf("%.1f–%.1f", lo, hi)
}

func run(w io.Writer, prefix int) {
	c := qi21.PublishedConfig()
	wt := blockWeights(c)
	D := c.Hidden()
	fmt.Fprintf(w, "Geometry (qi21.PublishedConfig): hidden %d = %d heads × %d, MLP %d, %d blocks.\n\n",
		D, c.Heads, c.HeadDim, c.MLPHidden(), c.Layers)
	fmt.Fprintf(w, "q4tp payloads (quant.PayloadSize): [%d,%d] %.0f B, [%d,%d] %.0f B, [%d,%d] %.0f B; "+
		"per block %.0f B; per step (%d blocks) %.3f GB.\n\n",
		D, D, wt.dd, c.MLPHidden(), D, wt.fd, D, c.MLPHidden(), wt.df, wt.block(), c.Layers, wt.block()*float64(c.Layers)/1e9)

	scens := []scenario{
		{"512² t2i", 1024, prefix},
		{"512² edit, one 512² condition image", 1024, prefix + 1024},
		{"1024² t2i", 4096, prefix},
		{"1024² edit, one 1024² condition image", 4096, prefix + 4096},
	}
	aEff := attnEff(c)
	fmt.Fprintf(w, "Achievable fractions: GEMM %.2f of peak (seed, measured on M4); flash %.2f of peak (derived from the seed's "+
		"7 %% flash / 91 %% GEMM split at 512², assuming %d prefix rows); memory %.2f of published bandwidth.\n\n",
		gemmEff, aEff, seedPrefix, bwEff)

	for _, s := range scens {
		cls := stepClasses(c, wt, s.target, s.prefix)
		fmt.Fprintf(w, "### %s: %d target rows, %d prefix rows (per step)\n\n", s.name, s.target, s.prefix)
		fmt.Fprintln(w, "| class | TFLOP | GB moved (each byte once) | GB requested by tiles (no cache reuse) | FLOP/byte (once) |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		for _, cl := range cls {
			fmt.Fprintf(w, "| %s | %.3f | %.2f | %.1f | %.0f |\n", cl.name, cl.flops/1e12, cl.bytes/1e9, cl.tileBytes/1e9, cl.flops/cl.bytes)
		}
		fmt.Fprintf(w, "| **step** | **%.2f** | **%.2f** | **%.1f** | %.0f |\n\n",
			sum(cls, func(x class) float64 { return x.flops })/1e12, sum(cls, func(x class) float64 { return x.bytes })/1e9,
			sum(cls, func(x class) float64 { return x.tileBytes })/1e9,
			sum(cls, func(x class) float64 { return x.flops })/sum(cls, func(x class) float64 { return x.bytes }))
		kv := float64(c.Layers) * float64(s.prefix) * 2 * float64(D) * 2
		pre := prefillClasses(c, wt, s.prefix)
		fmt.Fprintf(w, "Prefix K/V cache: %.2f GB (half). Prefill, once per program: %.2f TFLOP (attention counted without the mask: an upper bound), %.2f GB moved.\n\n",
			kv/1e9, sum(pre, func(x class) float64 { return x.flops })/1e12, sum(pre, func(x class) float64 { return x.bytes })/1e9)
	}

	fmt.Fprintln(w, "### Estimated step time, seconds (estimate from published peaks; awaits a Mac)")
	fmt.Fprintln(w)
	var hdr, sep strings.Builder
	hdr.WriteString("| chip | published FP16 peak TF/s | published GB/s |")
	sep.WriteString("|---|---:|---:|")
	for _, s := range scens {
		fmt.Fprintf(&hdr, " %s |", s.name)
		sep.WriteString("---:|")
	}
	hdr.WriteString(" 1024² t2i, no cache reuse | note |")
	sep.WriteString("---:|---|")
	fmt.Fprintln(w, hdr.String())
	fmt.Fprintln(w, sep.String())
	for _, ch := range chips {
		peak := "unknown"
		switch {
		case ch.peakLo > 0 && ch.peakLo != ch.peakHi:
			peak = fmt.Sprintf("%g–%g", ch.peakLo, ch.peakHi)
		case ch.peakHi > 0:
			peak = fmt.Sprint(ch.peakHi)
		}
		fmt.Fprintf(w, "| %s | %s | %g |", ch.name, peak, ch.bw)
		for i, s := range append(scens, scens[2]) {
			if ch.peakHi == 0 {
				fmt.Fprint(w, " unknown |")
				continue
			}
			cls := stepClasses(c, wt, s.target, s.prefix)
			tile := i == len(scens) // the last column: tile-requested bytes
			fmt.Fprintf(w, " %s |", secs(stepTime(cls, ch.peakHi, ch.bw, aEff, tile), stepTime(cls, ch.peakLo, ch.bw, aEff, tile)))
		}
		fmt.Fprintf(w, " %s |\n", ch.note)
	}
	fmt.Fprintln(w)
	for _, ch := range chips {
		switch {
		case strings.HasPrefix(ch.name, "M4 ("):
			breakdown(w, c, wt, scens, ch, ch.peakLo, aEff)
		case strings.HasPrefix(ch.name, "M1 Max"):
			breakdown(w, c, wt, scens, ch, ch.peakHi, aEff)
		}
	}
	runVariants(w, c, wt, aEff, prefix)
	runStages(w, aEff)
}

// breakdown prints each class's estimated seconds per step on one chip at its given peak.
func breakdown(w io.Writer, c qi21.Config, wt weights, scens []scenario, ch chip, peak, aEff float64) {
	fmt.Fprintf(w, "### Per class on %s at %g TF/s, %g GB/s (estimate; awaits a Mac)\n\n", ch.name, peak, ch.bw)
	fmt.Fprint(w, "| class |")
	for _, s := range scens {
		fmt.Fprintf(w, " %s |", s.name)
	}
	fmt.Fprint(w, "\n|---|")
	for range scens {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	names := stepClasses(c, wt, 1, 0)
	totals := make([]float64, len(scens))
	for i, cl := range names {
		fmt.Fprintf(w, "| %s |", cl.name)
		for j, s := range scens {
			x := stepClasses(c, wt, s.target, s.prefix)[i]
			t := classTime(x, x.bytes, peak, ch.bw, aEff)
			totals[j] += t
			fmt.Fprintf(w, " %.2f s |", t)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| **step** |")
	for _, t := range totals {
		fmt.Fprintf(w, " **%.1f s** |", t)
	}
	fmt.Fprint(w, "\n| one block (step ÷ blocks, as `easel bench dit-metal` times it) |")
	for _, t := range totals {
		fmt.Fprintf(w, " %.0f ms |", t/float64(c.Layers)*1e3)
	}
	fmt.Fprint(w, "\n\n")
}

func main() {
	prefix := flag.Int("prefix", 256, "text rows of the prompt prefix (after the dropped system rows)")
	flag.Parse()
	if *prefix < 0 {
		fmt.Fprintln(os.Stderr, "metalplan: -prefix must be at least 0")
		os.Exit(2)
	}
	run(os.Stdout, *prefix)
}
