package metal

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"easel/kernels/device"
)

// fakeDevice is a device value to tell apart by identity.
type fakeDevice struct{ device.Device }

// TestOnceMakesTheDeviceOnce: however many goroutines ask at once, the constructor runs once and
// every caller gets the same device; an error is kept the same way.
func TestOnceMakesTheDeviceOnce(t *testing.T) {
	var made atomic.Int32
	get := once(func() (device.Device, error) {
		made.Add(1)
		return &fakeDevice{}, nil
	})
	const callers = 8
	got := make([]device.Device, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			d, err := get()
			if err != nil {
				t.Error(err)
			}
			got[i] = d
		})
	}
	wg.Wait()
	if made.Load() != 1 {
		t.Fatalf("the constructor ran %d times", made.Load())
	}
	for i := range got {
		if got[i] == nil || got[i] != got[0] {
			t.Fatalf("caller %d got %p, caller 0 %p", i, got[i], got[0])
		}
	}

	boom := errors.New("no Metal device")
	failing := once(func() (device.Device, error) { made.Add(1); return nil, boom })
	for range 3 {
		if _, err := failing(); err != boom {
			t.Fatalf("err = %v, want the first call's", err)
		}
	}
	if made.Load() != 2 {
		t.Fatalf("the failing constructor ran %d times, want once", made.Load()-1)
	}
}

// TestSystemDeviceIsOnePerProcess: SystemDevice answers every call with what its first call made
// (on Linux the same decline, on a Mac the same device).
func TestSystemDeviceIsOnePerProcess(t *testing.T) {
	d1, err1 := SystemDevice()
	d2, err2 := SystemDevice()
	if d1 != d2 || err1 != err2 {
		t.Fatalf("two calls: (%v, %v) and (%v, %v)", d1, err1, d2, err2)
	}
	if d1 == nil && err1 == nil {
		t.Fatal("SystemDevice gave neither a device nor an error")
	}
}
