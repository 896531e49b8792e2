package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"easel/engine/qi21"
)

// TestWeightBytesMatchTheFormat holds the q4tp payloads to cmf.md §9.3's worked sizes and §10.4's
// per-block total.
func TestWeightBytesMatchTheFormat(t *testing.T) {
	w := blockWeights(qi21.PublishedConfig())
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"[4096, 4096]", w.dd, 8_732_672},
		{"[12288, 4096]", w.fd, 26_198_016},
		{"[4096, 12288]", w.df, 26_165_248},
		{"one block", w.block(), 113_491_968},
	} {
		if c.got != c.want {
			t.Errorf("q4tp %s: %.0f bytes, cmf.md says %.0f", c.what, c.got, c.want)
		}
	}
}

// TestStepWorkMatchesTheWorkloadModel holds the step's GEMM FLOPs to the workload model of
// peers.md §1 (57.2 TFLOP at 1024², 14.3 at 512²) and attention to 4·n·(p+n)·D·32 with 256 prefix
// rows (peers.md's 8.9 TFLOP counts ≈ 30 prefix rows), and checks that the estimate reproduces
// the seed's M4 512² measurement (5.3–5.9 s) within 15 %.
func TestStepWorkMatchesTheWorkloadModel(t *testing.T) {
	c := qi21.PublishedConfig()
	w := blockWeights(c)
	cases := []struct {
		target, prefix int
		gemmTF, attnTF float64
		tolerance      float64
	}{
		{4096, 256, 57.2, 9.3, 0.01},
		{1024, 256, 14.3, 0.69, 0.01},
	}
	for _, cs := range cases {
		cls := stepClasses(c, w, cs.target, cs.prefix)
		for _, x := range []struct {
			name      string
			got, want float64
		}{{"gemm", cls[0].flops / 1e12, cs.gemmTF}, {"attn", cls[1].flops / 1e12, cs.attnTF}} {
			if math.Abs(x.got-x.want) > cs.tolerance*x.want {
				t.Errorf("%d rows against %d: %s %.3f TFLOP, want %.2f", cs.target, cs.prefix, x.name, x.got, x.want)
			}
		}
	}
	m4 := chips[12]
	if !strings.HasPrefix(m4.name, "M4 (") {
		t.Fatalf("chips[12] is %s, want the M4", m4.name)
	}
	got := stepTime(stepClasses(c, w, 1024, 256), m4.peakLo, m4.bw, attnEff(c), false)
	if got < 0.85*5.3 || got > 1.15*5.9 {
		t.Errorf("M4 512² estimate %.2f s, the seed measured 5.3–5.9 s", got)
	}
}

func TestOutputNamesEveryChipAndScenario(t *testing.T) {
	var b bytes.Buffer
	run(&b, 256)
	out := b.String()
	for _, want := range []string{"512² t2i", "1024² edit, one 1024² condition image", "M1 Max (32)", "M4 Max (40)", "awaits a Mac"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// TestOtherStagesWork holds the text encoder's GEMM work to 2 FLOPs per q8 weight per token (the
// language model's 36 layers hold 6.95 billion weights besides the embeddings), and checks that
// the VAE estimate on an M1 Max lands near qwen-image-cplus's measured 1024² decode (2.20 s,
// peers.md), within 35 %: the dry run's convolution count and the GEMM fraction together.
func TestOtherStagesWork(t *testing.T) {
	tc, _ := publishedEncoder()
	lm := textStage(tc, 100)
	if perToken := lm.gemm / 100 / 2; math.Abs(perToken-6.945e9) > 0.01e9 {
		t.Errorf("language model: %.4g weights per token's GEMMs, want ≈ 6.945e9", perToken)
	}
	var decode stage
	for _, s := range vaeStages() {
		if strings.Contains(s.name, "1024² in one piece") {
			decode = s
		}
	}
	if decode.gemm == 0 {
		t.Fatal("no 1024² one-piece decode among the VAE stages")
	}
	var m1max chip
	for _, ch := range chips {
		if strings.HasPrefix(ch.name, "M1 Max") {
			m1max = ch
		}
	}
	est := stageTime(decode, m1max.peakHi, m1max.bw, attnEff(qi21.PublishedConfig()))
	t.Logf("VAE decode 1024² on M1 Max: %.3g TFLOP, estimate %.2f s (qwen-image-cplus measured 2.20 s)", decode.gemm/1e12, est)
	if est < 2.20/1.35 || est > 2.20*1.35 {
		t.Errorf("VAE decode 1024² on M1 Max estimated %.2f s, more than 35 %% from the measured 2.20 s", est)
	}
}

// TestVariantTrafficModel: with a cache that holds everything each tile is fetched once; with the
// modelled 8 MB the swizzled grid moves several times fewer bytes than the baseline's order (the
// review's estimate: ≈ 1146 GB to 150–250 GB per step at 1024²).
func TestVariantTrafficModel(t *testing.T) {
	c := qi21.PublishedConfig()
	w := blockWeights(c)
	ds := blockGemms(c, w)
	const n = 4096
	var once float64
	for _, d := range ds {
		once += float64(n*d.k*2) + float64(d.z)*d.weightBytes + float64(d.z*n*d.rows)*3
	}
	if got := dramBytes(ds, n, gemmOrders[0], 1e18); math.Abs(got-once) > 1 {
		t.Errorf("unbounded cache: %.0f bytes, want each tile once, %.0f", got, once)
	}
	base, swz := dramBytes(ds, n, gemmOrders[0], 8e6), dramBytes(ds, n, gemmOrders[2], 8e6)
	if !(swz < base/3) {
		t.Errorf("swizzled %.0f GB per block vs base %.0f GB: want several times fewer", swz/1e9, base/1e9)
	}
}
