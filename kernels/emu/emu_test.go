//go:build linux && amd64 && cgo

package emu

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"easel/kernels/device"
)

func testDevice(t *testing.T, order FiberOrder) device.Device {
	t.Helper()
	d, err := NewDevice(Options{Order: order})
	if errors.Is(err, ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testLibrary(t *testing.T, d device.Device, file string) device.Library {
	t.Helper()
	src, err := os.ReadFile("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := d.NewLibrary(file, src)
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func mustBuffer(t *testing.T, d device.Device, n int) device.Buffer {
	t.Helper()
	b, err := d.NewBuffer(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Release)
	return b
}

func TestEmuLibraryListsKernels(t *testing.T) {
	d := testDevice(t, Forward)
	lib := testLibrary(t, d, "selftest.metal")
	got := strings.Join(lib.Functions(), " ")
	if got != "simd_and_barrier missing_barrier half_ops one_mma_per_group write_floats grid_probe deep_stack" {
		t.Errorf("functions %q", got)
	}
	if _, err := d.Pipeline(lib, "nope"); err == nil || !strings.Contains(err.Error(), `no kernel "nope"`) {
		t.Errorf("Pipeline(nope) error = %v", err)
	}
}

func TestEmuSimdReductionShuffleAndBarrier(t *testing.T) {
	for _, order := range []FiberOrder{Forward, Reverse, Shuffled} {
		d := testDevice(t, order)
		p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "simd_and_barrier")
		if err != nil {
			t.Fatal(err)
		}
		const n, tg = 200, 96 // 3 groups, the last one partly past n; 3 simdgroups per group
		in := mustBuffer(t, d, 4*n)
		sums, rev, xor := mustBuffer(t, d, 4*n), mustBuffer(t, d, 4*n), mustBuffer(t, d, 4*n)
		x := device.View[float32](in)
		for i := range x {
			x[i] = float32(i%7) - 2.5
		}
		dims := struct {
			N     uint32
			Scale float32
		}{n, 0.5}
		cb, _ := d.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		enc.SetPipeline(p)
		enc.SetBuffer(in, 0, 0)
		enc.SetBuffer(sums, 0, 1)
		enc.SetBuffer(rev, 0, 2)
		enc.SetBuffer(xor, 0, 3)
		enc.SetBytes(device.StructBytes(&dims), 4)
		enc.SetThreadgroupMemoryLength(4*tg, 0)
		enc.Dispatch(device.Size{Width: 3, Height: 1, Depth: 1}, device.Size{Width: tg, Height: 1, Depth: 1})
		enc.End()
		cb.Commit()
		if err := cb.Wait(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			var want float64
			for j := i / 32 * 32; j < i/32*32+32; j++ {
				if j < n {
					want += float64(x[j])
				}
			}
			if got := device.View[float32](sums)[i]; float64(got) != want*0.5 {
				t.Fatalf("order %d: sums[%d] = %v, want %v", order, i, got, want*0.5)
			}
			g, l := i/tg, i%tg
			if src := g*tg + tg - 1 - l; src < n {
				if got := device.View[float32](rev)[i]; got != x[src] {
					t.Fatalf("order %d: reversed[%d] = %v, want %v", order, i, got, x[src])
				}
			}
			if got := device.View[uint32](xor)[i]; got != uint32(i%32^5) {
				t.Fatalf("order %d: xor lane of %d = %d, want %d", order, i, got, i%32^5)
			}
		}
	}
}

func TestEmuMissingBarrierIsExposed(t *testing.T) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "missing_barrier")
	if err != nil {
		t.Fatal(err)
	}
	out := mustBuffer(t, d, 4*64)
	for run := 0; run < 2; run++ { // the second run must not see the first run's data either
		cb, _ := d.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		enc.SetPipeline(p)
		enc.SetBuffer(out, 0, 0)
		enc.Dispatch(device.Size{Width: 1, Height: 1, Depth: 1}, device.Size{Width: 64, Height: 1, Depth: 1})
		enc.End()
		cb.Commit()
		if err := cb.Wait(); err != nil {
			t.Fatal(err)
		}
		if v := device.View[float32](out)[0]; !math.IsNaN(float64(v)) {
			t.Fatalf("run %d: thread 0 read its neighbour's unwritten threadgroup memory as %v, want the NaN poison", run, v)
		}
	}
}

func TestEmuHalfRoundsEveryOperation(t *testing.T) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "half_ops")
	if err != nil {
		t.Fatal(err)
	}
	// a = 1 + 2^-10, b = 1 + 2^-10, c = -1: a*b = 1 + 2^-9 + 2^-20 rounds to 1 + 2^-9 in half, so
	// (a*b)+c = 2^-9 exactly; without the intermediate rounding it would be 2^-9 + 2^-20.
	in := mustBuffer(t, d, 6)
	copy(device.View[uint16](in), []uint16{0x3c01, 0x3c01, 0xbc00})
	out := mustBuffer(t, d, 4)
	cb, _ := d.NewCommandBuffer()
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p)
	enc.SetBuffer(in, 0, 0)
	enc.SetBuffer(out, 0, 1)
	enc.Dispatch(device.Size{Width: 1, Height: 1, Depth: 1}, device.Size{Width: 1, Height: 1, Depth: 1})
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		t.Fatal(err)
	}
	const twoToMinus9 = 0x1800 // 2^-9 in binary16
	for i, got := range device.View[uint16](out) {
		if got != twoToMinus9 {
			t.Errorf("result %d = %#04x, want %#04x (2^-9)", i, got, twoToMinus9)
		}
	}
}

func TestEmuAddressSpaceMistakeDoesNotCompile(t *testing.T) {
	d := testDevice(t, Forward)
	src, err := os.ReadFile("testdata/bad_address_space.metal")
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.NewLibrary("bad_address_space.metal", src)
	if err == nil {
		t.Fatal("a threadgroup pointer passed as a device pointer compiled")
	}
	if !strings.Contains(err.Error(), "bad_address_space.metal:12:") {
		t.Errorf("the diagnostic does not point at the .metal line: %v", err)
	}
}

func TestEmuEncoderMistakesAreReported(t *testing.T) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "missing_barrier")
	if err != nil {
		t.Fatal(err)
	}
	buf := mustBuffer(t, d, 16)
	one := device.Size{Width: 1, Height: 1, Depth: 1}
	cases := []struct {
		name   string
		encode func(device.Encoder)
		want   string
	}{
		{"dispatch without pipeline", func(e device.Encoder) { e.Dispatch(one, one) }, "before SetPipeline"},
		{"buffer index", func(e device.Encoder) { e.SetBuffer(buf, 0, 31) }, "index 31"},
		{"offset", func(e device.Encoder) { e.SetBuffer(buf, 16, 0) }, "offset 16"},
		{"set bytes size", func(e device.Encoder) { e.SetBytes(make([]byte, 5000), 1) }, "5000 bytes"},
		{"threads", func(e device.Encoder) {
			e.SetPipeline(p)
			e.Dispatch(one, device.Size{Width: 2048, Height: 1, Depth: 1})
		}, "threads per threadgroup"},
		{"threadgroup memory", func(e device.Encoder) { e.SetThreadgroupMemoryLength(64<<10, 0) }, "bytes at index"},
	}
	for _, c := range cases {
		cb, _ := d.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		c.encode(enc)
		enc.End()
		cb.Commit()
		if err := cb.Wait(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Wait() = %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

func TestPrepareRewrites(t *testing.T) {
	src := `kernel void k(device float* a [[buffer(1)]], device float* b, uint i [[thread_position_in_grid]]) {
    threadgroup half t[4];
    threadgroup half* p = t;
    a[i] = (float4)b[i] + 1.5h;
}`
	got := prepare("k.metal", src)
	for _, want := range []string{
		`#line 1 "k.metal"`,
		`[[msl_attr_buffer(1)]]`,
		`device float* b [[msl_attr_buffer(0)]]`,
		`[[msl_attr_thread_position_in_grid]]`,
		`MSL_TG_STATIC threadgroup half t[4]; ::msl_rt::tg_poison(&t, sizeof(t));`,
		"\n    threadgroup half* p = t;",
		`::metal::detail::Cast<float4>{}->*b[i]`,
		`half(1.5f)`,
	} {
		if !strings.Contains(got.source, want) {
			t.Errorf("prepared source lacks %q:\n%s", want, got.source)
		}
	}
	if strings.Count(got.source, "\n") != strings.Count(src, "\n")+1 {
		t.Errorf("the rewrite changed the line count")
	}
	if len(got.kernels) != 1 || got.kernels[0] != "k" {
		t.Errorf("kernels = %v", got.kernels)
	}
}

func TestEmuMultiplyAccumulateResultsStayInTheirGroup(t *testing.T) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "one_mma_per_group")
	if err != nil {
		t.Fatal(err)
	}
	const groups = 3
	out := mustBuffer(t, d, 4*64*groups)
	cb, _ := d.NewCommandBuffer()
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p)
	enc.SetBuffer(out, 0, 0)
	enc.Dispatch(device.Size{Width: groups, Height: 1, Depth: 1}, device.Size{Width: 32, Height: 1, Depth: 1})
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		t.Fatal(err)
	}
	v := device.View[float32](out)
	for g := 0; g < groups; g++ {
		for i := 0; i < 64; i++ {
			want := float32(8 * (g + 1))
			if i/8 == i%8 {
				want++
			}
			if v[64*g+i] != want {
				t.Fatalf("group %d element (%d,%d) = %v, want %v", g, i/8, i%8, v[64*g+i], want)
			}
		}
	}
}

func TestEmuSeveralWorkerThreadsGiveTheSameResults(t *testing.T) {
	results := map[int][]float32{}
	for _, workers := range []int{1, 2} {
		dev, err := NewDevice(Options{Workers: workers})
		if errors.Is(err, ErrNoCompiler) {
			t.Skipf("Metal emulator unavailable: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		p, err := dev.Pipeline(testLibrary(t, dev, "selftest.metal"), "one_mma_per_group")
		if err != nil {
			t.Fatal(err)
		}
		const groups = 16
		out := mustBuffer(t, dev, 4*64*groups)
		cb, _ := dev.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		enc.SetPipeline(p)
		enc.SetBuffer(out, 0, 0)
		enc.Dispatch(device.Size{Width: groups, Height: 1, Depth: 1}, device.Size{Width: 32, Height: 1, Depth: 1})
		enc.End()
		cb.Commit()
		if err := cb.Wait(); err != nil {
			t.Fatal(err)
		}
		results[workers] = append([]float32(nil), device.View[float32](out)...)
	}
	for i, v := range results[1] {
		if results[2][i] != v {
			t.Fatalf("element %d: %v with one worker thread, %v with two", i, v, results[2][i])
		}
	}
}

// writeFloats runs write_floats over a buffer of length floats, writing count of them.
func writeFloats(t *testing.T, length, count int) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "write_floats")
	if err != nil {
		t.Fatal(err)
	}
	out := mustBuffer(t, d, 4*length)
	n := uint32(count)
	cb, _ := d.NewCommandBuffer()
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p)
	enc.SetBuffer(out, 0, 0)
	enc.SetBytes(device.StructBytes(&n), 1)
	one := device.Size{Width: 1, Height: 1, Depth: 1}
	enc.Dispatch(one, one)
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestEmuBufferOverrunFaults(t *testing.T) {
	if os.Getenv("EASEL_EMU_OVERRUN_CHILD") == "1" {
		writeFloats(t, 1000, 1000+4) // 16 bytes past the end: into the guard page
		return
	}
	writeFloats(t, 1000, 1000) // in bounds: fine
	cmd := exec.Command(os.Args[0], "-test.run=^TestEmuBufferOverrunFaults$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EASEL_EMU_OVERRUN_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a kernel writing past the end of its buffer did not fault:\n%s", out)
	}
	if !strings.Contains(string(out), "SIGSEGV") {
		t.Errorf("the overrun failed without a SIGSEGV report:\n%s", out)
	}
}

func TestEmuNoCopyBufferSharesTheCallersMemory(t *testing.T) {
	d := testDevice(t, Forward)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "write_floats")
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	mapped, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	heap := make([]byte, 4*page) // Go memory: an aligned page inside it is pinned while wrapped
	off := (page - int(uintptr(unsafe.Pointer(&heap[0]))%uintptr(page))) % page
	for name, mem := range map[string][]byte{"mapping": mapped, "go heap": heap[off : off+page]} {
		buf, err := d.NewBufferNoCopy(mem)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := uint32(len(mem) / 4)
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
		buf.Release()
		for i := 0; i < len(mem); i += 4 {
			if got := *(*float32)(unsafe.Pointer(&mem[i])); got != 1 {
				t.Fatalf("%s: float %d = %v after the kernel wrote 1 through the no-copy buffer", name, i/4, got)
			}
		}
	}
	for _, bad := range [][]byte{mapped[:page/2], mapped[16 : 16+page], nil} {
		if _, err := d.NewBufferNoCopy(bad); err == nil || !strings.Contains(err.Error(), "page boundaries") {
			t.Errorf("NewBufferNoCopy(%d bytes) error = %v, want a page-boundary error", len(bad), err)
		}
	}
}

func TestEmuLimitsAreReportedAndEnforced(t *testing.T) {
	limits := device.Limits{MaxBufferLength: 1 << 20, RecommendedMaxWorkingSetSize: 3 << 20}
	d, err := NewDevice(Options{Limits: limits})
	if errors.Is(err, ErrNoCompiler) {
		t.Skipf("Metal emulator unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if d.Limits() != limits {
		t.Errorf("Limits() = %+v, want %+v", d.Limits(), limits)
	}
	if b, err := d.NewBuffer(1 << 20); err != nil {
		t.Errorf("a buffer of exactly maxBufferLength: %v", err)
	} else {
		b.Release()
	}
	if _, err := d.NewBuffer(1<<20 + 1); err == nil || !strings.Contains(err.Error(), "maxBufferLength") {
		t.Errorf("a buffer past maxBufferLength: error = %v", err)
	}
}

func TestEmuDispatchThreadsShrinksEdgeGroups(t *testing.T) {
	d := testDevice(t, Shuffled)
	p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "grid_probe")
	if err != nil {
		t.Fatal(err)
	}
	const w, h, tw, th = 70, 3, 32, 2
	out := mustBuffer(t, d, 4*5*(w*h+1))
	for i := range out.Bytes() {
		out.Bytes()[i] = 0xff
	}
	cb, _ := d.NewCommandBuffer()
	enc := cb.ComputeEncoder()
	enc.SetPipeline(p)
	enc.SetBuffer(out, 0, 0)
	enc.DispatchThreads(device.Size{Width: w, Height: h, Depth: 1}, device.Size{Width: tw, Height: th, Depth: 1})
	enc.End()
	cb.Commit()
	if err := cb.Wait(); err != nil {
		t.Fatal(err)
	}
	v := device.View[uint32](out)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			gw, gh := min(tw, w-x/tw*tw), min(th, h-y/th*th) // this thread's group size
			tid := (y%th)*gw + x%tw
			n := gw * gh
			lanes := min(32, n-tid/32*32)
			want := []uint32{uint32(gw), uint32(gh), uint32(tid), uint32(lanes), w*1000 + h}
			got := v[5*(y*w+x) : 5*(y*w+x)+5]
			if !slices.Equal(got, want) {
				t.Fatalf("thread (%d,%d): group size, index, simd lanes, grid = %v, want %v", x, y, got, want)
			}
		}
	}
	for i := 5 * w * h; i < len(v); i++ {
		if v[i] != 0xffffffff {
			t.Fatalf("a thread outside the %dx%d grid wrote out[%d]", w, h, i)
		}
	}
}

func TestEmuFiberStackOverflowFaults(t *testing.T) {
	if os.Getenv("EASEL_EMU_STACK_CHILD") == "1" {
		d := testDevice(t, Forward)
		p, err := d.Pipeline(testLibrary(t, d, "selftest.metal"), "deep_stack")
		if err != nil {
			t.Fatal(err)
		}
		out := mustBuffer(t, d, 4*64)
		n := uint32(20480) // an 80 KiB array: past the 64 KiB fiber stack
		cb, _ := d.NewCommandBuffer()
		enc := cb.ComputeEncoder()
		enc.SetPipeline(p)
		enc.SetBuffer(out, 0, 0)
		enc.SetBytes(device.StructBytes(&n), 1)
		enc.Dispatch(device.Size{Width: 1, Height: 1, Depth: 1}, device.Size{Width: 64, Height: 1, Depth: 1})
		enc.End()
		cb.Commit()
		cb.Wait()
		return
	}
	testDevice(t, Forward) // skips without a compiler
	cmd := exec.Command(os.Args[0], "-test.run=^TestEmuFiberStackOverflowFaults$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EASEL_EMU_STACK_CHILD=1")
	msg, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("a kernel overflowing its fiber stack did not fault:\n%s", msg)
	}
	if !strings.Contains(string(msg), "SIGSEGV") {
		t.Errorf("the stack overflow failed without a SIGSEGV report:\n%s", msg)
	}
}

// With EASEL_REQUIRE_EMULATOR=1 a missing compiler is a failure, not the skip signal.
func TestRequiredEmulatorIsNotSkippable(t *testing.T) {
	t.Setenv("EASEL_MSL_CXX", "/nonexistent/clang++")
	t.Setenv(RequiredEnv, "")
	if _, err := NewDevice(Options{}); !errors.Is(err, ErrNoCompiler) {
		t.Fatalf("without the requirement: %v, want ErrNoCompiler (skip)", err)
	}
	t.Setenv(RequiredEnv, "1")
	_, err := NewDevice(Options{})
	if err == nil || errors.Is(err, ErrNoCompiler) || !strings.Contains(err.Error(), RequiredEnv) {
		t.Fatalf("with the requirement: %v, want an error that is not the skip signal", err)
	}
}

// TestEmuLiveBuffersCountsWhatIsNotReleased: every buffer made counts until its first Release;
// LiveNoCopyBuffers counts the no-copy ones alone.
func TestEmuLiveBuffersCountsWhatIsNotReleased(t *testing.T) {
	d := testDevice(t, Forward).(*Device)
	if n, b := d.LiveBuffers(); n != 0 || b != 0 {
		t.Fatalf("a new device has %d live buffers (%d bytes)", n, b)
	}
	a, err := d.NewBuffer(100)
	if err != nil {
		t.Fatal(err)
	}
	page := os.Getpagesize()
	mapped, err := syscall.Mmap(-1, 0, page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	nc, err := d.NewBufferNoCopy(mapped)
	if err != nil {
		t.Fatal(err)
	}
	if n, b := d.LiveBuffers(); n != 2 || b != int64(100+page) {
		t.Errorf("two buffers: %d live (%d bytes), want 2 (%d)", n, b, 100+page)
	}
	if n, b := d.LiveNoCopyBuffers(); n != 1 || b != int64(page) {
		t.Errorf("one no-copy buffer: %d live (%d bytes), want 1 (%d)", n, b, page)
	}
	a.Release()
	a.Release() // a second Release is harmless and not counted twice
	if n, b := d.LiveBuffers(); n != 1 || b != int64(page) {
		t.Errorf("after releasing one: %d live (%d bytes), want 1 (%d)", n, b, page)
	}
	if n, b := d.LiveNoCopyBuffers(); n != 1 || b != int64(page) {
		t.Errorf("after releasing the copied one: %d live no-copy (%d bytes), want 1 (%d)", n, b, page)
	}
	nc.Release()
	nc.Release()
	if n, b := d.LiveBuffers(); n != 0 || b != 0 {
		t.Errorf("after releasing both: %d live (%d bytes)", n, b)
	}
	if n, b := d.LiveNoCopyBuffers(); n != 0 || b != 0 {
		t.Errorf("after releasing both: %d live no-copy (%d bytes)", n, b)
	}
}
