package backend

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinemetal"
	"easel/engine/qi21/qi21metal"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// Choice is where the text encoder, the denoiser and the VAE run.
type Choice struct {
	// Asked is the setting the choice was made from.
	Asked settings.Backend
	// Device is the Metal device the networks run on, or nil for the CPU.
	Device device.Device
	// Reason is a sentence for the user: what runs where, and why.
	Reason string
	// SelfTestDir, when set, is where OpenPipeline-style callers cache the first-use self-test
	// (the app-support folder's selftest/); SelfTestProgress is told before each check.
	SelfTestDir      string
	SelfTestProgress metal.SelfTestProgress
	// TuneDir, when set with SelfTestDir, is where the kernel-variant choices are cached per
	// geometry class (the app-support folder's tuning/), and a class never tuned is tuned on first
	// use after the self-test passed (tuned.go); TuneProgress is told before each variant and
	// TuneNotice hears a tuning that failed (the baseline kernels run). Without it the denoiser
	// still runs the choices cached in the app-support folder.
	TuneDir      string
	TuneProgress metal.TuneProgress
	TuneNotice   func(string)
	// noAutoTune is SetAutoTune(false): no class is tuned on first use (the Settings dialog).
	noAutoTune atomic.Bool
	// selfTest is the self-test's report once SelfTest ran (selftest.go).
	selfTest *metal.SelfTestReport
	tuning   tuning
}

// Metal reports whether the networks run on a Metal device.
func (c *Choice) Metal() bool { return c.Device != nil }

// Name is the backend as an image's metadata records it: "metal" or "cpu".
func (c *Choice) Name() string {
	if c.Metal() {
		return "metal"
	}
	return "cpu"
}

// Options are the pipeline options that run the networks where the choice says,
// reading the weights in place from f's mapping on a Metal device.
func (c *Choice) Options(f *cmf.File) pipeline.Options {
	if !c.Metal() {
		return pipeline.Options{}
	}
	// A stage whose kernels failed the self-test declines on a gated device (its notice names
	// the kernel); the denoiser runs under the guards the self-test found.
	st := c.selfTest
	dopts := qi21metal.Options{Tune: c.tuner()}
	if st != nil && st.Guards != nil {
		if k, err := metal.KnobsFromEnv(); err == nil {
			k.Guards = *st.Guards
			dopts.Knobs = &k
		}
	}
	return pipeline.Options{
		Denoiser:    pipelinemetal.Denoiser(metal.GateDevice(c.Device, st.Decline(metal.StageDenoiser)), f.Bytes(), dopts),
		VAE:         pipelinemetal.VAE(metal.GateDevice(c.Device, st.Decline(metal.StageVAE)), f.Bytes()),
		TextEncoder: pipelinemetal.TextEncoder(metal.GateDevice(c.Device, st.Decline(metal.StageTextEncoder)), f.Bytes()),
	}
}

// Emulator is the command line's backend that runs the whole Metal path on the CPU emulator
// (kernels/emu): slow, for checking the Metal path and its fault handling (EASEL_EMU_FAULT)
// without a Mac. It is not a setting the window offers.
const Emulator settings.Backend = "emulator"

// platform is what the choice depends on, separated so tests can stand in for a Mac.
type platform struct {
	goos, goarch string
	// system opens the Mac's Metal device (metal.SystemDevice).
	system func() (device.Device, error)
}

var host = platform{goos: runtime.GOOS, goarch: runtime.GOARCH, system: metal.SystemDevice}

// Choose resolves a backend setting on this machine. Only an explicit metal on a machine where
// Metal cannot run is an error; auto falls back to the CPU and says why. With a Metal device, the
// command-buffer levels the GPU's watchdog needed are remembered across processes from then on
// (RememberRecoveryPolicies).
func Choose(want settings.Backend) (*Choice, error) {
	c, err := host.choose(want)
	if err == nil && c.Metal() {
		RememberRecoveryPolicies()
	}
	return c, err
}

func (pl platform) choose(want settings.Backend) (*Choice, error) {
	switch want {
	case settings.BackendCPU:
		return &Choice{Asked: want, Reason: "the text encoder, the denoiser and the VAE run on the CPU, as the backend setting asks"}, nil
	case settings.BackendAuto, "":
		dev, why := pl.metalDevice()
		if dev == nil {
			return &Choice{Asked: settings.BackendAuto, Reason: "the text encoder, the denoiser and the VAE run on the CPU because " + why}, nil
		}
		return &Choice{Asked: settings.BackendAuto, Device: dev, Reason: "the text encoder, the denoiser and the VAE run on Metal (" + dev.Name() + "), chosen automatically"}, nil
	case Emulator:
		dev, err := emu.NewDevice(emu.Options{})
		if err != nil {
			return nil, fmt.Errorf("the Metal emulator cannot run here (%v); choose the cpu or auto backend", err)
		}
		return &Choice{Asked: want, Device: dev, Reason: "the text encoder, the denoiser and the VAE run on the Metal path over " + dev.Name() + " — the CPU runs the Metal kernels, slowly — as --backend emulator asks"}, nil
	case settings.BackendMetal:
		dev, why := pl.metalDevice()
		if dev == nil {
			return nil, fmt.Errorf("%s; choose the cpu or auto backend", why)
		}
		return &Choice{Asked: want, Device: dev, Reason: "the text encoder, the denoiser and the VAE run on Metal (" + dev.Name() + "), as the backend setting asks"}, nil
	}
	return nil, fmt.Errorf("backend %q is not one of auto, metal, cpu (or emulator, from the command line)", want)
}

// metalDevice opens the Metal device, or says why there is none.
func (pl platform) metalDevice() (device.Device, string) {
	const needs = "Metal needs a Mac with Apple silicon: "
	switch {
	case pl.goos != "darwin":
		return nil, needs + fmt.Sprintf("this is %s/%s", pl.goos, pl.goarch)
	case pl.goarch != "arm64":
		return nil, needs + "this Mac has an Intel processor, whose GPU lacks the simdgroup matrix operations the kernels use"
	}
	dev, err := pl.system()
	if err != nil {
		return nil, needs + fmt.Sprintf("this Mac's Metal device did not open (%v)", err)
	}
	if dev == nil {
		return nil, needs + "this Mac reports no Metal device"
	}
	return dev, ""
}
