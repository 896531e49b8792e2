// Package testdevice gives tests the Metal device they run on, the one way every test package
// takes it. It lives under internal/ because it needs both the emulator (kernels/emu) and the
// Metal layer (engine/ml/metal); neither of those imports it.
//
// EASEL_TEST_DEVICE picks the device:
//
//   - unset or "emulator": kernels/emu, with every option a test asks for. It is skipped only
//     when clang is missing and the emulator is not required (EASEL_REQUIRE_EMULATOR=1, which
//     make test sets on Linux, turns that into a failure); any other error fails the test.
//   - "system": the Mac's own GPU (metal.SystemDevice, make mac-check): the parity tests then
//     check the real device against the CPU.
//   - "opaque": the emulator seen only through device.Device, as the system device is seen: no
//     emulator type, no fault injection, no live-buffer counts, no tensor API, a name that does
//     not say "emulator". A test that passes here assumes nothing of the device a Mac's GPU
//     would not give, so this is how the mac-check tests are checked without a Mac.
//   - "mixed" (make unit on Linux): opaque for every test that needs nothing only the emulator
//     has, the emulator itself for the tests opaque would skip (and for a chosen fiber order or
//     worker count, which keep the emulator's hazard checks). Every test runs once, in one go test
//     run, and CI sees the device as a Mac's GPU is seen wherever a test allows it.
//
// Under system and opaque, what only the emulator has (an injected fault, live-buffer counts,
// its fiber order) is not there: the test asks for it here and is skipped with the reason. A
// test declares that before it takes its device, so mixed can give it the emulator: by asking
// Device for a fault injector (emu.Options.Fault, even a zero Fault) or by calling EmulatorOnly
// first. Faults, LiveBuffers and EmulatorOnly fail a test that did not.
// Chosen memory limits and untimed encoders are given on every device by a wrapper (wrap.go), as
// a GPU with those limits or without counter sampling would report them.
package testdevice

import (
	"errors"
	"os"
	"sync"
	"testing"

	"easel/engine/ml/metal"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// Env selects the device: "emulator" (the default), "system", "opaque" or "mixed".
const Env = "EASEL_TEST_DEVICE"

// Modes of Env.
const (
	Emulator = "emulator"
	System   = "system"
	Opaque   = "opaque"
	Mixed    = "mixed"
)

// Mode is Env's value ("emulator" when unset); the test fails on a value it does not know.
func Mode(tb testing.TB) string {
	tb.Helper()
	switch v := os.Getenv(Env); v {
	case "", Emulator:
		return Emulator
	case System, Opaque, Mixed:
		return v
	default:
		tb.Fatalf("%s=%q: use emulator (the default), opaque (the emulator seen as a GPU), mixed (opaque where a test allows it) or system (the Mac's GPU)", Env, v)
		return ""
	}
}

// Device is the device a test runs on: emu.NewDevice(opts), or under system and opaque the
// process's one shared device with opts.Limits and opts.NoEncoderTiming applied by a wrapper. A
// test asking for an injected fault is skipped there, saying so. Under mixed a test that
// declared it needs the emulator (opts.Fault, or EmulatorOnly before), or that chose a fiber
// order or worker count, gets the emulator; every other one the opaque device.
func Device(tb testing.TB, opts emu.Options) device.Device {
	tb.Helper()
	m := Mode(tb)
	st := stateOf(tb)
	if opts.Fault != nil {
		st.declared = true
	}
	st.given = true
	if m == Mixed {
		m = Opaque
		if st.declared || opts.Order != emu.Forward || opts.Workers > 1 {
			m = Emulator
		}
	}
	if m == Emulator {
		d, err := emu.NewDevice(opts)
		if errors.Is(err, emu.ErrNoCompiler) {
			tb.Skipf("Metal emulator unavailable: %v", err)
		}
		if err != nil {
			tb.Fatal(err)
		}
		return d
	}
	if need := emulatorOnly(opts); need != "" {
		tb.Skipf("%s=%s: this test needs the emulator's %s", Env, m, need)
	}
	return adapt(shared(tb, m), opts)
}

// shared is the one device of system or opaque mode, made on first use: one command queue and
// one kernel cache for every test of the process, as the application has.
func shared(tb testing.TB, m string) device.Device {
	tb.Helper()
	sharedDev.once.Do(func() {
		if m == System {
			sharedDev.dev, sharedDev.err = metal.SystemDevice()
			return
		}
		d, err := emu.NewDevice(emu.Options{Fault: &emu.Fault{}}) // no EASEL_EMU_FAULT: a GPU has none
		if err == nil {
			d = newOpaque(d)
		}
		sharedDev.dev, sharedDev.err = d, err
	})
	if errors.Is(sharedDev.err, emu.ErrNoCompiler) {
		tb.Skipf("%s=%s: Metal emulator unavailable: %v", Env, m, sharedDev.err)
	}
	if sharedDev.err != nil {
		tb.Fatalf("%s=%s: %v", Env, m, sharedDev.err)
	}
	return sharedDev.dev
}

var sharedDev struct {
	once sync.Once
	dev  device.Device
	err  error
}

// emulatorOnly names what of opts no GPU can give, "" when nothing. A zero Fault (a test making
// sure no EASEL_EMU_FAULT applies) asks for nothing: the shared device has no fault; a test that
// injects one later asks Faults for the injector.
func emulatorOnly(opts emu.Options) string {
	if opts.Fault != nil && opts.Fault.Kind != emu.NoFault {
		return "fault injection"
	}
	return ""
}

// Faults is dev's fault injector: the emulator's, when the test runs on it. Under system and
// opaque the test is skipped, saying it needs the emulator's fault injection. The test must have
// asked Device for it (emu.Options.Fault, a zero Fault for none yet).
func Faults(tb testing.TB, dev device.Device) emu.FaultInjector {
	tb.Helper()
	emulatorExtra(tb, "fault injection")
	inj, ok := dev.(emu.FaultInjector)
	if !ok {
		tb.Fatalf("%s=emulator: the device %q injects no faults", Env, dev.Name())
	}
	return inj
}

// LiveBuffers is the emulator's count of dev's buffers made and not released, and their bytes
// (emu.Device.LiveBuffers). Under system and opaque the test is skipped: no GPU counts them.
func LiveBuffers(tb testing.TB, dev device.Device) (buffers int, bytes int64) {
	tb.Helper()
	return liveCounter(tb, dev).LiveBuffers()
}

// LiveCounter is dev's live-buffer count as a function a test can call again after each
// operation; under system and opaque the test is skipped.
func LiveCounter(tb testing.TB, dev device.Device) func() (buffers int, bytes int64) {
	tb.Helper()
	return liveCounter(tb, dev).LiveBuffers
}

func liveCounter(tb testing.TB, dev device.Device) interface{ LiveBuffers() (int, int64) } {
	tb.Helper()
	emulatorExtra(tb, "live-buffer counts")
	c, ok := dev.(interface{ LiveBuffers() (int, int64) })
	if !ok {
		tb.Fatalf("%s=emulator: the device %q does not count its buffers", Env, dev.Name())
	}
	return c
}

// EmulatorOnly declares that the test needs what only the emulator has (need names it, e.g.
// "live-buffer counts"): it is skipped under system and opaque, and runs on the emulator under
// mixed. Call it before Device.
func EmulatorOnly(tb testing.TB, need string) {
	tb.Helper()
	st := stateOf(tb)
	if st.given && !st.declared {
		tb.Fatalf("testdevice.EmulatorOnly(%q) after Device: call it before the test takes its device, or %s=%s has already given it the opaque device", need, Env, Mixed)
	}
	st.declared = true
	skipUnlessEmulator(tb, need)
}

// emulatorExtra is EmulatorOnly for a helper that hands out an emulator extra after Device:
// the test must have declared it by then.
func emulatorExtra(tb testing.TB, need string) {
	tb.Helper()
	if st := stateOf(tb); !st.declared {
		tb.Fatalf("this test uses the emulator's %s without declaring it: ask Device for emu.Options{Fault: &emu.Fault{}} or call testdevice.EmulatorOnly before Device (%s=%s gives an undeclared test the opaque device)", need, Env, Mixed)
	}
	skipUnlessEmulator(tb, need)
}

func skipUnlessEmulator(tb testing.TB, need string) {
	tb.Helper()
	if m := Mode(tb); m == System || m == Opaque {
		tb.Skipf("%s=%s: this test needs the emulator's %s", Env, m, need)
	}
}

// testState is what a test told this package: whether it declared an emulator extra, whether it
// has taken a device.
type testState struct {
	declared, given bool
}

var states sync.Map // testing.TB → *testState

// stateOf is tb's state, forgotten when the test ends.
func stateOf(tb testing.TB) *testState {
	st, loaded := states.LoadOrStore(tb, &testState{})
	if !loaded {
		tb.Cleanup(func() { states.Delete(tb) })
	}
	return st.(*testState)
}

// HasTensorOps reports whether dev has Metal 4's tensor API (metal.HasTensorOps): the emulator
// does, the opaque device does not, a Mac's GPU does on an Apple10-family GPU with macOS 26.
func HasTensorOps(dev device.Device) bool { return metal.HasTensorOps(dev) }
