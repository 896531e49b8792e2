//go:build darwin

package metal

// darwinkit v0.5.0 has no binding for MTLCreateSystemDefaultDevice: this is the one-line shim.
// MTLCreateSystemDefaultDevice returns nil in a process that does not link CoreGraphics (Apple's
// documented requirement; the window pulls it in through Fyne, a CLI tool or a test binary would
// not), so it is linked here.

/*
#cgo CFLAGS: -x objective-c -fobjc-arc
#cgo LDFLAGS: -framework Metal -framework Foundation -framework CoreGraphics
#import <Metal/Metal.h>
static void* mtlDefaultDevice(void) { return (__bridge_retained void*)MTLCreateSystemDefaultDevice(); }
*/
import "C"

import "unsafe"

// systemDefaultDevice is MTLCreateSystemDefaultDevice(), retained; nil without a Metal GPU.
func systemDefaultDevice() unsafe.Pointer {
	return unsafe.Pointer(C.mtlDefaultDevice())
}
