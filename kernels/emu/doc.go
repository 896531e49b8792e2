// Package emu runs the project's Metal compute kernels (kernels/*.metal) on the CPU, so tests on
// Linux exercise the same MSL sources and the same encoding code as the Metal backend on a Mac
// (docs/ARCHITECTURE.md §3). It is the emulated implementation of kernels/device.Device.
//
// How: a token-level pre-pass (prep.go) rewrites a .metal file so that it compiles as C++ against
// include/metal_stdlib, a stand-in for Apple's header (types, address spaces, SIMD-group
// functions, 8×8 simdgroup matrices with the documented lane layout). clang++ builds it, together
// with the fiber runtime include/msl_rt.h, into a shared object that is cached by content hash
// in the temporary directory and loaded with dlopen. Each GPU thread is a fiber with its own
// stack; threadgroup barriers and SIMD-group operations are real synchronisation points; one
// threadgroup runs at a time per worker thread.
//
// Requirements: linux/amd64, cgo, and clang++ 14 or newer (Debian package "clang"); set
// EASEL_MSL_CXX to choose the compiler. NewDevice returns an error wrapping ErrNoCompiler when
// none is found, which tests turn into a skip.
//
// Debugging: the cache lives in $TMPDIR/easel-msl-emu-$UID (EASEL_MSL_CACHE moves it, e.g. to a
// directory CI keeps between runs); next to each <file>-<hash>.so is the
// generated <file>-<hash>.cpp clang compiled (diagnostics point at the .metal lines through
// #line). Run a test under Options{Order: Reverse} or Shuffled to expose a missing barrier;
// function-scope threadgroup arrays start each threadgroup filled with 0xFF (NaN), so reading
// memory no thread wrote shows up. A kernel whose lanes reach different SIMD-group operations, or
// a simdgroup multiply with inactive lanes, stops the process with a message (a fiber cannot
// unwind), as the GPU would compute garbage.
//
// Faults (fault.go): EASEL_EMU_FAULT=corrupt-gemm|overflow|watchdog|oom, Options.Fault, or
// (*Device).InjectFault in a test, make the device fail the way a Mac's GPU does — a GEMM kernel
// computing garbage, a guarded half site overflowing to inf, the watchdog stopping a long command
// buffer (device.ErrorTimeout), the GPU out of memory (device.ErrorOutOfMemory) — so the Metal
// path's self-test and recovery run without a Mac.
//
// What it cannot tell: timings are not GPU timings; numerics follow IEEE with libm (the device
// compiles with fast math off, MTLMathModeSafe, to match; EASEL_MSL_FAST_MATH=1 compiles the
// emulated kernels with clang's -ffast-math instead); SIMD lanes do not run in lockstep; races that need true concurrency are
// not reproduced; Apple's compiler may reject code clang accepts (some address-space conversions,
// C++ features MSL forbids). The team's design notes (docs/reference/msl-emu.md §5) list the gaps.
package emu

import (
	"errors"

	"easel/kernels/device"
)

// ErrNoCompiler means no usable clang++ was found: install Debian's "clang" package or set
// EASEL_MSL_CXX.
var ErrNoCompiler = errors.New("no clang++ for the Metal emulator (install the Debian package \"clang\", or set EASEL_MSL_CXX)")

// FiberOrder is the order in which the scheduler runs the threads of a threadgroup in each pass.
// Results must not depend on it; tests run more than one order to expose missing barriers.
type FiberOrder int

// Fiber orders.
const (
	Forward  FiberOrder = 0
	Reverse  FiberOrder = 1
	Shuffled FiberOrder = 2
)

// Options tune an emulated device.
type Options struct {
	// Workers is the number of OS threads that run threadgroups (default 1). More than one is
	// faster on an idle machine; the extra threads are not Go threads, which Go's CPU profiler
	// (SIGPROF on any thread) has not been tried with.
	Workers int
	// Order is the fiber order (default Forward).
	Order FiberOrder
	// Limits are the memory limits the device reports and NewBuffer / NewBufferNoCopy enforce
	// (default: DefaultLimits), so tests can exercise the backend's "does not fit" path.
	Limits device.Limits
	// Fault is injected into the device's work (fault.go); the zero value means the one FaultEnv
	// asks for, if any. Tests can change it later with (*Device).InjectFault.
	Fault *Fault
	// NoEncoderTiming makes the device's command buffers say they cannot time their encoders
	// (device.EncoderTimer), as a GPU without stage-boundary counter sampling, so the callers'
	// estimated split of a buffer's GPU time over kernel classes runs in tests.
	NoEncoderTiming bool
}

// DefaultLimits are those of a 24 GB M4 (maxBufferLength 13.6 GB per the seed's note; the
// working set about 75 % of memory). The emulator does not reserve the memory.
var DefaultLimits = device.Limits{MaxBufferLength: 13_600_000_000, RecommendedMaxWorkingSetSize: 18_000_000_000}
