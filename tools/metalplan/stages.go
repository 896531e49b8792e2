package main

import (
	"fmt"
	"io"
	"strings"

	"easel/engine/qwen3vl"
	"easel/engine/vae"
)

// The other stages on Metal (engine/qwen3vl/qwen3vlmetal and engine/vae/vaemetal over
// engine/ml/metalops): the text encoder's prefill over a prompt, the vision tower over one
// condition image, and the VAE's decode and encode. Their GEMMs and convolutions stage half
// operands with float accumulation like the denoiser's, so the same achievable fractions apply
// (an assumption: nothing here has been timed on a Mac).

// stage is one network call's work: GEMM-like FLOPs (linear layers, convolutions), attention
// FLOPs, and the bytes it touches once (weights as stored, activations as float32).
type stage struct {
	name              string
	gemm, attn, bytes float64
}

// publishedEncoder reads Qwen3-VL-8B's text and vision configs from the published snapshot files.
func publishedEncoder() (qwen3vl.TextConfig, qwen3vl.VisionConfig) { return qwen3vl.PublishedConfigs() }

// q8Bytes is a q8_2f payload: int8 codes, a half row scale and a half column field.
func q8Bytes(rows, cols int) float64 { return float64(rows*cols + 2*rows + 2*cols) }

// textStage is the language model over n prompt tokens. Attention is counted over every key, as
// metalops computes it (the causal half is masked after the scores, not skipped).
func textStage(c qwen3vl.TextConfig, n int) stage {
	D, I, L, N := c.Hidden, c.Intermediate, float64(c.Layers), float64(n)
	qw, kw := c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	params := float64(qw*D + 2*kw*D + D*qw + 3*D*I)
	w := q8Bytes(qw, D) + 2*q8Bytes(kw, D) + q8Bytes(D, qw) + 2*q8Bytes(I, D) + q8Bytes(D, I)
	acts := N * 4 * float64(2*D+ /* norms */ 2*D+ /* residual adds */ 2*qw+2*kw+ /* q, k, v out, attention out */ qw+2*D+ /* o */ 2*I+ /* gate, up */ 3*I+ /* SwiGLU */ I+D /* down */)
	scores := 3 * 4 * float64(c.Heads) * N * N // written, softmaxed in place, read
	return stage{
		name:  fmt.Sprintf("text encoder, %d-token prompt", n),
		gemm:  L * 2 * N * params,
		attn:  L * 4 * N * N * float64(qw),
		bytes: L * (w + acts + scores),
	}
}

// visionStage is the vision tower over one side×side condition image: patch embedding, the
// blocks, the main merger and the DeepStack mergers.
func visionStage(c qwen3vl.VisionConfig, out, side int) stage {
	H, I, L := c.Hidden, c.Intermediate, float64(c.Depth)
	p := (side / c.PatchSize) * (side / c.PatchSize)
	P := float64(p)
	perBlock := float64(3*H*H + H*H + 2*H*I)
	mergers := float64(1 + len(c.DeepstackIndexes))
	mergeIn := float64(H * c.MergeSize * c.MergeSize)
	merger := mergeIn*mergeIn + mergeIn*float64(out)
	gemm := 2*P*float64(c.PatchValues()*H) + L*2*P*perBlock + mergers*2*(P/4)*merger
	w := q8Bytes(H, c.PatchValues()) + L*(q8Bytes(3*H, H)+q8Bytes(H, H)+q8Bytes(I, H)+q8Bytes(H, I)) +
		mergers*(q8Bytes(int(mergeIn), int(mergeIn))+q8Bytes(out, int(mergeIn)))
	acts := P*4*float64(c.PatchValues()+H) + L*P*4*float64(2*H+2*H+2*3*H+2*H+2*H+2*I+I+2*H)
	scores := L * 3 * 4 * float64(c.Heads) * P * P
	return stage{
		name:  fmt.Sprintf("vision tower, one %d² image (%d patches)", side, p),
		gemm:  gemm,
		attn:  L * 4 * P * P * float64(H),
		bytes: w + acts + scores,
	}
}

// vaeStages are the decodes and the encode the pipeline runs, from engine/vae's exact dry run.
func vaeStages() []stage {
	cfg := vae.PublishedConfig()
	var out []stage
	add := func(name string, p vae.Plan, err error) {
		if err != nil {
			panic(err)
		}
		out = append(out, stage{name: name, gemm: p.ConvFLOPs, attn: p.AttnFLOPs, bytes: p.ConvBytes + p.OtherBytes})
	}
	p, err := vae.PlanDecodeFor(cfg, 64, 64)
	add("VAE decode 1024² in one piece", p, err)
	p, err = vae.PlanDecodeTiledFor(cfg, 64, 64, vae.DefaultTiling)
	add(fmt.Sprintf("VAE decode 1024² in %d² tiles (overlap %d)", vae.DefaultTiling.Tile, vae.DefaultTiling.Overlap), p, err)
	p, err = vae.PlanDecodeTiledFor(cfg, 128, 128, vae.DefaultTiling)
	add(fmt.Sprintf("VAE decode 2048² in %d² tiles (overlap %d)", vae.DefaultTiling.Tile, vae.DefaultTiling.Overlap), p, err)
	p, err = vae.PlanEncodeFor(cfg, 1024, 1024)
	add("VAE encode of one 1024² condition image", p, err)
	return out
}

// stageTime is the estimated seconds of s on a chip: GEMMs at gemmEff of the peak, attention at
// aEff, each no faster than its share of the bytes at bwEff of the bandwidth.
func stageTime(s stage, peak, bw, aEff float64) float64 {
	compute := s.gemm/(gemmEff*peak*1e12) + s.attn/(aEff*peak*1e12)
	mem := s.bytes / (bwEff * bw * 1e9)
	return max(compute, mem)
}

func otherStages() []stage {
	tc, vc := publishedEncoder()
	st := []stage{textStage(tc, 256), textStage(tc, 256+1024), visionStage(vc, tc.Hidden, 512), visionStage(vc, tc.Hidden, 1024)}
	return append(st, vaeStages()...)
}

// runStages prints the work of the other stages and their estimated times per chip.
func runStages(w io.Writer, aEff float64) {
	tc, vc := publishedEncoder()
	fmt.Fprintf(w, "## The text encoder, vision tower and VAE on Metal (`go run ./tools/metalplan`, verbatim)\n\n")
	fmt.Fprintf(w, "Geometry: Qwen3-VL-8B language model %d layers × %d wide (%d heads, %d key/value heads of %d), MLP %d, q8_2f; "+
		"vision tower %d blocks × %d (%d heads), MLP %d, %d mergers, q8_2f; VAE as vae.PublishedConfig, f16, counted by engine/vae's dry run.\n\n",
		tc.Layers, tc.Hidden, tc.Heads, tc.KVHeads, tc.HeadDim, tc.Intermediate, vc.Depth, vc.Hidden, vc.Heads, vc.Intermediate, 1+len(vc.DeepstackIndexes))
	stages := otherStages()
	fmt.Fprintln(w, "| stage | GEMM / conv TFLOP | attention TFLOP | GB touched (each tensor once per op) | FLOP/byte |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, s := range stages {
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.2f | %.0f |\n", s.name, s.gemm/1e12, s.attn/1e12, s.bytes/1e9, (s.gemm+s.attn)/s.bytes)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Estimated seconds per stage (estimate from published peaks; awaits a Mac)")
	fmt.Fprintln(w)
	var hdr, sep strings.Builder
	hdr.WriteString("| chip |")
	sep.WriteString("|---|")
	for _, s := range stages {
		fmt.Fprintf(&hdr, " %s |", s.name)
		sep.WriteString("---:|")
	}
	fmt.Fprintln(w, hdr.String())
	fmt.Fprintln(w, sep.String())
	for _, ch := range chips {
		fmt.Fprintf(w, "| %s |", ch.name)
		for _, s := range stages {
			if ch.peakHi == 0 {
				fmt.Fprint(w, " unknown |")
				continue
			}
			fmt.Fprintf(w, " %s |", secsFine(stageTime(s, ch.peakHi, ch.bw, aEff), stageTime(s, ch.peakLo, ch.bw, aEff)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// secsFine is secs with two decimals below a second.
func secsFine(lo, hi float64) string {
	if hi >= 1 {
		return secs(lo, hi)
	}
	if hi-lo < 0.05*hi {
		return fmt.Sprintf("%.2f", hi)
	}
	return fmt.Sprintf("%.2f–%.2f", lo, hi)
}
