package device

import (
	"errors"
	"fmt"
	"strings"
)

// ErrorKind is what went wrong with a command buffer on the device, in the terms a caller can act
// on. The darwinkit device maps Metal's MTLCommandBufferError codes (and the IOGPU reason in the
// error's description) to these kinds; the emulator reports its injected faults with the same
// kinds, so the recovery code is exercised without a Mac.
type ErrorKind int

// Error kinds.
const (
	// ErrorOther is any failure without a more useful kind (an encoding mistake, an internal
	// Metal error): retrying the same work is not expected to help.
	ErrorOther ErrorKind = iota
	// ErrorTimeout is the GPU watchdog stopping a command buffer that ran too long
	// (MTLCommandBufferErrorTimeout, and IOGPU's "Impacting Interactivity"): the same work split
	// into shorter command buffers may pass.
	ErrorTimeout
	// ErrorOutOfMemory is the GPU running out of memory for a command buffer
	// (MTLCommandBufferErrorOutOfMemory): releasing caches and planning smaller may pass.
	ErrorOutOfMemory
	// ErrorPageFault is a GPU page fault (MTLCommandBufferErrorPageFault): memory under a buffer
	// went away, e.g. the model file under a no-copy weight buffer.
	ErrorPageFault
	// ErrorDeviceLost is the device refusing further work (access revoked for too many hangs,
	// not permitted in the background, removed).
	ErrorDeviceLost
)

// String names the kind as diagnostics print it.
func (k ErrorKind) String() string {
	switch k {
	case ErrorTimeout:
		return "timeout"
	case ErrorOutOfMemory:
		return "out-of-memory"
	case ErrorPageFault:
		return "page-fault"
	case ErrorDeviceLost:
		return "device-lost"
	}
	return "other"
}

// CommandBufferError is a command buffer that ended in error, as Wait reports it.
type CommandBufferError struct {
	// Kind is what a caller can do about it.
	Kind ErrorKind
	// Code is the device's own error code (MTLCommandBufferError on a Mac; 0 in the emulator).
	Code int
	// Message is the device's description.
	Message string
}

func (e *CommandBufferError) Error() string {
	return fmt.Sprintf("command buffer failed (%s, code %d): %s", e.Kind, e.Code, e.Message)
}

// KindOf is the kind of the first *CommandBufferError in err's chain, or ErrorOther.
func KindOf(err error) ErrorKind {
	var cb *CommandBufferError
	if errors.As(err, &cb) {
		return cb.Kind
	}
	return ErrorOther
}

// MTLCommandBufferError codes (Metal's MTLCommandBuffer.h).
const (
	mtlTimeout       = 2
	mtlPageFault     = 3
	mtlAccessRevoked = 4
	mtlNotPermitted  = 7
	mtlOutOfMemory   = 8
	mtlDeviceRemoved = 11
)

// KindOfMetalError maps an MTLCommandBufferErrorDomain code and its localized description to a
// kind. The description is consulted because macOS reports some watchdog stops with the IOGPU
// reason in the text ("Impacting Interactivity", kIOGPUCommandBufferCallbackErrorImpactingInteractivity)
// rather than with the Timeout code.
func KindOfMetalError(code int, description string) ErrorKind {
	switch code {
	case mtlTimeout:
		return ErrorTimeout
	case mtlOutOfMemory:
		return ErrorOutOfMemory
	case mtlPageFault:
		return ErrorPageFault
	case mtlAccessRevoked, mtlNotPermitted, mtlDeviceRemoved:
		return ErrorDeviceLost
	}
	for _, s := range []struct {
		text string
		kind ErrorKind
	}{
		{"ImpactingInteractivity", ErrorTimeout},
		{"Impacting Interactivity", ErrorTimeout},
		{"CallbackErrorTimeout", ErrorTimeout},
		{"CallbackErrorOutOfMemory", ErrorOutOfMemory},
		{"PageFault", ErrorPageFault},
	} {
		if strings.Contains(description, s.text) {
			return s.kind
		}
	}
	return ErrorOther
}
