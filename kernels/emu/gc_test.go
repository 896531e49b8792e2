//go:build linux && amd64 && cgo

package emu

import (
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"unsafe"

	"easel/kernels/device"
)

// TestEmuLaunchBlockHoldsNoPointers: Go fills each dispatch's launch block in C memory
// (runKernel). A pointer-typed field there would make every store run the garbage collector's
// write barrier on the slot's old value, a stale address left in the malloc'd block by an
// earlier launch; the buffer addresses must be integers.
func TestEmuLaunchBlockHoldsNoPointers(t *testing.T) {
	if path, ok := pointerIn(cLaunchType, cLaunchType.Name()); ok {
		t.Errorf("the C launch block has a pointer-typed field %s: Go stores into it would run write barriers on malloc'd memory", path)
	}
}

// pointerIn finds a field of t (through arrays and structs) that the garbage collector treats as
// a pointer.
func pointerIn(t reflect.Type, path string) (string, bool) {
	switch t.Kind() {
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Chan,
		reflect.Func, reflect.Interface, reflect.String:
		return path, true
	case reflect.Array:
		return pointerIn(t.Elem(), path+"[]")
	case reflect.Struct:
		for i := range t.NumField() {
			if p, ok := pointerIn(t.Field(i).Type, path+"."+t.Field(i).Name); ok {
				return p, true
			}
		}
	}
	return "", false
}

// TestEmuGoMemoryBuffersSurviveTheCollector binds Go heap memory (a no-copy buffer, as a weight
// arena over a Go-heap stand-in for a model file), drops it, lets the collector free it, and
// runs the next dispatch while the collector keeps running. Before runKernel filled the launch
// block with integers, the freed memory's address left in the reused malloc block reached the
// write barrier and the runtime stopped the process within a few rounds with "found bad pointer
// in Go heap" or "found pointer to free object".
func TestEmuGoMemoryBuffersSurviveTheCollector(t *testing.T) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "write_floats")
	if err != nil {
		t.Fatal(err)
	}
	out := mustBuffer(t, d, 4096)
	page := os.Getpagesize()
	dispatch := func(buf device.Buffer) {
		n := uint32(1)
		cb, _ := d.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		enc.SetPipeline(p)
		enc.SetBuffer(buf, 0, 0)
		enc.SetBytes(device.StructBytes(&n), 1)
		one := device.Size{Width: 1, Height: 1, Depth: 1}
		enc.Dispatch(one, one)
		enc.End()
		cb.Commit()
		if err := cb.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	bindGoMemory := func() {
		heap := make([]byte, 3*page)
		off := (page - int(uintptr(unsafe.Pointer(&heap[0]))%uintptr(page))) % page
		buf, err := d.NewBufferNoCopy(heap[off : off+page])
		if err != nil {
			t.Fatal(err)
		}
		dispatch(buf)
		buf.Release()
	}

	defer debug.SetGCPercent(debug.SetGCPercent(1))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // keeps the collector cycling, so dispatches run while it marks
		defer wg.Done()
		var keep [][]*int
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			row := make([]*int, 1024)
			for j := range row {
				row[j] = new(int)
			}
			keep = append(keep, row)
			if len(keep) > 64 {
				keep = keep[1:]
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for range 300 {
		bindGoMemory()
		runtime.GC() // frees the Go memory the last launch block pointed at
		dispatch(out)
	}
}
