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
