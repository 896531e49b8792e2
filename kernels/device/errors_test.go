package device

import (
	"fmt"
	"testing"
)

// TestKindOfMetalError: Metal's MTLCommandBufferError codes and the IOGPU reasons macOS prints map
// to the kinds the recovery code acts on.
func TestKindOfMetalError(t *testing.T) {
	for _, c := range []struct {
		code int
		desc string
		want ErrorKind
	}{
		{2, "Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)", ErrorTimeout},
		{1, "Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)", ErrorTimeout},
		{8, "Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)", ErrorOutOfMemory},
		{3, "Caused GPU Address Fault Error (0000000b:kIOGPUCommandBufferCallbackErrorPageFault)", ErrorPageFault},
		{4, "Ignored (for causing prior/excessive GPU errors) (00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)", ErrorDeviceLost},
		{7, "", ErrorDeviceLost},
		{1, "Internal Error", ErrorOther},
	} {
		if got := KindOfMetalError(c.code, c.desc); got != c.want {
			t.Errorf("KindOfMetalError(%d, %q) = %v, want %v", c.code, c.desc, got, c.want)
		}
	}
	err := fmt.Errorf("metal: a command buffer failed: %w", &CommandBufferError{Kind: ErrorOutOfMemory, Code: 8})
	if KindOf(err) != ErrorOutOfMemory || KindOf(fmt.Errorf("plain")) != ErrorOther {
		t.Error("KindOf does not follow the wrapped chain")
	}
}
