package emu

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FaultEnv names the environment variable that injects a fault into every emulated device made
// without Options.Fault: corrupt-gemm, overflow, watchdog or oom, optionally with a count after a
// colon (oom:3: the next three command buffers fail; oom:0: every one).
const FaultEnv = "EASEL_EMU_FAULT"

// FaultKind is a failure the emulated device can be told to show, each the way a real Mac shows
// it, so the Metal path's self-test and recovery run in tests and from the CLI.
type FaultKind int

// Fault kinds.
const (
	// NoFault runs every kernel as written.
	NoFault FaultKind = iota
	// CorruptGEMM perturbs the output of every GEMM-like kernel (qi_mm_* with the variants,
	// ops_linear, ops_mm, vae_conv) after it runs: a kernel Apple's compiler built differently.
	// Every 61st 32-bit word of the output binding is replaced with 0x4b004b00 (8.4e6 as a float,
	// 14.0 as two halves).
	CorruptGEMM
	// Overflow narrows half precision at the denoiser's guarded half sites (the stored outputs of
	// qi_rowop, qi_flash*, qi_swiglu, and qi_mm_* with a half epilogue): a stored value whose
	// magnitude passes Fault.HalfMax becomes ±inf, as a real half past 65504 does. The default
	// HalfMax (DefaultHalfMax) is half's range shrunk 2^16-fold, so the tiny test model's
	// activations overflow where the published model's would pass 65504.
	Overflow
	// Watchdog stops a command buffer that holds more than Fault.Dispatches dispatches (default
	// DefaultWatchdogDispatches) after running that many, and reports device.ErrorTimeout, as
	// the GPU watchdog stops a long command buffer part way. With Fault.Work set it stops a
	// command buffer whose GEMMs are too much work instead (a buffer the watchdog stops however
	// few dispatches it holds).
	Watchdog
	// OOM fails the next Fault.Count command buffers (0: every one) with
	// device.ErrorOutOfMemory before running anything; with Fault.Bytes set, every command
	// buffer committed while the device's buffers (not counting no-copy ones over a file) hold
	// more than Bytes.
	OOM
)

// DefaultHalfMax is the largest finite stored value under the Overflow fault: 65504 / 2^16.
const DefaultHalfMax = 65504.0 / 65536

// DefaultWatchdogDispatches is the most dispatches a command buffer may hold under the Watchdog
// fault: one transformer block of the denoiser with its overflow watch (about 20) passes, two
// (about 35) do not.
const DefaultWatchdogDispatches = 24

// Fault is an injected failure.
type Fault struct {
	Kind FaultKind
	// HalfMax (Overflow) is the largest magnitude a half site may store; 0 means DefaultHalfMax.
	HalfMax float32
	// Dispatches (Watchdog) is the most dispatches one command buffer may hold; 0 means
	// DefaultWatchdogDispatches, or no limit when Work is set.
	Dispatches int
	// Work (Watchdog), when above 0, is the most GEMM work one command buffer may hold: the
	// multiply-adds of its qi_mm_* dispatches (n·rows·k per z slice), summed. The dispatch that
	// passes it does not run, and the buffer fails with device.ErrorTimeout.
	Work int64
	// Count (OOM) is how many command buffers fail; 0 means every one.
	Count int
	// Bytes (OOM), when above 0, is the device memory the GPU has for the app's buffers: a
	// command buffer fails while the live buffers (LiveBuffers) hold more.
	Bytes int64
}

var faultNames = map[string]FaultKind{"corrupt-gemm": CorruptGEMM, "overflow": Overflow, "watchdog": Watchdog, "oom": OOM}

// String is the fault as FaultEnv spells it.
func (f Fault) String() string {
	for name, k := range faultNames {
		if k == f.Kind {
			switch {
			case f.Kind == OOM && f.Bytes > 0:
				return fmt.Sprintf("%s:bytes=%d", name, f.Bytes)
			case f.Kind == OOM:
				return fmt.Sprintf("%s:%d", name, f.Count)
			case f.Kind == Watchdog && f.Work > 0:
				return fmt.Sprintf("%s:work=%d", name, f.Work)
			case f.Kind == Watchdog && f.Dispatches > 0:
				return fmt.Sprintf("%s:%d", name, f.Dispatches)
			}
			return name
		}
	}
	return "none"
}

// ParseFault reads FaultEnv's syntax: "" or "none" for no fault, else a kind name with an optional
// ":count" (OOM: command buffers that fail, default 1; Watchdog: the dispatch limit),
// "watchdog:work=N" (the GEMM work limit, multiply-adds per command buffer) or "oom:bytes=N" (the
// device memory for the app's buffers).
func ParseFault(s string) (Fault, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return Fault{}, nil
	}
	name, arg, hasArg := strings.Cut(s, ":")
	k, ok := faultNames[name]
	if !ok {
		return Fault{}, fmt.Errorf("%s=%q: the emulator's faults are corrupt-gemm, overflow, watchdog and oom (oom:N fails the next N command buffers, oom:0 every one, oom:bytes=N every one while the buffers hold more than N bytes; watchdog:N stops command buffers of more than N dispatches, watchdog:work=N those whose GEMMs do more than N multiply-adds)", FaultEnv, s)
	}
	f := Fault{Kind: k}
	if k == OOM {
		f.Count = 1
	}
	if b, ok := strings.CutPrefix(arg, "bytes="); hasArg && ok && k == OOM {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return Fault{}, fmt.Errorf("%s=%q: oom:bytes=N takes a positive byte count", FaultEnv, s)
		}
		return Fault{Kind: OOM, Bytes: n}, nil
	}
	if w, ok := strings.CutPrefix(arg, "work="); hasArg && ok && k == Watchdog {
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil || n <= 0 {
			return Fault{}, fmt.Errorf("%s=%q: watchdog:work=N takes a positive count of multiply-adds per command buffer", FaultEnv, s)
		}
		f.Work = n
		return f, nil
	}
	if hasArg {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 || (k != OOM && k != Watchdog) {
			return Fault{}, fmt.Errorf("%s=%q: only oom:N (command buffers that fail) and watchdog:N (dispatches per command buffer) take a count", FaultEnv, s)
		}
		if k == OOM {
			f.Count = n
		} else {
			f.Dispatches = n
		}
	}
	return f, nil
}

// FaultFromEnv is the fault FaultEnv asks for.
func FaultFromEnv() (Fault, error) { return ParseFault(os.Getenv(FaultEnv)) }

// FaultInjector is the test hook of an emulated device (*Device on linux/amd64 with cgo), for code
// that holds a device.Device: dev.(emu.FaultInjector).
type FaultInjector interface {
	// InjectFault makes the device show f from the next command buffer on.
	InjectFault(f Fault)
	// Fault is the injected fault.
	Fault() Fault
	// FaultsFired counts the times the fault changed an outcome since it was injected.
	FaultsFired() int
}
