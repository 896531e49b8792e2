package progress

import (
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/engine/ml"
	"easel/engine/pipeline"
)

// The achieved rate is the counted flops over the kernel time: per class, for the run, and for
// the last step (what that step added), from events as the pipeline sends them (cumulative).
func TestAchievedTFLOPsFromEvents(t *testing.T) {
	test.NewTempApp(t)
	p := NewTimingPanel(170)
	p.StartRun()
	timings := func(gemmS, gemmTF, attnS, attnTF, normS float64) [ml.NumClasses]ml.ClassTime {
		var t [ml.NumClasses]ml.ClassTime
		t[ml.ClassGemm] = ml.ClassTime{Time: time.Duration(gemmS * float64(time.Second)), Flops: gemmTF * 1e12}
		t[ml.ClassAttn] = ml.ClassTime{Time: time.Duration(attnS * float64(time.Second)), Flops: attnTF * 1e12}
		t[ml.ClassNorm] = ml.ClassTime{Time: time.Duration(normS * float64(time.Second))}
		return t
	}
	for _, ev := range []pipeline.Event{
		// Prefill: 2 TFLOP in 4 s of kernels; it is not a step.
		{Stage: pipeline.StagePrefill, Elapsed: 5 * time.Second, Timings: timings(3, 1.5, 0.5, 0.5, 0.5)},
		{Stage: pipeline.StageDenoising, Step: 0, Elapsed: 6 * time.Second, Timings: timings(3, 1.5, 0.5, 0.5, 0.5)},
		// Step 1 adds 0.24 TFLOP in 6 s: 0.04 TFLOP/s.
		{Stage: pipeline.StageDenoising, Step: 1, Elapsed: 12 * time.Second, Timings: timings(7, 1.7, 2, 0.54, 1)},
		// Step 2 adds 1.2 TFLOP in 4 s: 0.3 TFLOP/s.
		{Stage: pipeline.StageDenoising, Step: 2, Elapsed: 16 * time.Second, Timings: timings(10, 2.7, 3, 0.74, 1)},
	} {
		p.show(ev.Timings)
		p.Observe(ev)
		if ev.Step == 1 {
			if got, want := p.total.Text, "10.0 s in kernels so far · 0.22 TFLOP/s achieved (last step 0.04 TFLOP/s)."; got != want {
				t.Errorf("after step 1: %q, want %q", got, want)
			}
		}
	}
	// The run: 3.44 TFLOP in 14 s.
	if got, want := p.total.Text, "14.0 s in kernels so far · 0.25 TFLOP/s achieved (last step 0.3 TFLOP/s)."; got != want {
		t.Errorf("total %q, want %q", got, want)
	}
	if got, want := p.Texts[ml.ClassGemm], "10.0 s · 71 % · 0.27 TFLOP/s"; got != want {
		t.Errorf("gemm %q, want %q", got, want)
	}
	if got, want := p.Texts[ml.ClassNorm], "1.0 s · 7 %"; got != want {
		t.Errorf("norm (no flops counted) %q, want %q", got, want)
	}
	// A backend that counts no flops shows times only.
	p.StartRun()
	p.show(timings(2, 0, 1, 0, 1))
	if got, want := p.total.Text, "4.0 s in kernels so far."; got != want {
		t.Errorf("without flops %q, want %q", got, want)
	}
	if got := rateText(2e13, time.Second); got != "20.0 TFLOP/s" {
		t.Errorf("rateText(20 TFLOP/s) = %q", got)
	}
}

// The GPU time per stage shows the stages that ran on a device, and nothing without one.
func TestDeviceTimePerStage(t *testing.T) {
	var stages [len(pipeline.Event{}.StageDeviceTimes)]time.Duration
	if got := deviceStageText(stages); got != "" {
		t.Errorf("nothing on a device: %q, want empty", got)
	}
	stages[pipeline.StagePrefill] = 1200 * time.Millisecond
	stages[pipeline.StageDenoising] = 10300 * time.Millisecond
	stages[pipeline.StageDecoding] = 400 * time.Millisecond
	if got, want := deviceStageText(stages), "GPU time: prefill 1.2 s · denoising 10.3 s · decoding 0.4 s."; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// The per-class panel's title says where the denoiser's kernels ran, from the run's events: the
// GPU once its prefill or steps have device time, the CPU once its prefill ended without any
// (whatever the text encoder did before it), unknown before.
func TestClassTitleFollowsWhereTheDenoiserRan(t *testing.T) {
	var dev [len(pipeline.Event{}.StageDeviceTimes)]time.Duration
	dev[pipeline.StageEncodingPrompt] = time.Second // the text encoder on the device
	onDeviceNow := dev
	for _, c := range []struct {
		name string
		ev   pipeline.Event
		want string
	}{
		{"text encoder on the device, denoiser not started", pipeline.Event{Stage: pipeline.StageEncodingPrompt, DeviceTime: time.Second}, ""},
		{"prefill running on the device", pipeline.Event{Stage: pipeline.StagePrefill, DeviceTime: 3 * time.Second, StageDeviceTimes: onDeviceNow}, "GPU time by kernel class"},
		{"prefill running on the CPU after a device text encoder", pipeline.Event{Stage: pipeline.StagePrefill, DeviceTime: time.Second, StageDeviceTimes: dev}, ""},
		{"steps on the CPU after a device text encoder", pipeline.Event{Stage: pipeline.StageDenoising, Step: 1, DeviceTime: time.Second, StageDeviceTimes: dev}, "CPU time by kernel class"},
		{"CPU backend", pipeline.Event{Stage: pipeline.StageDecoding}, "CPU time by kernel class"},
		{"steps on the device", pipeline.Event{Stage: pipeline.StageDecoding, StageDeviceTimes: func() [len(dev)]time.Duration {
			d := dev
			d[pipeline.StagePrefill], d[pipeline.StageDenoising] = time.Second, 9*time.Second
			return d
		}()}, "GPU time by kernel class"},
	} {
		if got := classTitle(c.ev); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// With the denoiser on the device, the per-class bars show the devices' GPU time per class in
// every mode, and the title says how it was measured; a finished job's result does the same.
// With the denoiser on the CPU the bars stay the backend's.
func TestGPUTimePerClassShowsItsSource(t *testing.T) {
	test.NewTempApp(t)
	p := NewTimingPanel(170)
	p.StartRun()
	var cpuT [ml.NumClasses]ml.ClassTime
	cpuT[ml.ClassNorm].Time = 500 * time.Millisecond
	var gpu ml.GPUClasses
	gpu.Add([ml.NumClasses]time.Duration{ml.ClassGemm: 3 * time.Second, ml.ClassAttn: time.Second}, ml.TimeSampled)
	var dev [len(pipeline.Event{}.StageDeviceTimes)]time.Duration
	ev := pipeline.Event{Stage: pipeline.StagePrefill, DeviceTime: 4 * time.Second, StageDeviceTimes: dev, Timings: cpuT, GPUClasses: gpu}
	p.ShowRun(ev.Timings, ev.GPUClasses, DenoiserTitle(ev) == GPUTitle)
	p.Observe(ev)
	if got, want := p.title.Text, "GPU time by kernel class (sampled)"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	if got, want := p.Texts[ml.ClassGemm], "3.0 s · 75 %"; got != want {
		t.Errorf("gemm %q, want %q (the GPU's)", got, want)
	}
	if got, want := p.Texts[ml.ClassNorm], "0.0 s · 0 %"; got != want {
		t.Errorf("norm %q, want %q (the CPU's time is not mixed into the GPU's)", got, want)
	}

	var est ml.GPUClasses
	est.Add([ml.NumClasses]time.Duration{ml.ClassGemm: time.Second}, ml.TimeEstimated)
	dev[pipeline.StageDenoising] = time.Second
	p.StartRun()
	p.ShowResult(&pipeline.Result{Timings: cpuT, GPUClasses: est, StageDeviceTimes: dev})
	if got, want := p.title.Text, "GPU time by kernel class (estimated split)"; got != want {
		t.Errorf("finished job's title %q, want %q", got, want)
	}

	p.StartRun()
	cpuEv := pipeline.Event{Stage: pipeline.StageDecoding, Timings: cpuT}
	p.ShowRun(cpuEv.Timings, cpuEv.GPUClasses, DenoiserTitle(cpuEv) == GPUTitle)
	p.Observe(cpuEv)
	if got, want := p.title.Text, "CPU time by kernel class"; got != want || p.Texts[ml.ClassNorm] != "0.5 s · 100 %" {
		t.Errorf("CPU run: title %q, norm %q", got, p.Texts[ml.ClassNorm])
	}
}
