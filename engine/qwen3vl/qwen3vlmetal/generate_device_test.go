package qwen3vlmetal

import (
	"math"
	"slices"
	"strings"
	"testing"

	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
	"easel/internal/generatecase"
	"easel/internal/golden"
	"easel/kernels/device"
)

// A device with room for the encoder's vectors but not for the one-row decoder's copy of the
// weights declines Generate before the first token, saying what it needs; the Runner writes on
// the CPU, tells the decline, and the tokens are the CPU encoder's.
func TestEmuGenerateDeclines(t *testing.T) {
	_, probe := encoders(t, device.Limits{})
	resident := probe.ResidentBytes() + probe.WeightBytes()
	cpuEnc, gpu := encoders(t, device.Limits{MaxBufferLength: 1 << 30, RecommendedMaxWorkingSetSize: resident + 1024})
	var logged []string
	r, err := NewRunner(gpu, cpuEnc, func(d *metal.Declined) { logged = append(logged, d.Reason) })
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := golden.Cases("textenc")
	if len(paths) == 0 {
		t.Fatal("no textenc_* cases")
	}
	tok := ids(t, load(t, paths[0]), "input_ids", "")
	opts := qwen3vl.GenerateOptions{MaxTokens: 3}
	var streamed []int32
	_, err = gpu.Generate(t.Context(), tok, nil, qwen3vl.GenerateOptions{MaxTokens: 3, OnToken: func(id int32) error {
		streamed = append(streamed, id)
		return nil
	}})
	if !isDeclined(err) || !strings.Contains(err.Error(), "recommended working set") || len(streamed) != 0 {
		t.Fatalf("the device without room: %v after %d tokens, want a decline naming the working set before any", err, len(streamed))
	}
	want, err := cpuEnc.Generate(t.Context(), tok, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Generate(t.Context(), tok, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.IDs, want.IDs) || len(logged) != 1 {
		t.Errorf("the runner wrote %v with %d declines told; the CPU writes %v", got.IDs, len(logged), want.IDs)
	}
}

// On the q8 file (q8_2f matrices, read by dec_gemv's int8 path) the device writes the CPU's
// tokens, with every step's logits within generatecase's bound of the CPU's (both dequantize the
// same bytes to float).
func TestEmuGenerateQ8MatchesCPU(t *testing.T) {
	cpuEnc, gpu := encoders(t, device.Limits{})
	if _, err := NewRunner(gpu, cpuEnc, nil); err != nil {
		t.Fatal(err)
	}
	paths, _ := golden.Cases("textenc")
	if len(paths) == 0 {
		t.Fatal("no textenc_* cases")
	}
	tok := ids(t, load(t, paths[0]), "input_ids", "")
	var want [][]float32
	opts := qwen3vl.GenerateOptions{MaxTokens: 6, OnLogits: func(_ int, l []float32) { want = append(want, slices.Clone(l)) }}
	wantG, err := cpuEnc.Generate(t.Context(), tok, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	opts.OnLogits = func(step int, l []float32) {
		scale, e := 0.0, 0.0
		for i, v := range want[step] {
			scale = max(scale, math.Abs(float64(v)))
			e = max(e, math.Abs(float64(l[i]-v)))
		}
		worst = max(worst, e/scale)
	}
	got, err := gpu.Generate(t.Context(), tok, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("logits: largest error %.3g of the step's largest |logit|", worst)
	if !slices.Equal(got.IDs, wantG.IDs) || !(worst <= generatecase.Tolerance) || worst == 0 {
		t.Errorf("device %v, CPU %v; logits error %.3g (bound %g; 0 means the device did not run)", got.IDs, wantG.IDs, worst, generatecase.Tolerance)
	}
}
