package qi21metal

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"easel/engine/convert"
	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// faultRun is one prompt's prefill and step through a Runner on an emulated device with fault
// injected once the denoiser is made (before the prefill, or after it with afterPrefill), and what
// the run reported.
type faultRun struct {
	v        []float32
	onDevice bool
	notices  []string
	retries  []metal.Retry
	guards   metal.Guards
	fired    int
}

func runWithFault(t *testing.T, fault emu.Fault, afterPrefill bool, guards metal.Guards) faultRun {
	t.Helper()
	m, f := tinyModel(t, convert.ProfileCortiq)
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	inj := testdevice.Faults(t, dev)
	k := metal.Knobs{Guards: guards}
	var run faultRun
	logf := func(format string, args ...any) { run.notices = append(run.notices, fmt.Sprintf(format, args...)) }
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k, Logf: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if !afterPrefill {
		inj.InjectFault(fault)
	}
	r, err := NewRunner(d, m, func(dc *metal.Declined) { run.notices = append(run.notices, dc.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Prefill(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(p)
	if afterPrefill {
		inj.InjectFault(fault)
	}
	if run.v, err = r.Step(t.Context(), p, target, dc.midSigma()); err != nil {
		t.Fatal(err)
	}
	run.onDevice, run.retries, run.guards, run.fired = p.OnDevice(), d.Retries(), d.Guards(), inj.FaultsFired()
	for _, x := range run.retries {
		t.Logf("retry: %+v", x)
	}
	for _, n := range run.notices {
		t.Logf("notice: %s", n)
	}
	return run
}

// cpuStep is the CPU model's velocity for the same prompt and step.
func cpuStep(t *testing.T) []float32 {
	t.Helper()
	m, _ := tinyModel(t, convert.ProfileCortiq)
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	p, err := m.Prefill(t.Context(), lay, dc.text, cond)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release(p)
	v, err := m.Step(t.Context(), p, target, dc.midSigma())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func hasRetry(rs []metal.Retry, kind string) bool {
	for _, r := range rs {
		if r.Kind == kind {
			return true
		}
	}
	return false
}

// TestEmuOverflowIsCaughtAndRecovered: with half's range narrowed (the emulator's overflow fault)
// the watch finds where the overflow began, the pass runs again with that site's guard widened,
// and the velocity matches the CPU within the emulator's half bound — also from guards forced to
// 0; the widened guards stay for the denoiser's next prompts.
func TestEmuOverflowIsCaughtAndRecovered(t *testing.T) {
	want := cpuStep(t)
	for _, g := range []metal.Guards{metal.DefaultGuards, {}} {
		run := runWithFault(t, emu.Fault{Kind: emu.Overflow}, false, g)
		e := golden.RelErr(run.v, want)
		t.Logf("guards %v → %v: on device %v, relative error vs the CPU %.3g, fault fired %d times", g, run.guards, run.onDevice, e, run.fired)
		if run.fired == 0 || !hasRetry(run.retries, "overflow") {
			t.Fatalf("guards %v: the overflow was not caught (fired %d, retries %+v)", g, run.fired, run.retries)
		}
		if !run.onDevice || !metal.Finite(run.v) || e > halfBound {
			t.Errorf("guards %v: on device %v, finite %v, relative error %.3g > %g", g, run.onDevice, metal.Finite(run.v), e, halfBound)
		}
		if run.guards == g {
			t.Errorf("guards %v were not widened for the model", g)
		}
	}
}

// TestEmuOverflowTheGuardsCannotFixGoesToTheCPU: when even the widest guards overflow (half's
// range narrowed to 1e-6), the step declines with a sentence and the Runner finishes the prompt on
// the CPU: the CPU model's velocity exactly, never a NaN.
func TestEmuOverflowTheGuardsCannotFixGoesToTheCPU(t *testing.T) {
	want := cpuStep(t)
	run := runWithFault(t, emu.Fault{Kind: emu.Overflow, HalfMax: 1e-6}, true, metal.DefaultGuards)
	if run.onDevice || golden.RelErr(run.v, want) != 0 {
		t.Fatalf("on device %v, relative error %.3g: want the CPU's velocity exactly", run.onDevice, golden.RelErr(run.v, want))
	}
	found := false
	for _, n := range run.notices {
		found = found || strings.Contains(n, "overflowed")
	}
	if !found {
		t.Errorf("no notice says the half sites overflowed: %q", run.notices)
	}
}

// TestEmuWatchdogIsRetriedInShorterCommandBuffers: the emulated watchdog stops the two-block
// command buffers; the pass runs again with one block per buffer (remembered for the device) and
// gives the unfaulted run's velocity bit for bit.
func TestEmuWatchdogIsRetriedInShorterCommandBuffers(t *testing.T) {
	clean := runWithFault(t, emu.Fault{}, false, metal.DefaultGuards)
	run := runWithFault(t, emu.Fault{Kind: emu.Watchdog}, false, metal.DefaultGuards)
	if !run.onDevice || golden.RelErr(run.v, clean.v) != 0 {
		t.Fatalf("on device %v, relative difference to the unfaulted run %.3g, want 0", run.onDevice, golden.RelErr(run.v, clean.v))
	}
	if run.fired == 0 || !hasRetry(run.retries, device.ErrorTimeout.String()) {
		t.Errorf("the watchdog fired %d times, retries %+v: want a timeout retried", run.fired, run.retries)
	}
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{Kind: emu.Watchdog}})
	if l := metal.Policies.Level(dev.Name(), metal.ProgramDenoiser); l != 1 {
		t.Errorf("the device's command buffers were not shortened for later passes: level %d, want 1 (one block per buffer)", l)
	}
}

// TestEmuOutOfMemoryIsRetriedOrDeclined: one out-of-memory command buffer is retried once and
// gives the unfaulted velocity; a device that is always out of memory declines with a memory
// sentence and the CPU gives its own velocity.
func TestEmuOutOfMemoryIsRetriedOrDeclined(t *testing.T) {
	clean := runWithFault(t, emu.Fault{}, false, metal.DefaultGuards)
	once := runWithFault(t, emu.Fault{Kind: emu.OOM, Count: 1}, false, metal.DefaultGuards)
	if !once.onDevice || golden.RelErr(once.v, clean.v) != 0 || !hasRetry(once.retries, device.ErrorOutOfMemory.String()) {
		t.Errorf("one OOM: on device %v, difference %.3g, retries %+v", once.onDevice, golden.RelErr(once.v, clean.v), once.retries)
	}
	want := cpuStep(t)
	always := runWithFault(t, emu.Fault{Kind: emu.OOM}, true, metal.DefaultGuards)
	if always.onDevice || golden.RelErr(always.v, want) != 0 {
		t.Errorf("always OOM: on device %v, difference to the CPU %.3g", always.onDevice, golden.RelErr(always.v, want))
	}
	found := false
	for _, n := range always.notices {
		found = found || strings.Contains(n, "out of memory")
	}
	if !found {
		t.Errorf("no notice says the GPU ran out of memory: %q", always.notices)
	}
}

// TestEmuWatchdogOnLongGEMMsIsRetriedInChunks: an emulated watchdog that stops any command buffer
// whose GEMMs do more work than one whole GEMM of the step (so one block per buffer fails too)
// is met by splitting each block GEMM into row chunks, each in its own command buffer; the
// velocity is the unfaulted run's bit for bit, and the level is remembered for the device.
func TestEmuWatchdogOnLongGEMMsIsRetriedInChunks(t *testing.T) {
	m, _ := tinyModel(t, convert.ProfileCortiq)
	c := m.Config
	D, F, T := int64(c.Hidden()), int64(c.MLPHidden()), int64(fewestConditions(t).layout.T)
	// The largest GEMM dispatch of a step: q|k|v (3·D·D per row) or gate|up (2·F·D per row).
	work := T*max(3*D*D, 2*F*D) - 1
	fault := emu.Fault{Kind: emu.Watchdog, Work: work}
	clean := runWithFault(t, emu.Fault{}, false, metal.DefaultGuards)
	run := runWithFault(t, fault, true, metal.DefaultGuards)
	if !run.onDevice || golden.RelErr(run.v, clean.v) != 0 {
		t.Fatalf("on device %v, relative difference to the unfaulted run %.3g, want 0", run.onDevice, golden.RelErr(run.v, clean.v))
	}
	var timeouts []metal.Retry
	for _, r := range run.retries {
		if r.Kind == device.ErrorTimeout.String() {
			timeouts = append(timeouts, r)
		}
	}
	if run.fired < 2 || len(timeouts) != 2 || timeouts[0].OK || !timeouts[1].OK || !strings.Contains(timeouts[1].What, "split into 4") {
		t.Fatalf("the watchdog fired %d times, timeouts retried %+v: want one-block buffers to fail and 4 GEMM chunks to pass", run.fired, timeouts)
	}
	dev := testdevice.Device(t, emu.Options{Fault: &fault})
	if l := metal.Policies.Level(dev.Name(), metal.ProgramDenoiser); l != 2 {
		t.Errorf("level %d remembered for the device, want 2 (GEMMs in %d chunks)", l, metal.GemmChunks(2))
	}
}

// longPromptStep prefills a made-up prompt of 300 text rows (so the program's activation
// buffers are planned for the prefix, twice the target's) on a new emulated device, injects the
// fault made by fault (given the device's live buffer bytes after the prefill and the bytes a
// re-plan for the target's rows saves), and runs one step through a Runner.
func longPromptStep(t *testing.T, fault func(live, saving int64) emu.Fault) (faultRun, *qi21.Layout) {
	t.Helper()
	m, f := tinyModel(t, convert.ProfileCortiq)
	c := m.Config
	const L, h, w = 300, 4, 4
	mask := make([]bool, L+h*w/4)
	for i := L; i < len(mask); i++ {
		mask[i] = true
	}
	lay, err := qi21.NewLayout(mask, [][2]int{{h, w}})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	text := make([]float32, L*c.ContextDim)
	for i := range text {
		text[i] = float32(rng.NormFloat64())
	}
	x := make([]float32, lay.T*c.InChannels)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	inj := testdevice.Faults(t, dev)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	var run faultRun
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k, Logf: func(format string, args ...any) { run.notices = append(run.notices, fmt.Sprintf(format, args...)) }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r, err := NewRunner(d, m, func(dc *metal.Declined) { run.notices = append(run.notices, dc.Error()) })
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.Prefill(t.Context(), lay, text, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release(p)
	_, live := testdevice.LiveBuffers(t, dev)
	full, small := programPlan(c, lay.PrefixLen, lay.T), programPlan(c, lay.T, lay.T)
	saving := full[bufX:bufHidden+1].total() - small[bufX:bufHidden+1].total()
	inj.InjectFault(fault(live, saving))
	if run.v, err = r.Step(t.Context(), p, x, 0.5); err != nil {
		t.Fatal(err)
	}
	run.onDevice, run.retries, run.guards, run.fired = p.OnDevice(), d.Retries(), d.Guards(), inj.FaultsFired()
	for _, n := range run.notices {
		t.Logf("notice: %s", n)
	}
	return run, lay
}

// TestEmuOutOfMemoryRePlansTheStep: a GPU whose memory holds the program only once its
// activation buffers are planned for the step's rows (not the prefill's) runs out of memory in
// the step; the step re-plans them and passes on the retry with the unfaulted velocity bit for
// bit. A GPU with less room than that still declines, and the CPU runs the step.
func TestEmuOutOfMemoryRePlansTheStep(t *testing.T) {
	clean, lay := longPromptStep(t, func(live, saving int64) emu.Fault { return emu.Fault{} })
	if activationRows(lay.PrefixLen) <= activationRows(lay.T) {
		t.Fatalf("the prompt's %d prefix rows plan no more activation rows than its %d target rows: nothing to re-plan", lay.PrefixLen, lay.T)
	}
	run, _ := longPromptStep(t, func(live, saving int64) emu.Fault { return emu.Fault{Kind: emu.OOM, Bytes: live - saving/2} })
	if !run.onDevice || golden.RelErr(run.v, clean.v) != 0 || run.fired == 0 {
		t.Fatalf("on device %v, relative difference to the unfaulted run %.3g, fault fired %d times", run.onDevice, golden.RelErr(run.v, clean.v), run.fired)
	}
	var oom []metal.Retry
	for _, r := range run.retries {
		if r.Kind == device.ErrorOutOfMemory.String() {
			oom = append(oom, r)
		}
	}
	if len(oom) != 1 || !oom[0].OK || !strings.Contains(oom[0].What, "re-planned the step's activation buffers") {
		t.Errorf("out-of-memory retries %+v: want one that re-planned the activations and passed", oom)
	}

	tight, _ := longPromptStep(t, func(live, saving int64) emu.Fault { return emu.Fault{Kind: emu.OOM, Bytes: live - 2*saving} })
	if tight.onDevice {
		t.Errorf("with less memory than the re-plan frees, the step stayed on the device")
	}
	found := false
	for _, n := range tight.notices {
		found = found || strings.Contains(n, "out of memory")
	}
	if !found {
		t.Errorf("no notice says the GPU ran out of memory: %q", tight.notices)
	}
}

// TestEmuRunnerStartsTheNextRunOnTheDevice: a step the device declined moves the prompt and the
// rest of the run to the CPU, and the next run (its first prefill) starts on the device again.
func TestEmuRunnerStartsTheNextRunOnTheDevice(t *testing.T) {
	m, f := tinyModel(t, convert.ProfileCortiq)
	dc := fewestConditions(t)
	lay := dc.layout
	in := m.Config.InChannels
	cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	inj := testdevice.Faults(t, dev)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var stepDeclines, declines int
	r, err := NewRunner(d, m, func(dc *metal.Declined) { declines++; t.Logf("declined: %v", dc) })
	if err != nil {
		t.Fatal(err)
	}
	r.SetStepDecline(func(*metal.Declined) { stepDeclines++ })
	// step prefills, injects fault, runs two steps and removes the fault
	step := func(fault emu.Fault) bool {
		p, err := r.Prefill(t.Context(), lay, dc.text, cond)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release(p)
		inj.InjectFault(fault)
		defer inj.InjectFault(emu.Fault{})
		for range 2 {
			if _, err := r.Step(t.Context(), p, target, dc.midSigma()); err != nil {
				t.Fatal(err)
			}
		}
		return p.OnDevice()
	}
	if step(emu.Fault{Kind: emu.Overflow, HalfMax: 1e-6}) || stepDeclines != 1 {
		t.Fatalf("under an overflow no guard fixes: the program stayed on the device or the step declines were told %d times (want 1)", stepDeclines)
	}
	if !step(emu.Fault{}) || stepDeclines != 1 || declines != 0 {
		t.Errorf("the next run: on device false or declines told again (steps %d, others %d)", stepDeclines, declines)
	}
}
