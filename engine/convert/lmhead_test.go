package convert

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"easel/engine/cmf"
	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/tinysnapshot"
)

// A snapshot with its own language head keeps it, as te.lm_head.weight in the text encoder's
// codec (q8_2f in cortiq, the source's bf16 in f16), beside the final norm; the layout from the
// config lists it too.
func TestConvertKeepsTheUntiedLanguageHead(t *testing.T) {
	dir := tinysnapshot.Untied(t, tinysnapshot.Permutation{A: 7907, B: 5})
	src, err := safetensors.Open(filepath.Join(dir, "text_encoder", "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	head := src.Tensor("lm_head.weight")
	want, err := head.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p    Profile
		want quant.DType
	}{{ProfileCortiq, quant.Q8_2F}, {ProfileF16, quant.BF16}} {
		t.Run(string(c.p), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "untied.cmf")
			if _, err := Convert(context.Background(), dir, out, Options{Profile: c.p}); err != nil {
				t.Fatal(err)
			}
			f, err := cmf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := f.Tensor("te.lm_head.weight")
			if err != nil {
				t.Fatal(err)
			}
			if got.DType != c.want || !slices.Equal(got.Shape, head.Shape) {
				t.Fatalf("te.lm_head.weight is %v %v, want %v %v", got.DType, got.Shape, c.want, head.Shape)
			}
			dec, err := quant.Dequantize(got)
			if err != nil {
				t.Fatal(err)
			}
			if c.want == quant.BF16 && !slices.Equal(dec, want) {
				t.Error("te.lm_head.weight stored as bf16 is not the source's rows")
			}
			if e := relRMS(want, dec); e > quantBudget[quant.Q8_2F] {
				t.Errorf("te.lm_head.weight: relative RMS error %.4f", e)
			}
			if _, err := f.Tensor("te.norm.weight"); err != nil {
				t.Error(err)
			}
		})
	}
	raw, err := os.ReadFile(filepath.Join(dir, "text_encoder", "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	listed, err := textEncoderTensors(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(listed, func(s sourceTensor) bool { return s.name == "lm_head.weight" }) {
		t.Error("the layout of an untied text encoder does not list lm_head.weight")
	}
}
