package pipelinemetal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"easel/engine/qwen3vl"
	"easel/engine/vae"
	"easel/internal/golden"
	"easel/internal/pipelinecase"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// The DiT through the Metal denoiser on the emulated device, end to end: half activations behind
// the default guards, half K/V, an f32 residual stream. The Metal kernels read q8/q4tp block
// projections only, so these tests convert the tiny model with the q8 profile (text encoder and
// vision q8_2f, VAE f16 as well) and compare the Metal pipeline with the CPU pipeline over the
// same file (the Metal path's own error) and with the reference (which adds the q8 codec's).
//
// Measured over the three pipeline_* cases (docs/BENCHMARKS.md, "Whole denoiser through the
// emulator"), max |Δ| over every step's latents and the [0, 1] image:
const (
	metalVsCPUBound = 1e-3 // Metal pipeline vs CPU pipeline, same q8 file: measured 7.4e-5…2.8e-4
	metalVsRefBound = 5e-3 // Metal pipeline (q8 file) vs the reference's float32 pipeline: 1.3e-3…2.5e-3
)

// q8Pipeline opens the tiny model converted with the q8 profile (vision included), with opts.
func q8Pipeline(t *testing.T, opts func(*cmf.File) pipeline.Options) *pipeline.Pipeline {
	t.Helper()
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileQ8}))
	if err != nil {
		t.Fatal(err)
	}
	var o pipeline.Options
	if opts != nil {
		o = opts(f)
	}
	p, err := pipeline.New(f, cpu.New(), o)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); f.Close() })
	return p
}

// emuDevice is the Metal emulator with the given limits (0: none), skipping only without clang.
func emuDevice(t *testing.T, maxBuffer, workingSet int64) device.Device {
	t.Helper()
	return testdevice.Device(t, emu.Options{Limits: device.Limits{MaxBufferLength: maxBuffer, RecommendedMaxWorkingSetSize: workingSet}})
}

// onMetal is pipeline.Options running the DiT on dev.
func onMetal(dev device.Device) func(*cmf.File) pipeline.Options {
	return func(f *cmf.File) pipeline.Options {
		k := metal.Knobs{Guards: metal.DefaultGuards}
		return pipeline.Options{Denoiser: Denoiser(dev, f.Bytes(), qi21metal.Options{Knobs: &k})}
	}
}

// stagedRun runs a case from the reference's processor outputs and recorded noise (as
// TestGoldenPipelineStages does) and returns the latents after every step and the [0, 1] image.
func stagedRun(t *testing.T, p *pipeline.Pipeline, c *pipelinecase.Case) (steps [][]float32, image []float32) {
	t.Helper()
	h, w := c.Target()
	var vision []qwen3vl.VisionInput
	var vaeIn []*vae.Image
	if c.Has("te0_pixel_values") {
		vision = c.SplitVision(t, "te0")
		for k := range len(c.Shapes) - 1 {
			px, shape := c.Floats(t, fmt.Sprintf("vae_encode_input_%d", k))
			vaeIn = append(vaeIn, &vae.Image{C: shape[1], H: shape[3], W: shape[4], Pix: px})
		}
	}
	pos := encodeCase(t, p, c, "te0", c.Prompt, vision)
	var neg *pipeline.Conditioning
	if c.CFG > 1 {
		neg = encodeCase(t, p, c, "te1", c.Negative, c.SplitVisionIf(t, "te1"))
	}
	condLatents, condShapes, err := p.EncodeConditionImages(t.Context(), vaeIn)
	if err != nil {
		t.Fatal(err)
	}
	schedule, err := p.Schedule(c.Steps, nil, h*w)
	if err != nil {
		t.Fatal(err)
	}
	latents, err := p.Denoise(t.Context(), pipeline.DenoiseInput{Positive: pos, Negative: neg, CFG: c.CFG,
		CondLatents: condLatents, CondShapes: condShapes, H: h, W: w, Noise: c.RecordedNoise(t), Schedule: schedule},
		pipeline.DenoiseHooks{
			Step:   func(s pipeline.StepReport) { steps = append(steps, slices.Clone(s.Latents)) },
			Notice: func(s string) { t.Errorf("unexpected notice: %s", s) },
		})
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := p.Decode(t.Context(), latents, h, w)
	if err != nil {
		t.Fatal(err)
	}
	return steps, pipelinecase.ImageHWC(decoded)
}

// TestEmuGoldenPipelineOnMetal runs every pipeline_* case with the DiT on the emulated Metal device
// and compares every step's latents and the image with the CPU pipeline over the same file and
// with the reference.
func TestEmuGoldenPipelineOnMetal(t *testing.T) {
	dev := emuDevice(t, 0, 0)
	onCPU, onDev := q8Pipeline(t, nil), q8Pipeline(t, onMetal(dev))
	if n := onDev.DenoiserNotice(); !strings.Contains(n, "Metal") {
		t.Fatalf("the pipeline does not say the denoiser runs on Metal: %q", n)
	}
	for _, c := range pipelinecase.All(t) {
		t.Run(c.Name, func(t *testing.T) {
			cpuSteps, cpuImg := stagedRun(t, onCPU, c)
			devSteps, devImg := stagedRun(t, onDev, c)
			want, sshape := c.Floats(t, "steps_latents")
			per := sshape[2] * sshape[3]
			if len(devSteps) != c.Steps || len(cpuSteps) != c.Steps {
				t.Fatalf("%d and %d steps, the case has %d", len(devSteps), len(cpuSteps), c.Steps)
			}
			var vsCPU, vsRef, cpuVsRef float64
			for i := range devSteps {
				ref := want[i*per : (i+1)*per]
				vsCPU = max(vsCPU, pipelinecase.MaxAbs(t, "latents", devSteps[i], cpuSteps[i]))
				vsRef = max(vsRef, pipelinecase.MaxAbs(t, "latents", devSteps[i], ref))
				cpuVsRef = max(cpuVsRef, pipelinecase.MaxAbs(t, "latents", cpuSteps[i], ref))
			}
			imgWant, _ := c.Floats(t, "image_np")
			iCPU, iRef, iCPURef := pipelinecase.MaxAbs(t, "image", devImg, cpuImg), pipelinecase.MaxAbs(t, "image", devImg, imgWant), pipelinecase.MaxAbs(t, "image", cpuImg, imgWant)
			t.Logf("%d steps, CFG %g: latents max |Δ| Metal vs CPU %.3g, Metal vs reference %.3g (CPU q8 vs reference %.3g); image Metal vs CPU %.3g, Metal vs reference %.3g (CPU q8 vs reference %.3g)",
				c.Steps, c.CFG, vsCPU, vsRef, cpuVsRef, iCPU, iRef, iCPURef)
			if !(vsCPU <= metalVsCPUBound) || !(iCPU <= metalVsCPUBound) {
				t.Errorf("Metal vs CPU over the same file: latents %.3g, image %.3g; want ≤ %g", vsCPU, iCPU, metalVsCPUBound)
			}
			if !(vsRef <= metalVsRefBound) || !(iRef <= metalVsRefBound) {
				t.Errorf("Metal vs the reference: latents %.3g, image %.3g; want ≤ %g", vsRef, iRef, metalVsRefBound)
			}
			if vsCPU == 0 {
				t.Errorf("the Metal pipeline gave the CPU pipeline's latents bit for bit: the DiT did not run on the device")
			}
		})
	}
}

// TestEmuMetalDeclineFallsBackToCPU runs a case on a device whose working set holds the weights but
// not the prompt: every prompt falls back to the CPU, the run reports why as a notice event, the
// ledger counts float32 K/V, and the result is the CPU pipeline's exactly. A device with room
// keeps the prompt: half K/V in the ledger, the device's working set as the budget.
func TestEmuMetalDeclineFallsBackToCPU(t *testing.T) {
	req := behaviourRequest(t, 0)
	want, err := q8Pipeline(t, nil).Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}

	probe := emuDevice(t, 0, 0)
	f, err := cmf.Open(tinymodel.Path(t, convert.Options{Profile: convert.ProfileQ8}))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := qi21.Load(f, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	d, err := qi21metal.New(probe, m, f.Bytes(), qi21metal.Options{Knobs: &metal.Knobs{Guards: metal.DefaultGuards}})
	if err != nil {
		t.Fatal(err)
	}
	weights := d.Resident()
	d.Close()

	for _, room := range []bool{false, true} {
		ws := int64(8 << 30)
		if !room {
			ws = weights + 1
		}
		p := q8Pipeline(t, onMetal(emuDevice(t, 1<<30, ws)))
		events := make(chan pipeline.Event, 1024)
		got, err := p.Run(t.Context(), req, events)
		if err != nil {
			t.Fatal(err)
		}
		var notices []string
		var kv []int64
		var budget, acts int64
		var devTime time.Duration
		for ev := range events {
			if ev.Notice != "" {
				notices = append(notices, ev.Notice)
			}
			if ev.Stage == pipeline.StageDenoising && ev.Step > 0 {
				kv, budget, acts, devTime = ev.Memory.PrefixKV, ev.Memory.DeviceBudget, ev.Memory.Activations, ev.DeviceTime
			}
		}
		t.Logf("room %v: notices %q; prefix K/V %v bytes, activations %d, budget %d", room, notices, kv, acts, budget)
		declines := 0
		for _, n := range notices {
			if strings.Contains(n, "Metal declined a prompt") && strings.Contains(n, "the CPU runs it instead") {
				declines++
			}
		}
		if budget != ws {
			t.Errorf("room %v: the ledger's device budget is %d, the device's working set %d", room, budget, ws)
		}
		cpuKV := want.Memory.PrefixKV
		if len(kv) != 2 || len(cpuKV) != 2 {
			t.Fatalf("room %v: %d programs in the ledger (%d on the CPU), want 2 (CFG)", room, len(kv), len(cpuKV))
		}
		if room {
			if declines != 0 {
				t.Errorf("with room: %d declines", declines)
			}
			if devTime <= 0 {
				t.Errorf("with room: the events report no device time")
			}
			if !slices.Equal(kv, cpuKV) {
				t.Errorf("with room: prefix K/V %v bytes, the CPU's %v: want the same (both keep half)", kv, cpuKV)
			}
			// Each program owns its activation buffers on the device.
			perRow := int64(m.Config.Layers) * 2 * int64(m.Config.Hidden()) * 2
			T := got.Width / 16 * got.Height / 16
			if wantActs := d.ActivationBytes(int(kv[0]/perRow), T) + d.ActivationBytes(int(kv[1]/perRow), T); acts != wantActs {
				t.Errorf("with room: activations %d bytes in the ledger, the device's two programs hold %d", acts, wantActs)
			}
			if e := golden.MaxAbsErr(got.Latents, want.Latents); e == 0 || e > metalVsCPUBound {
				t.Errorf("on the device: final latents max |Δ| %.3g from the CPU's, want in (0, %g]", e, metalVsCPUBound)
			}
			continue
		}
		if declines != 2 {
			t.Errorf("without room: %d decline notices, want one per prompt (2): %q", declines, notices)
		}
		if devTime != 0 {
			t.Errorf("without room: %v of device time reported, but nothing ran on the device", devTime)
		}
		if !slices.Equal(kv, cpuKV) || acts != want.Memory.Activations {
			t.Errorf("without room: prefix K/V %v bytes and activations %d, want the CPU's %v and %d", kv, acts, cpuKV, want.Memory.Activations)
		}
		if !slices.Equal(got.Latents, want.Latents) || !slices.Equal(got.Image.Pix, want.Image.Pix) {
			t.Errorf("after the fallback the result differs from the CPU pipeline's (latents max |Δ| %.3g)", golden.MaxAbsErr(got.Latents, want.Latents))
		}
	}
}

// TestEmuMetalDeclinedModelRunsOnCPU: the f16 file's bf16 block weights are not a codec the kernels
// read, so the device declines the model at New, the pipeline says so and runs on the CPU.
func TestEmuMetalDeclinedModelRunsOnCPU(t *testing.T) {
	dev := emuDevice(t, 0, 0)
	f, err := cmf.Open(tinyModel(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := pipeline.New(f, cpu.New(), onMetal(dev)(f))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	n := p.DenoiserNotice()
	t.Logf("notice: %s", n)
	if !strings.HasPrefix(n, "Metal declined the denoiser: ") || !strings.Contains(n, "the CPU runs it instead") || !strings.Contains(n, "q8") {
		t.Errorf("notice %q does not say Metal declined, why, and that the CPU runs it", n)
	}
	if d := p.DenoiserDevice(); d != "" {
		t.Errorf("the denoiser runs on %s, want the CPU fallback", d)
	}
}

// TestEmuMetalCancelReleasesPrograms cancels a CFG run on the emulated device after its first step:
// the error wraps context.Canceled, and the next run succeeds (both device programs were
// released; a leaked one would leave no room for the next prompt pair).
func TestEmuMetalCancelReleasesPrograms(t *testing.T) {
	p := q8Pipeline(t, onMetal(emuDevice(t, 0, 0)))
	req := behaviourRequest(t, 0)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	events := make(chan pipeline.Event, 1024)
	go func() {
		for ev := range events {
			if ev.Stage == pipeline.StageDenoising && ev.Step == 1 {
				cancel()
			}
		}
	}()
	_, err := p.Run(ctx, req, events)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled run: %v, want context.Canceled", err)
	}
	t.Logf("cancelled: %v", err)
	if _, err := p.Run(t.Context(), req, nil); err != nil {
		t.Fatalf("the run after a cancelled one: %v", err)
	}
}
