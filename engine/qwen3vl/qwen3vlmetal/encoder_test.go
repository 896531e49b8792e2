package qwen3vlmetal

import (
	"errors"
	"image"
	"image/color"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/condimage"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/qwen3vl"
	"easel/engine/tokenizer"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// Bound of the emulated device against the CPU encoder over the same q8 file, relative error of
// the last hidden state ‖metal − cpu‖ / ‖cpu‖. The device stages every linear layer's input and
// the attention's q, k, probabilities and v as half (unit roundoff 4.9e-4) where the CPU
// dequantizes the same q8 weights to float; norms, softmax and RoPE are float. Measured on the
// tiny reference model (docs/METAL.md, "The text encoder on Metal"): text-only prompts 2.6e-5 and
// 2.7e-5, the prompt with two condition images (vision tower, DeepStack) 5.6e-5 — small because
// the residual stream, which stays float, dominates the tiny model's hidden state. The bound is
// about five times the largest; the published model's 36 layers will add more (only a Mac run
// against the CPU on the real file can say how much).
const parityBound = 3e-4

// visionBound is the tower's own: its outputs come straight out of half-staged linear layers (the
// mergers' fc2), with no float residual stream to dilute the roundoff, so they carry about one
// half roundoff, as a single linear layer does in engine/ml/metalops's tests (2e-4…3e-4).
// Measured: 4.2e-4…4.7e-4 over the merger and DeepStack outputs of both images of
// pipeline_ti2i_two; the bound is about four times that.
const visionBound = 2e-3

func emuDevice(t testing.TB, limits device.Limits) device.Device {
	t.Helper()
	return testdevice.Device(t, emu.Options{Limits: limits})
}

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// tinyFile is the tiny reference snapshot converted once with the q8 profile (te.* and vis.*
// q8_2f, vision tower included), mapped.
func tinyFile(t testing.TB) *cmf.File {
	return tinymodel.Open(t, convert.Options{Profile: convert.ProfileQ8})
}

func encoders(t testing.TB, limits device.Limits) (*qwen3vl.Encoder, *Encoder) {
	t.Helper()
	f := tinyFile(t)
	cpuEnc, err := qwen3vl.NewEncoder(cpu.New(), f)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := New(emuDevice(t, limits), f, f.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gpu.Close)
	return cpuEnc, gpu
}

func load(t *testing.T, path string) *golden.Case {
	t.Helper()
	c, err := golden.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ids(t *testing.T, c *golden.Case, name, mask string) []int32 {
	t.Helper()
	v, _, err := c.Int64s(name)
	if err != nil {
		t.Fatal(err)
	}
	var m []int64
	if mask != "" && c.Has(mask) {
		if m, _, err = c.Int64s(mask); err != nil {
			t.Fatal(err)
		}
	}
	var out []int32
	for i, x := range v {
		if m == nil || m[i] == 1 {
			out = append(out, int32(x))
		}
	}
	return out
}

// visionInputs splits a case's pixel_values by its image_grid_thw.
func visionInputs(t *testing.T, c *golden.Case, prefix string, patchValues int) []qwen3vl.VisionInput {
	t.Helper()
	if !c.Has(prefix + "image_grid_thw") {
		return nil
	}
	grid, _, err := c.Int64s(prefix + "image_grid_thw")
	if err != nil {
		t.Fatal(err)
	}
	pixels, _, err := c.Float32s(prefix + "pixel_values")
	if err != nil {
		t.Fatal(err)
	}
	var out []qwen3vl.VisionInput
	off := 0
	for i := 0; i+3 <= len(grid); i += 3 {
		g := [3]int{int(grid[i]), int(grid[i+1]), int(grid[i+2])}
		n := g[0] * g[1] * g[2] * patchValues
		out = append(out, qwen3vl.VisionInput{Pixels: pixels[off : off+n], Grid: g})
		off += n
	}
	return out
}

func check(t *testing.T, what string, got, want []float32) {
	t.Helper()
	checkWithin(t, what, got, want, parityBound)
}

func checkWithin(t *testing.T, what string, got, want []float32, bound float64) {
	t.Helper()
	rel := golden.RelErr(got, want)
	t.Logf("%s: relative error %.3e, max abs %.3e", what, rel, golden.MaxAbsErr(got, want))
	if rel == 0 {
		t.Errorf("%s: identical to the CPU result: did the device run at all?", what)
	}
	if !(rel <= bound) {
		t.Errorf("%s: relative error %.3e exceeds %.0e", what, rel, bound)
	}
}

// The language model on every textenc case.
func TestEmuTextEncoderMatchesCPU(t *testing.T) {
	paths, err := golden.Cases("textenc")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no textenc_* cases: %v", err)
	}
	cpuEnc, gpu := encoders(t, device.Limits{})
	for _, p := range paths {
		c := load(t, p)
		t.Run(c.Name, func(t *testing.T) {
			tok := ids(t, c, "input_ids", "")
			want, err := cpuEnc.Encode(t.Context(), tok, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpu.Encode(t.Context(), tok, nil)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "last hidden state", got, want)
		})
	}
}

// The vision tower and the language model with DeepStack on every pipeline case's prompts that
// carry condition images (a folder without any gets a prepared picture of its own: imagePrompts).
func TestEmuTextEncoderWithImagesMatchesCPU(t *testing.T) {
	cpuEnc, gpu := encoders(t, device.Limits{})
	for _, c := range imagePrompts(t, cpuEnc) {
		t.Run(c.name, func(t *testing.T) {
			want, err := cpuEnc.Encode(t.Context(), c.ids, c.images)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpu.Encode(t.Context(), c.ids, c.images)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "last hidden state with images", got, want)
		})
	}
}

// imagePrompt is one prompt with condition images, as the text encoder takes it.
type imagePrompt struct {
	name   string
	ids    []int32
	images []qwen3vl.VisionInput
}

// imagePrompts are the pipeline cases' first prompts that carry condition images. When the golden
// folder has none, it is one prompt made here as the pipeline makes it: a procedural 160×96
// picture prepared for a 256² output with the model file's image processor, in the template with
// the model's own tokenizer, so the vision tower and DeepStack are compared on every folder.
func imagePrompts(t *testing.T, cpuEnc *qwen3vl.Encoder) []imagePrompt {
	t.Helper()
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	vc, ok := cpuEnc.VisionConfig()
	if !ok {
		t.Fatal("the converted model has no vision tower")
	}
	var out []imagePrompt
	for _, p := range paths {
		c := load(t, p)
		if images := visionInputs(t, c, "te0_", vc.PatchValues()); len(images) > 0 {
			out = append(out, imagePrompt{c.Name, ids(t, c, "te0_input_ids", "te0_attention_mask"), images})
		}
	}
	if len(out) > 0 {
		return out
	}
	t.Log("no pipeline case in the golden folder has condition images: comparing on a prepared picture")
	f := tinyFile(t)
	proc := condimage.DefaultImageProcessorConfig()
	if js, err := f.ConfigJSON(condimage.ImageProcessorTensor); err == nil {
		if proc, err = condimage.ParseImageProcessorConfig(js, condimage.ImageProcessorTensor); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := tokenizer.Load(f.Vocab())
	if err != nil {
		t.Fatal(err)
	}
	pic := image.NewNRGBA(image.Rect(0, 0, 160, 96))
	for y := range 96 {
		for x := range 160 {
			pic.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / 159), uint8(y * 255 / 95), uint8((x*7 + y*13) % 256), 255})
		}
	}
	cond, err := condimage.PrepareConditionImage(pic, 256, proc)
	if err != nil {
		t.Fatal(err)
	}
	pads, err := qwen3vl.ImagePadCount(cond.GridTHW, proc.MergeSize)
	if err != nil {
		t.Fatal(err)
	}
	prompt, err := qwen3vl.BuildPrompt(tok, "the same cube, in blue", []int{pads})
	if err != nil {
		t.Fatal(err)
	}
	return []imagePrompt{{"prepared picture", prompt.IDs, []qwen3vl.VisionInput{{Pixels: cond.PixelValues, Grid: cond.GridTHW}}}}
}

// A device with room for the weights but not for a prompt declines it; the Runner encodes on the
// CPU and the result is the CPU's bit for bit. A device too small for the weights declines New.
func TestEmuTextEncoderDeclines(t *testing.T) {
	_, probe := encoders(t, device.Limits{})
	weights := probe.ResidentBytes() + probe.WeightBytes()
	f := tinyFile(t)
	if _, err := New(emuDevice(t, device.Limits{MaxBufferLength: 1 << 30, RecommendedMaxWorkingSetSize: weights / 2}), f, f.Bytes()); !isDeclined(err) || !strings.Contains(err.Error(), "recommended working set") {
		t.Errorf("a device without room for the weights: %v, want a decline naming the working set", err)
	}
	cpuEnc, gpu := encoders(t, device.Limits{MaxBufferLength: 1 << 30, RecommendedMaxWorkingSetSize: weights + 1024})
	var logged []string
	r, err := NewRunner(gpu, cpuEnc, func(d *metal.Declined) { logged = append(logged, d.Reason) })
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := golden.Cases("textenc")
	for _, p := range paths {
		c := load(t, p)
		tok := ids(t, c, "input_ids", "")
		_, err := gpu.Encode(t.Context(), tok, nil)
		t.Log(err)
		if !isDeclined(err) {
			t.Fatalf("%s: %v, want a decline", c.Name, err)
		}
		want, err := cpuEnc.Encode(t.Context(), tok, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, onDevice, err := r.Encode(t.Context(), tok, nil)
		if err != nil {
			t.Fatal(err)
		}
		if onDevice || !slices.Equal(got, want) {
			t.Errorf("%s: the declined prompt ran on the device (%v) or differs from the CPU encoder", c.Name, onDevice)
		}
	}
	if len(logged) != len(paths) {
		t.Errorf("%d declines logged for %d prompts", len(logged), len(paths))
	}
}

func isDeclined(err error) bool {
	var d *metal.Declined
	return errors.As(err, &d)
}

// The vision tower alone (patch embedding, blocks with the 2-D rotary, the main merger and the
// DeepStack mergers) on every condition image of every pipeline case (or imagePrompts' prepared
// picture), device against CPU.
func TestEmuVisionTowerMatchesCPU(t *testing.T) {
	cpuEnc, gpu := encoders(t, device.Limits{})
	for _, c := range imagePrompts(t, cpuEnc) {
		for i, img := range c.images {
			wantE, wantD, err := cpuEnc.EncodeImage(t.Context(), img)
			if err != nil {
				t.Fatal(err)
			}
			gotE, gotD, err := gpu.EncodeImage(t.Context(), img)
			if err != nil {
				t.Fatal(err)
			}
			checkWithin(t, c.name+" image "+strconv.Itoa(i+1)+" merger", gotE, wantE, visionBound)
			if len(gotD) != len(wantD) {
				t.Fatalf("%d DeepStack outputs, the CPU has %d", len(gotD), len(wantD))
			}
			for j := range gotD {
				checkWithin(t, c.name+" image "+strconv.Itoa(i+1)+" DeepStack merger "+strconv.Itoa(j), gotD[j], wantD[j], visionBound)
			}
		}
	}
}
