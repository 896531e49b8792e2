package pipelinemetal

import (
	"errors"
	"os"
	"slices"
	"sync"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
	"easel/engine/qi21"
	"easel/engine/qwen3vl"
	"easel/engine/vae"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/device"
)

// The Metal denoiser holds its weight arena (no-copy buffers over the mapping) only while it runs.

// countingDevice is a device that counts its live buffers (the emulator).
type countingDevice interface {
	device.Device
	LiveBuffers() (buffers int, bytes int64)
	LiveNoCopyBuffers() (buffers int, bytes int64)
}

// keepWeights hides a device denoiser's ReleaseWeights, so its arena, once the first prefill
// makes it, stays for the pipeline's life: the reference a releasing pipeline must match.
type keepWeights struct{ pipeline.Denoiser }

// ReleaseWeights keeps the arena and says there is nothing to release, as a denoiser without
// device weights does.
func (keepWeights) ReleaseWeights() bool { return true }

// heldDuringCalls records, at each text-encoder and VAE call's device check (the moment before
// the call makes its own arena), how many bytes of the mapping the device wraps and what the
// denoiser reports holding.
type heldDuringCalls struct {
	mu    sync.Mutex
	calls []heldAtCall
}

type heldAtCall struct {
	network         string
	noCopy, denoise int64
}

// watch hooks the device text encoder's and VAE's check for the other networks' memory (the
// Site.Others the pipeline gives their placements) in o.
func (h *heldDuringCalls) watch(o pipeline.Options, dev countingDevice) pipeline.Options {
	record := func(network string, others func() int64) func() int64 {
		return func() int64 {
			_, b := dev.LiveNoCopyBuffers()
			r := others()
			h.mu.Lock()
			h.calls = append(h.calls, heldAtCall{network, b, r})
			h.mu.Unlock()
			return r
		}
	}
	placeVAE, placeText := o.VAE, o.TextEncoder
	o.VAE = func(s pipeline.Site, cpu *vae.Model) (pipeline.VAE, pipeline.Placement, error) {
		s.Others = record("VAE", s.Others)
		return placeVAE(s, cpu)
	}
	o.TextEncoder = func(s pipeline.Site, cpu *qwen3vl.Encoder) (pipeline.TextEncoder, pipeline.Placement, error) {
		s.Others = record("text encoder", s.Others)
		return placeText(s, cpu)
	}
	return o
}

func (h *heldDuringCalls) take() []heldAtCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls
	h.calls = nil
	return c
}

// TestEmuMetalDenoiserReleasesItsWeightsForTheOtherStages runs an editing case twice through one
// pipeline with every network on the emulated device: at every text-encoder and VAE call
// (prompts, condition images, the decode) the device wraps no byte of the mapping (the
// denoiser's arena is released, the call's own not yet made) and the denoiser reports only its
// auxiliary weights, which is what the calls' checks count; the denoiser ran on the device both
// times, and both jobs give the latents and image of a pipeline whose denoiser keeps its arena,
// bit for bit. That pipeline's calls in its second job do see the arena (the check can fail).
func TestEmuMetalDenoiserReleasesItsWeightsForTheOtherStages(t *testing.T) {
	req := behaviourRequest(t, 2)
	devices := [2]countingDevice{}
	for i := range devices {
		testdevice.EmulatorOnly(t, "live-buffer counts")
		d, ok := emuDevice(t, 0, 0).(countingDevice)
		if !ok {
			t.Fatal("the emulated device does not count its buffers")
		}
		devices[i] = d
	}
	var onRel, onKeep heldDuringCalls
	var placed pipeline.Placement
	releasing := q8Pipeline(t, func(f *cmf.File) pipeline.Options {
		o := onMetalAll(devices[0])(f)
		o.Denoiser = capture(o.Denoiser, &placed)
		return onRel.watch(o, devices[0])
	})
	keeping := q8Pipeline(t, func(f *cmf.File) pipeline.Options {
		o := onMetalAll(devices[1])(f)
		den := o.Denoiser
		o.Denoiser = func(s pipeline.Site, m *qi21.Model) (pipeline.Denoiser, pipeline.Placement, error) {
			d, pl, err := den(s, m)
			return keepWeights{d}, pl, err
		}
		return onKeep.watch(o, devices[1])
	})
	if placed.Device == "" || placed.Resident == nil || releasing.VAENotice() == "" || releasing.TextEncoderNotice() == "" {
		t.Fatalf("the networks do not all run on the device: %q, %q, %q", releasing.DenoiserNotice(), releasing.VAENotice(), releasing.TextEncoderNotice())
	}
	between := placed.Resident()
	if n, b := devices[0].LiveNoCopyBuffers(); n != 0 || b != 0 {
		t.Fatalf("a new pipeline's device wraps %d bytes of the mapping in %d buffers", b, n)
	}

	var arenaSeen bool
	for job := 1; job <= 2; job++ {
		got, err := releasing.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatalf("job %d: %v", job, err)
		}
		want, err := keeping.Run(t.Context(), req, nil)
		if err != nil {
			t.Fatalf("job %d, the denoiser keeping its arena: %v", job, err)
		}
		if got.StageDeviceTimes[pipeline.StageDenoising] <= 0 || got.StageDeviceTimes[pipeline.StagePrefill] <= 0 {
			t.Errorf("job %d: no device time in prefill (%v) or denoising (%v): the denoiser did not run on the device",
				job, got.StageDeviceTimes[pipeline.StagePrefill], got.StageDeviceTimes[pipeline.StageDenoising])
		}
		if !slices.Equal(got.Latents, want.Latents) || !slices.Equal(got.Image.Pix, want.Image.Pix) {
			t.Errorf("job %d: latents equal %v, image equal %v to the pipeline whose denoiser keeps its arena; want both bit for bit",
				job, slices.Equal(got.Latents, want.Latents), slices.Equal(got.Image.Pix, want.Image.Pix))
		}
		calls := onRel.take()
		seen := map[string]int{}
		for _, call := range calls {
			seen[call.network]++
			if call.noCopy != 0 || call.denoise != between {
				t.Errorf("job %d: at a %s call the device wraps %d bytes of the mapping and the denoiser reports %d; want 0 and %d (its auxiliary weights)",
					job, call.network, call.noCopy, call.denoise, between)
			}
		}
		t.Logf("job %d: %v device checks; the denoiser holds %d bytes between runs", job, seen, between)
		if seen["text encoder"] < 1 || seen["VAE"] < 2 {
			t.Errorf("job %d: %d text-encoder and %d VAE device checks; want a prompt's and a condition image's encode and the decode", job, seen["text encoder"], seen["VAE"])
		}
		if n, b := devices[0].LiveNoCopyBuffers(); n != 0 || b != 0 {
			t.Errorf("after job %d the device wraps %d bytes of the mapping in %d buffers", job, b, n)
		}
		for _, call := range onKeep.take() {
			arenaSeen = arenaSeen || (job == 2 && call.noCopy > 0)
		}
	}
	if !arenaSeen {
		t.Error("the pipeline whose denoiser keeps its arena showed no arena at the other calls of its second job: the check cannot tell")
	}
}

// TestEmuMetalTruncatedFileBetweenJobs: a job runs with the denoiser on the emulated device, the
// model file is truncated, the next job fails with the typed fault naming the file and leaves
// nothing wrapped over the mapping; once the file is back the pipeline's next job gives the first
// job's latents bit for bit (the arena made again over the same mapping).
func TestEmuMetalTruncatedFileBetweenJobs(t *testing.T) {
	req := behaviourRequest(t, 0)
	path := tinymodel.Copy(t, convert.Options{Profile: convert.ProfileQ8})
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	testdevice.EmulatorOnly(t, "live-buffer counts")
	dev, ok := emuDevice(t, 0, 0).(countingDevice)
	if !ok {
		t.Fatal("the emulated device does not count its buffers")
	}
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := pipeline.New(f, cpu.New(), onMetal(dev)(f))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.DenoiserDevice() == "" {
		t.Fatalf("the denoiser does not run on the emulated device: %q", p.DenoiserNotice())
	}
	first, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	const keep = 4096 // the envelope's first page: every weight lies beyond it
	if err := os.Truncate(path, keep); err != nil {
		t.Fatal(err)
	}
	_, err = p.Run(t.Context(), req, nil)
	var fault *mmapfile.FaultError
	var mfe *pipeline.ModelFileError
	if !errors.As(err, &fault) || !errors.As(err, &mfe) {
		t.Fatalf("the job on the truncated file: %v (%T), want a *pipeline.ModelFileError with the *mmapfile.FaultError", err, err)
	}
	if fault.Path != path || fault.Now != keep {
		t.Errorf("the fault names %s at %d bytes, want %s at %d", fault.Path, fault.Now, path, keep)
	}
	t.Logf("the job on the truncated file: %v", err)
	if n, b := dev.LiveNoCopyBuffers(); n != 0 || b != 0 {
		t.Errorf("after the failed job the device wraps %d bytes of the mapping in %d buffers", b, n)
	}
	if err := os.WriteFile(path, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := p.Run(t.Context(), req, nil)
	if err != nil {
		t.Fatalf("the job after the file is back: %v", err)
	}
	if again.StageDeviceTimes[pipeline.StageDenoising] <= 0 || !slices.Equal(again.Latents, first.Latents) {
		t.Errorf("after the file is back: denoising device time %v, latents equal to the first job's %v; want the device and bit for bit",
			again.StageDeviceTimes[pipeline.StageDenoising], slices.Equal(again.Latents, first.Latents))
	}
}
