package qi21

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"

	"easel/engine/lora"
	"easel/engine/lora/loratest"
	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// mergedSource is a base source with dense LoRA deltas merged into its linear weights
// (W + Σ strength·ΔW), stored in codec (0: f32).
type mergedSource struct {
	base   quant.Source
	deltas map[string][]float32 // by layer name, already weighted by strength
	codec  quant.DType
}

func (s *mergedSource) Tensor(name string) (*quant.Tensor, error) {
	t, err := s.base.Tensor(name)
	if err != nil || t == nil {
		return t, err
	}
	layer, ok := strings.CutSuffix(strings.TrimPrefix(name, "dit."), ".weight")
	d := s.deltas[layer]
	if !ok || d == nil {
		return t, nil
	}
	w, err := quant.Dequantize(t)
	if err != nil {
		return nil, err
	}
	for i := range w {
		w[i] += d[i]
	}
	codec := s.codec
	if codec == 0 || !isProjection(layer) {
		codec = quant.F32
	}
	data, err := quant.Encode(codec, t.Shape, w)
	if err != nil {
		return nil, err
	}
	return &quant.Tensor{Name: name, DType: codec, Shape: t.Shape, Data: data}, nil
}

// sourceIn is the tiny snapshot with its block projections in codec d (bf16 as stored, f16, or,
// for f32, every linear layer widened to f32).
func sourceIn(t *testing.T, d quant.DType) quant.Source {
	if d != quant.F32 {
		return openSnapshot(t, d)
	}
	zero := map[string][]float32{}
	for _, l := range LinearLayers(mustConfig(t)) {
		zero[l.Name] = make([]float32, l.Out*l.In)
	}
	return &mergedSource{base: openSnapshot(t, 0), deltas: zero}
}

func mustConfig(t *testing.T) Config {
	t.Helper()
	ct, err := openSnapshot(t, 0).Tensor(ConfigTensor)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(ct.Data)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sumDeltas is Σ strength_i·ΔW_i per layer.
func sumDeltas(strengths []float32, ds ...map[string]loratest.Delta) map[string][]float32 {
	out := map[string][]float32{}
	for i, d := range ds {
		for name, delta := range d {
			acc := out[name]
			if acc == nil {
				acc = make([]float32, len(delta.W))
				out[name] = acc
			}
			for j, v := range delta.W {
				acc[j] += strengths[i] * v
			}
		}
	}
	return out
}

// randomAdapter writes a random LoRA for the model's layers in format f and binds it the way a
// file on disk is bound.
func randomAdapter(t *testing.T, c Config, f loratest.Format, seed uint64) (*lora.Adapter, map[string]loratest.Delta) {
	t.Helper()
	layers := LinearLayers(c)
	tensors, deltas := loratest.Random(layers, f, 6, 0.08, seed)
	buf, err := safetensors.Encode(tensors, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.Parse(buf)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lora.Bind(st, layers)
	if err != nil {
		t.Fatal(err)
	}
	if a.Report.Matched != len(tensors) {
		t.Fatalf("%v: matched %d of %d tensors", f, a.Report.Matched, len(tensors))
	}
	return a, deltas
}

// ditOutputs runs every dit_* case through Forward and Prefill+Step at every σ and returns the
// outputs concatenated, in a fixed order.
func ditOutputs(t *testing.T, m *Model) []float32 {
	t.Helper()
	paths, err := golden.Cases("dit")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dit_* cases: %v", err)
	}
	var all []float32
	in := m.Config.InChannels
	for _, path := range paths {
		dc := loadDiTCase(t, path)
		lay := dc.layout
		prog, err := m.Prefill(t.Context(), lay, dc.text, dc.latents[:lay.CondLatents()*in])
		if err != nil {
			t.Fatal(err)
		}
		for _, sigma := range dc.sigmas {
			full, err := m.Forward(t.Context(), lay, dc.text, dc.latents, sigma)
			if err != nil {
				t.Fatal(err)
			}
			step, err := m.Step(t.Context(), prog, dc.latents[lay.CondLatents()*in:], sigma)
			if err != nil {
				t.Fatal(err)
			}
			all = append(append(all, full...), step...)
		}
		m.Release(prog)
	}
	return all
}

func loadFrom(t *testing.T, src quant.Source) *Model {
	t.Helper()
	m, err := Load(src, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loraParityBound is the float32 budget for a LoRA applied at run time against the same LoRA
// merged into unquantized weights: the two differ only in the order of the float32 sums.
const loraParityBound = 1e-5

// TestLoRARunTimeEqualsMerged checks, for every file format and for f32, f16 and bf16 bases,
// that the DiT's outputs with a random LoRA applied at run time equal those of a model with
// the LoRA merged into its weights, on every dit_* case (Forward and Prefill+Step, every σ).
func TestLoRARunTimeEqualsMerged(t *testing.T) {
	for _, base := range []quant.DType{quant.F32, quant.F16, quant.BF16} {
		t.Run(base.String(), func(t *testing.T) {
			src := sourceIn(t, base)
			m := loadFrom(t, src)
			plain := ditOutputs(t, m)
			for i, f := range []loratest.Format{loratest.PEFT, loratest.Kohya, loratest.Comfy, loratest.Diff} {
				t.Run(f.String(), func(t *testing.T) {
					a, deltas := randomAdapter(t, m.Config, f, uint64(10+i))
					if err := m.SetLoRAs([]LoRA{{a, 1}}); err != nil {
						t.Fatal(err)
					}
					defer m.SetLoRAs(nil)
					got := ditOutputs(t, m)
					want := ditOutputs(t, loadFrom(t, &mergedSource{base: src, deltas: sumDeltas([]float32{1}, deltas)}))
					changed := golden.RelErr(plain, want)
					e := golden.RelErr(got, want)
					t.Logf("%v on %v: run time vs merged %.3g (the LoRA changes the output by %.3g)", f, base, e, changed)
					if changed < 1e-2 {
						t.Fatalf("the LoRA changes the output by only %.3g: the test would not see a missing LoRA", changed)
					}
					if e > loraParityBound {
						t.Errorf("%v on %v: run time vs merged relative error %.3g > %g", f, base, e, loraParityBound)
					}
				})
			}
		})
	}
}

// TestLoRATwoAtOnceEqualMergedSum applies two LoRAs of different formats at once, at strengths
// 0.7 and −0.5, against a model with 0.7·ΔW₁ − 0.5·ΔW₂ merged.
func TestLoRATwoAtOnceEqualMergedSum(t *testing.T) {
	src := sourceIn(t, quant.F32)
	m := loadFrom(t, src)
	a1, d1 := randomAdapter(t, m.Config, loratest.Comfy, 21)
	a2, d2 := randomAdapter(t, m.Config, loratest.Kohya, 22)
	s := []float32{0.7, -0.5}
	if err := m.SetLoRAs([]LoRA{{a1, s[0]}, {a2, s[1]}}); err != nil {
		t.Fatal(err)
	}
	got := ditOutputs(t, m)
	want := ditOutputs(t, loadFrom(t, &mergedSource{base: src, deltas: sumDeltas(s, d1, d2)}))
	if e := golden.RelErr(got, want); e > loraParityBound {
		t.Errorf("two LoRAs at run time vs their merged sum: relative error %.3g > %g", e, loraParityBound)
	} else {
		t.Logf("two LoRAs at run time vs their merged sum: relative error %.3g", e)
	}
}

// TestLoRAStrengthZeroIsBitIdentical: a LoRA at strength 0 leaves every output bit for bit as
// without it, and going from strength 1 to 0 to 1 keeps the concatenated factors (no rebuild).
func TestLoRAStrengthZeroIsBitIdentical(t *testing.T) {
	m := loadModel(t, quant.Q4TP)
	plain := ditOutputs(t, m)
	a, _ := randomAdapter(t, m.Config, loratest.DiffBias, 31)
	b, _ := randomAdapter(t, m.Config, loratest.Comfy, 32)
	if err := m.SetLoRAs([]LoRA{{a, 1}, {b, 1}}); err != nil {
		t.Fatal(err)
	}
	factors := m.loraLayers[m.Blocks[0].ToQ].a
	on := ditOutputs(t, m)
	if err := m.SetLoRAs([]LoRA{{a, 0}, {b, 0}}); err != nil {
		t.Fatal(err)
	}
	if m.loraLayers[m.Blocks[0].ToQ].a != factors {
		t.Error("changing only strengths rebuilt the concatenated factors")
	}
	off := ditOutputs(t, m)
	if !bitsEqual(plain, off) {
		t.Errorf("strength 0: outputs differ from no LoRA (relative %.3g)", golden.RelErr(off, plain))
	}
	if golden.RelErr(on, plain) < 1e-2 {
		t.Errorf("strength 1 changed the output by only %.3g", golden.RelErr(on, plain))
	}
	if err := m.SetLoRAs([]LoRA{{a, 1}, {b, 1}}); err != nil {
		t.Fatal(err)
	}
	if again := ditOutputs(t, m); !bitsEqual(on, again) {
		t.Errorf("strength back to 1: outputs differ from the first run (relative %.3g)", golden.RelErr(again, on))
	}
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// loraQuantizedBounds are the measured run-time-vs-re-quantized-merge errors on quantized
// bases (the merged model's block projections re-encoded in the base codec), rounded up: the
// re-quantization of W + ΔW, not the LoRA, sets them.
var loraQuantizedBounds = map[quant.DType]float64{
	quant.Q8_2F: 0.003, // measured 0.0019
	quant.Q4TP:  0.04,  // measured 0.029
}

// TestLoRAOnQuantizedBases applies a LoRA on q8_2f and q4tp block projections. Against the
// exact merge of the dequantized base (W_q + ΔW in f32) it must meet the float32 bound; against
// a merged model re-quantized in the base codec it is measured and held to the recorded bound.
func TestLoRAOnQuantizedBases(t *testing.T) {
	for _, d := range []quant.DType{quant.Q8_2F, quant.Q4TP} {
		t.Run(d.String(), func(t *testing.T) {
			src := openSnapshot(t, d)
			m := loadFrom(t, src)
			a, deltas := randomAdapter(t, m.Config, loratest.PEFT, 41)
			if err := m.SetLoRAs([]LoRA{{a, 1}}); err != nil {
				t.Fatal(err)
			}
			got := ditOutputs(t, m)
			exact := ditOutputs(t, loadFrom(t, &mergedSource{base: src, deltas: sumDeltas([]float32{1}, deltas)}))
			requant := ditOutputs(t, loadFrom(t, &mergedSource{base: src, deltas: sumDeltas([]float32{1}, deltas), codec: d}))
			e1, e2 := golden.RelErr(got, exact), golden.RelErr(got, requant)
			t.Logf("%v: run time vs exact merge %.3g; vs merge re-quantized as %v %.4f (bound %g)", d, e1, d, e2, loraQuantizedBounds[d])
			if e1 > loraParityBound {
				t.Errorf("%v: run time vs the exact merge of the dequantized base: %.3g > %g", d, e1, loraParityBound)
			}
			if e2 > loraQuantizedBounds[d] {
				t.Errorf("%v: run time vs the re-quantized merge: %.4f > recorded %g", d, e2, loraQuantizedBounds[d])
			}
		})
	}
}

// TestLoRABiasPatchShiftsProjOut: a .diff_b on proj_out (the last layer) adds strength·Δb to
// every row of the velocity, exactly as a bias would.
func TestLoRABiasPatchShiftsProjOut(t *testing.T) {
	m := loadModel(t, 0)
	bias := make([]float32, m.Config.OutChannels)
	for i := range bias {
		bias[i] = float32(i%7) - 3
	}
	buf, err := safetensors.Encode([]*safetensors.Tensor{safetensors.F32Tensor("diffusion_model.proj_out.diff_b", []int{len(bias)}, bias)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := safetensors.Parse(buf)
	a, err := lora.Bind(st, LinearLayers(m.Config))
	if err != nil {
		t.Fatal(err)
	}
	plain := ditOutputs(t, m)
	if err := m.SetLoRAs([]LoRA{{a, 0.5}}); err != nil {
		t.Fatal(err)
	}
	got := ditOutputs(t, m)
	worst := 0.0
	for i := range got {
		want := plain[i] + 0.5*bias[i%len(bias)]
		worst = max(worst, math.Abs(float64(got[i]-want)))
	}
	if worst > 1e-5 {
		t.Errorf("bias patch: worst deviation from plain + 0.5·Δb is %.3g", worst)
	}
}

// TestSetLoRAsRefusals: a live program and an adapter for layers the model lacks are refused.
func TestSetLoRAsRefusals(t *testing.T) {
	m := loadModel(t, 0)
	paths, _ := golden.Cases("dit")
	dc := loadDiTCase(t, paths[0])
	prog, err := m.Prefill(t.Context(), dc.layout, dc.text, dc.latents[:dc.layout.CondLatents()*m.Config.InChannels])
	if err != nil {
		t.Fatal(err)
	}
	a, _ := randomAdapter(t, m.Config, loratest.PEFT, 1)
	if err := m.SetLoRAs([]LoRA{{a, 1}}); err == nil || !strings.Contains(err.Error(), "release") {
		t.Errorf("SetLoRAs with a live program: %v", err)
	}
	m.Release(prog)
	other := &lora.Adapter{Factors: []lora.Factor{{Layer: "transformer_blocks.99.attn.to_q", A: a.Factors[0].A, B: a.Factors[0].B, Rank: a.Factors[0].Rank, Scale: 1}}}
	if err := m.SetLoRAs([]LoRA{{other, 1}}); err == nil || !strings.Contains(err.Error(), "transformer_blocks.99") {
		t.Errorf("SetLoRAs with a foreign layer: %v", err)
	}
	var b bytes.Buffer
	fmt.Fprint(&b, len(LinearLayers(m.Config)))
	if want := fmt.Sprint(8 + 7*m.Config.Layers); b.String() != want {
		t.Errorf("LinearLayers: %s layers, want %s", b.String(), want)
	}
}

// TestSetLoRAsVersion: setting the same LoRAs at the same strengths again changes nothing (a
// device keeps its upload); a new strength or a new set gives a new version.
func TestSetLoRAsVersion(t *testing.T) {
	m := loadModel(t, 0)
	a, _ := randomAdapter(t, m.Config, loratest.PEFT, 61)
	if err := m.SetLoRAs([]LoRA{{a, 1}}); err != nil {
		t.Fatal(err)
	}
	_, v1 := m.LoRATerms()
	m.SetLoRAs([]LoRA{{a, 1}})
	if _, v := m.LoRATerms(); v != v1 {
		t.Errorf("the same LoRAs again: version %d → %d", v1, v)
	}
	m.SetLoRAs([]LoRA{{a, 0.5}})
	terms, v2 := m.LoRATerms()
	if v2 == v1 || terms["transformer_blocks.0.attn.to_q"].Scales[0] != 0.5 {
		t.Errorf("new strength: version %d → %d, to_q scale %v", v1, v2, terms["transformer_blocks.0.attn.to_q"].Scales)
	}
	m.SetLoRAs([]LoRA{{a, 0}})
	if terms, _ := m.LoRATerms(); len(terms) != 0 || m.HasLoRA() {
		t.Errorf("strength 0: %d layers with terms, HasLoRA %v", len(terms), m.HasLoRA())
	}
}
