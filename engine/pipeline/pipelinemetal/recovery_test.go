package pipelinemetal

import (
	"context"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/qi21"
	"easel/engine/qi21/qi21metal"
	"easel/internal/pipelinecase"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// faultAtFirstStep wraps a placed denoiser so that fault is injected into the device just before
// the run's first step (after the prefills), or just before the first prefill with atPrefill.
// work, when set, makes the fault a GEMM-work watchdog sized from the program's target rows.
type faultAtFirstStep struct {
	pipeline.Denoiser
	inj       emu.FaultInjector
	fault     emu.Fault
	atPrefill bool
	work      func(target int) int64
	done      bool
}

func (f *faultAtFirstStep) inject(target int) {
	if f.done {
		return
	}
	f.done = true
	if f.work != nil {
		f.fault.Work = f.work(target)
	}
	f.inj.InjectFault(f.fault)
}

func (f *faultAtFirstStep) Prefill(ctx context.Context, lay *qi21.Layout, text, cond []float32) (pipeline.Program, error) {
	if f.atPrefill {
		f.inject(lay.T)
	}
	return f.Denoiser.Prefill(ctx, lay, text, cond)
}

func (f *faultAtFirstStep) Step(ctx context.Context, p pipeline.Program, x []float32, sigma float32) ([]float32, error) {
	f.inject(p.Layout().T)
	return f.Denoiser.Step(ctx, p, x, sigma)
}

// faultedPipeline is the q8 tiny model's pipeline with the DiT on a new emulated device into which
// fault is injected before the run's first step (or first prefill, atPrefill); with gemmWork the
// fault is a watchdog on GEMM work that stops a command buffer holding a whole q|k|v or gate|up
// GEMM of the step (so one block per buffer is too long). policy keeps the command-buffer levels.
func faultedPipeline(t *testing.T, fault emu.Fault, atPrefill, gemmWork bool, policy *metal.DevicePolicy) (*pipeline.Pipeline, emu.FaultInjector) {
	t.Helper()
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	inj := testdevice.Faults(t, dev)
	p := q8Pipeline(t, func(f *cmf.File) pipeline.Options {
		k := metal.Knobs{Guards: metal.DefaultGuards}
		place := Denoiser(dev, f.Bytes(), qi21metal.Options{Knobs: &k, Policy: policy})
		return pipeline.Options{Denoiser: func(s pipeline.Site, m *qi21.Model) (pipeline.Denoiser, pipeline.Placement, error) {
			d, pl, err := place(s, m)
			w := &faultAtFirstStep{Denoiser: d, inj: inj, fault: fault, atPrefill: atPrefill, done: fault.Kind == emu.NoFault}
			if gemmWork {
				D, F := int64(m.Config.Hidden()), int64(m.Config.MLPHidden())
				w.work = func(target int) int64 { return int64(target)*max(3*D*D, 2*F*D) - 1 }
			}
			return w, pl, err
		}}
	})
	return p, inj
}

// TestEmuRecoveriesReachTheRunAsNotices: with a fault injected into the emulated device during a
// run (CFG: two programs, every step twice), the run's events carry exactly one notice of the
// recovery's kind, with its record (Event.Recovery, Result.Recoveries), and the image is the
// unfaulted Metal run's bit for bit (watchdog, out-of-memory: the same arithmetic), within the
// Metal-vs-CPU bound of the CPU pipeline's (overflow: wider guards), or the CPU pipeline's exactly
// (a step the guards cannot fix moves the run to the CPU, the prompts prefilled again there).
func TestEmuRecoveriesReachTheRunAsNotices(t *testing.T) {
	req := behaviourRequest(t, 0)
	req.Width, req.Height = 64, 64
	cpuRes, _ := runCollecting(t, q8Pipeline(t, nil), req)

	cases := []struct {
		name      string
		fault     emu.Fault
		atPrefill bool
		gemmWork  bool
		want      pipeline.RecoveryKind
		exact     bool // bit for bit the unfaulted Metal run (else: see want)
		says      string
	}{
		{name: "clean"},
		{name: "overflow", fault: emu.Fault{Kind: emu.Overflow}, atPrefill: true, want: pipeline.RecoveryOverflow, says: "overflowed"},
		{name: "watchdog", fault: emu.Fault{Kind: emu.Watchdog}, want: pipeline.RecoveryTimeout, exact: true, says: "one transformer block per command buffer"},
		{name: "watchdog on long GEMMs", fault: emu.Fault{Kind: emu.Watchdog}, gemmWork: true, want: pipeline.RecoveryTimeout, exact: true, says: "split into 4 command buffers"},
		{name: "oom", fault: emu.Fault{Kind: emu.OOM, Count: 1}, want: pipeline.RecoveryOutOfMemory, exact: true, says: "released cached buffers"},
		{name: "overflow the guards cannot fix", fault: emu.Fault{Kind: emu.Overflow, HalfMax: 1e-6}, want: pipeline.RecoveryToCPU, says: "the rest of this run is on the CPU"},
	}
	var clean *pipeline.Result
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// a policy of its own, so no other test's remembered level hides the watchdog
			p, inj := faultedPipeline(t, c.fault, c.atPrefill, c.gemmWork, &metal.DevicePolicy{})
			res, events := runCollecting(t, p, req)
			var recs []pipeline.Event
			for _, ev := range events {
				if ev.Notice == "" {
					continue
				}
				t.Logf("notice at %s step %d: %s", ev.Stage, ev.Step, ev.Notice)
				if ev.Recovery != nil {
					recs = append(recs, ev)
				} else if !strings.Contains(ev.Notice, "runs on Metal") {
					t.Errorf("an unexpected notice: %s", ev.Notice)
				}
			}
			t.Logf("fault fired %d times; recoveries %+v", inj.FaultsFired(), res.Recoveries)
			if c.want == "" {
				if len(recs) != 0 || len(res.Recoveries) != 0 {
					t.Fatalf("an unfaulted run reported recoveries: %+v", res.Recoveries)
				}
				clean = res
				return
			}
			if inj.FaultsFired() == 0 {
				t.Fatalf("the fault never fired")
			}
			if len(recs) != 1 || recs[0].Recovery.Kind != c.want || recs[0].Notice != recs[0].Recovery.Notice || !strings.Contains(recs[0].Notice, c.says) {
				t.Fatalf("want exactly one %s notice saying %q, got %d recovery notices", c.want, c.says, len(recs))
			}
			if len(res.Recoveries) != 1 || res.Recoveries[0].Kind != c.want || res.Recoveries[0].Count < 1 {
				t.Errorf("Result.Recoveries = %+v, want one %s", res.Recoveries, c.want)
			}
			switch {
			case c.exact:
				if clean == nil {
					t.Fatal("the unfaulted run did not run first")
				}
				if d := pipelinecase.MaxAbs(t, "latents", res.Latents, clean.Latents); d != 0 {
					t.Errorf("latents differ from the unfaulted Metal run by %.3g, want bit for bit", d)
				}
			case c.want == pipeline.RecoveryToCPU:
				if d := pipelinecase.MaxAbs(t, "latents", res.Latents, cpuRes.Latents); d != 0 {
					t.Errorf("latents differ from the CPU pipeline's by %.3g, want exactly its own", d)
				}
			default:
				lat := pipelinecase.MaxAbs(t, "latents", res.Latents, cpuRes.Latents)
				img := pipelinecase.MaxAbs(t, "image", pipelinecase.ImageHWC(res.Decoded), pipelinecase.ImageHWC(cpuRes.Decoded))
				t.Logf("vs the CPU pipeline: latents %.3g, image %.3g", lat, img)
				if !(lat <= metalVsCPUBound) || !(img <= metalVsCPUBound) {
					t.Errorf("vs the CPU pipeline: latents %.3g, image %.3g; want ≤ %g", lat, img, metalVsCPUBound)
				}
			}
		})
	}
}

// TestEmuWatchdogLevelIsRememberedAcrossProcesses: a run whose GEMMs the emulated watchdog stops
// remembers the level that passed (GEMMs in row chunks) in a folder; a fresh policy over the same
// folder (the next process) starts there: its run meets the same watchdog without a stop, a
// retry or a notice, and gives the same latents bit for bit.
func TestEmuWatchdogLevelIsRememberedAcrossProcesses(t *testing.T) {
	req := behaviourRequest(t, 0)
	req.Width, req.Height = 64, 64
	dir := t.TempDir()
	persisted := func() *metal.DevicePolicy {
		p := &metal.DevicePolicy{}
		p.Persist(dir, "test-build", "test-version")
		return p
	}
	fault := emu.Fault{Kind: emu.Watchdog}
	p1, inj1 := faultedPipeline(t, fault, false, true, persisted())
	first, events := runCollecting(t, p1, req)
	recovered := 0
	for _, ev := range events {
		if ev.Recovery != nil && ev.Recovery.Kind == pipeline.RecoveryTimeout {
			recovered++
		}
	}
	if inj1.FaultsFired() == 0 || recovered != 1 {
		t.Fatalf("first process: the watchdog fired %d times, %d timeout notices; want it to stop a buffer and one notice", inj1.FaultsFired(), recovered)
	}

	p2, inj2 := faultedPipeline(t, fault, false, true, persisted())
	second, events := runCollecting(t, p2, req)
	for _, ev := range events {
		if ev.Recovery != nil {
			t.Errorf("second process: a recovery notice: %s", ev.Notice)
		}
	}
	if inj2.FaultsFired() != 0 || len(second.Recoveries) != 0 {
		t.Errorf("second process: the watchdog fired %d times (recoveries %+v); want it to start at the remembered level", inj2.FaultsFired(), second.Recoveries)
	}
	if d := pipelinecase.MaxAbs(t, "latents", second.Latents, first.Latents); d != 0 {
		t.Errorf("second process: latents differ from the first's by %.3g, want bit for bit", d)
	}
}

// TestEmuVAERecoveryReachesTheRun: the VAE on the emulated device meets one out-of-memory command
// buffer in its decode; the call runs again, the run's events carry exactly one notice of it, and
// the image is the unfaulted device decode's bit for bit.
func TestEmuVAERecoveryReachesTheRun(t *testing.T) {
	req := behaviourRequest(t, 0)
	req.Width, req.Height = 64, 64
	run := func(fault emu.Fault) (*pipeline.Result, []pipeline.Event, int) {
		dev := testdevice.Device(t, emu.Options{Fault: &fault})
		inj := testdevice.Faults(t, dev)
		p := q8Pipeline(t, func(f *cmf.File) pipeline.Options { return pipeline.Options{VAE: VAE(dev, f.Bytes())} })
		res, events := runCollecting(t, p, req)
		var recs []pipeline.Event
		for _, ev := range events {
			if ev.Recovery != nil {
				t.Logf("notice at %s: %s", ev.Stage, ev.Notice)
				recs = append(recs, ev)
			}
		}
		return res, recs, inj.FaultsFired()
	}
	clean, recs, _ := run(emu.Fault{})
	if len(recs) != 0 {
		t.Fatalf("the unfaulted run reported %d recoveries", len(recs))
	}
	got, recs, fired := run(emu.Fault{Kind: emu.OOM, Count: 1})
	if fired != 1 || len(recs) != 1 || recs[0].Recovery.Kind != pipeline.RecoveryOutOfMemory || recs[0].Stage != pipeline.StageDecoding ||
		!strings.HasPrefix(recs[0].Notice, "The VAE on Metal: the GPU ran out of memory") {
		t.Fatalf("fault fired %d times, %d recovery notices: want one out-of-memory notice from the VAE's decode", fired, len(recs))
	}
	if len(got.Recoveries) != 1 || got.Recoveries[0].Network != "the VAE" {
		t.Errorf("Result.Recoveries = %+v", got.Recoveries)
	}
	if d := pipelinecase.MaxAbs(t, "image", pipelinecase.ImageHWC(got.Decoded), pipelinecase.ImageHWC(clean.Decoded)); d != 0 {
		t.Errorf("the image differs from the unfaulted device decode's by %.3g, want bit for bit", d)
	}
}
