package pipelinemetal

import (
	"slices"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/engine/qwen3vl/qwen3vlmetal"
	"easel/engine/vae/vaemetal"
	"easel/internal/golden"
	"easel/internal/pipelinecase"
	"easel/internal/tinymodel"
	"easel/kernels/device"
)

// The whole pipeline on the emulated device: the text encoder and vision tower through
// qwen3vlmetal, the DiT through the Metal denoiser and the VAE (condition-image encodes and the
// final decode) through vaemetal, against the CPU pipeline over the same q8 file and against the
// reference, with the DiT-only bounds of metal_test.go. The VAE's half-staged convolutions add
// ~5e-4 relative per decode and ~9e-4 per encode, the text encoder ~6e-5 (their packages' tests).
// Measured over the three pipeline_* cases: see docs/METAL.md, "The whole pipeline on Metal".
const (
	allMetalVsCPUBound = metalVsCPUBound
	allMetalVsRefBound = metalVsRefBound
)

// onMetalAll is pipeline.Options running the text encoder, the DiT and the VAE on dev.
func onMetalAll(dev device.Device) func(*cmf.File) pipeline.Options {
	return func(f *cmf.File) pipeline.Options {
		o := onMetal(dev)(f)
		o.VAE = VAE(dev, f.Bytes())
		o.TextEncoder = TextEncoder(dev, f.Bytes())
		return o
	}
}

func TestEmuGoldenPipelineAllOnMetal(t *testing.T) {
	dev := emuDevice(t, 0, 0)
	var vaeAt, textAt pipeline.Placement
	onCPU, onDev := q8Pipeline(t, nil), q8Pipeline(t, func(f *cmf.File) pipeline.Options {
		o := onMetalAll(dev)(f)
		o.VAE, o.TextEncoder = capture(o.VAE, &vaeAt), capture(o.TextEncoder, &textAt)
		return o
	})
	if n := onDev.VAENotice(); !strings.HasPrefix(n, "the VAE runs on Metal") {
		t.Fatalf("the pipeline does not say the VAE runs on Metal: %q", n)
	}
	if n := onDev.TextEncoderNotice(); !strings.HasPrefix(n, "the text encoder runs on Metal") {
		t.Fatalf("the pipeline does not say the text encoder runs on Metal: %q", n)
	}
	for _, c := range pipelinecase.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			vae0, text0 := vaeAt.DeviceTime(), textAt.DeviceTime()
			cpuSteps, cpuImg := stagedRun(t, onCPU, c)
			devSteps, devImg := stagedRun(t, onDev, c)
			if vaeAt.DeviceTime() <= vae0 || textAt.DeviceTime() <= text0 {
				t.Errorf("the VAE or the text encoder reported no device time: it did not run on the device")
			}
			want, sshape := c.Floats(t, "steps_latents")
			per := sshape[2] * sshape[3]
			var vsCPU, vsRef, cpuVsRef float64
			for i := range devSteps {
				ref := want[i*per : (i+1)*per]
				vsCPU = max(vsCPU, pipelinecase.MaxAbs(t, "latents", devSteps[i], cpuSteps[i]))
				vsRef = max(vsRef, pipelinecase.MaxAbs(t, "latents", devSteps[i], ref))
				cpuVsRef = max(cpuVsRef, pipelinecase.MaxAbs(t, "latents", cpuSteps[i], ref))
			}
			imgWant, _ := c.Floats(t, "image_np")
			iCPU, iRef, iCPURef := pipelinecase.MaxAbs(t, "image", devImg, cpuImg), pipelinecase.MaxAbs(t, "image", devImg, imgWant), pipelinecase.MaxAbs(t, "image", cpuImg, imgWant)
			t.Logf("%d steps, CFG %g: latents max |Δ| all-Metal vs CPU %.3g, vs reference %.3g (CPU q8 vs reference %.3g); image all-Metal vs CPU %.3g, vs reference %.3g (CPU q8 vs reference %.3g)",
				c.Steps, c.CFG, vsCPU, vsRef, cpuVsRef, iCPU, iRef, iCPURef)
			if !(vsCPU <= allMetalVsCPUBound) || !(iCPU <= allMetalVsCPUBound) {
				t.Errorf("all-Metal vs CPU over the same file: latents %.3g, image %.3g; want ≤ %g", vsCPU, iCPU, allMetalVsCPUBound)
			}
			if !(vsRef <= allMetalVsRefBound) || !(iRef <= allMetalVsRefBound) {
				t.Errorf("all-Metal vs the reference: latents %.3g, image %.3g; want ≤ %g", vsRef, iRef, allMetalVsRefBound)
			}
		})
	}
}

// TestEmuMetalVAEDeclineFallsBackToCPU runs an editing case (the one with the most condition
// images: they are encoded, the result decoded) with only the VAE on a device: once on a device
// too small for its weights (the VAE is declined at New), once on one with room for the weights
// but not for any decode or encode (each call is declined). Both say why and give the CPU pipeline's result exactly; a
// device with room runs the decode there and reports its GPU time in the decoding stage.
func TestEmuMetalVAEDeclineFallsBackToCPU(t *testing.T) {
	req := behaviourRequest(t, 2)
	want, err := q8Pipeline(t, nil).Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileQ8}))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probe, err := vaemetal.New(emuDevice(t, 0, 0), f, f.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	weights := probe.ResidentBytes() + probe.WeightBytes()
	probe.Close()

	for _, tc := range []struct {
		name       string
		workingSet int64
		notice     string // a notice that must appear
		onDevice   bool
	}{
		{"no room for the weights", 64 << 10, "Metal declined the VAE: the VAE's weights need", false},
		{"no room for a call", weights + 1024, "Metal declined the VAE: decoding", false},
		{"room", 8 << 30, "the VAE runs on Metal", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := emuDevice(t, 1<<30, tc.workingSet)
			p := q8Pipeline(t, func(f *cmf.File) pipeline.Options { return pipeline.Options{VAE: VAE(dev, f.Bytes())} })
			got := runExpectingNotice(t, p, req, tc.notice)
			decodeDev := got.StageDeviceTimes[pipeline.StageDecoding]
			if !tc.onDevice {
				if decodeDev != 0 || !slices.Equal(got.Image.Pix, want.Image.Pix) || !slices.Equal(got.Latents, want.Latents) {
					t.Errorf("declined: decode device time %v, image equal %v, latents equal %v; want 0 and the CPU's result exactly",
						decodeDev, slices.Equal(got.Image.Pix, want.Image.Pix), slices.Equal(got.Latents, want.Latents))
				}
				return
			}
			if decodeDev <= 0 || got.StageDeviceTimes[pipeline.StageEncodingImages] <= 0 {
				t.Errorf("on the device: no GPU time in the decoding (%v) or image-encoding (%v) stage", decodeDev, got.StageDeviceTimes[pipeline.StageEncodingImages])
			}
			if e := golden.MaxAbsErr(pipelinecase.ImageHWC(got.Decoded), pipelinecase.ImageHWC(want.Decoded)); e == 0 || e > allMetalVsCPUBound {
				t.Errorf("on the device: decoded image max |Δ| %.3g from the CPU's, want in (0, %g]", e, allMetalVsCPUBound)
			}
		})
	}
}

// TestEmuMetalTextEncoderDeclineFallsBackToCPU: with only the text encoder on a device too small
// for its weights, or with room for the weights but not for a prompt, the run says why and gives
// the CPU pipeline's result exactly; with room, the prompt-encoding stage reports GPU time.
func TestEmuMetalTextEncoderDeclineFallsBackToCPU(t *testing.T) {
	req := behaviourRequest(t, 0)
	want, err := q8Pipeline(t, nil).Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileQ8}))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	probe, err := qwen3vlmetal.New(emuDevice(t, 0, 0), f, f.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	weights := probe.ResidentBytes() + probe.WeightBytes()
	probe.Close()
	for _, tc := range []struct {
		name       string
		workingSet int64
		notice     string
		onDevice   bool
	}{
		{"no room for the weights", weights / 2, "Metal declined the text encoder: the text encoder's weights need", false},
		{"no room for a prompt", weights + 1024, "Metal declined the text encoder: encoding a prompt", false},
		{"room", 8 << 30, "the text encoder runs on Metal", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := emuDevice(t, 1<<30, tc.workingSet)
			p := q8Pipeline(t, func(f *cmf.File) pipeline.Options { return pipeline.Options{TextEncoder: TextEncoder(dev, f.Bytes())} })
			got := runExpectingNotice(t, p, req, tc.notice)
			encDev := got.StageDeviceTimes[pipeline.StageEncodingPrompt]
			if !tc.onDevice {
				if encDev != 0 || !slices.Equal(got.Latents, want.Latents) || !slices.Equal(got.Image.Pix, want.Image.Pix) {
					t.Errorf("declined: prompt device time %v, latents equal %v; want 0 and the CPU's result exactly", encDev, slices.Equal(got.Latents, want.Latents))
				}
				return
			}
			if encDev <= 0 {
				t.Error("on the device: no GPU time in the prompt-encoding stage")
			}
			if e := golden.MaxAbsErr(got.Latents, want.Latents); e == 0 || e > allMetalVsCPUBound {
				t.Errorf("on the device: final latents max |Δ| %.3g from the CPU's, want in (0, %g]", e, allMetalVsCPUBound)
			}
		})
	}
}

// runExpectingNotice runs req on p and fails the test unless a notice event starts with notice.
func runExpectingNotice(t *testing.T, p *pipeline.Pipeline, req pipeline.Request, notice string) *pipeline.Result {
	t.Helper()
	events := make(chan pipeline.Event, 1024)
	got, err := p.Run(t.Context(), req, events)
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	for ev := range events {
		if ev.Notice != "" {
			notices = append(notices, ev.Notice)
		}
	}
	t.Logf("notices %q; device time per stage %v", notices, got.StageDeviceTimes)
	if !slices.ContainsFunc(notices, func(n string) bool { return strings.HasPrefix(n, notice) }) {
		t.Errorf("no notice starting %q", notice)
	}
	return got
}
