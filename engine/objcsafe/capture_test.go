package objcsafe

import (
	"errors"
	"testing"
)

// TestCaptureStopsAPanicAndKeepsItsValue: a panic's value comes back as a result (so WithPool's
// pool pops before it panics again); a normal return gives no value.
func TestCaptureStopsAPanicAndKeepsItsValue(t *testing.T) {
	boom := errors.New("object is nil")
	v, panicked := capture(func() { panic(boom) })
	if !panicked || v != boom {
		t.Fatalf("capture of a panic: value %v, panicked %v", v, panicked)
	}
	ran := false
	v, panicked = capture(func() { ran = true })
	if panicked || v != nil || !ran {
		t.Fatalf("capture of a normal return: value %v, panicked %v, ran %v", v, panicked, ran)
	}
	var pe any
	_, panicked = capture(func() { panic(pe) }) // panic(nil) is a *runtime.PanicNilError since Go 1.21
	if !panicked {
		t.Fatal("panic(nil) was not captured")
	}
}
