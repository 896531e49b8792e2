package jobs

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/engine/pipeline/pipelinemetal"
	"easel/engine/qi21/qi21metal"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// Long sessions: many consecutive jobs in one process, through the real queue and pipeline on the
// tiny model, must leave memory and goroutines where they were after warm-up. These are soak
// tests, not timed tests: they assert growth bounds, never durations.
//
//	go test ./app/jobs -run Soak -soak.jobs=200 -v   # the full run on both (docs/BENCHMARKS.md)
//
// By default the CPU test runs 200 jobs (about 15 s of CPU) and the emulator test 32 (each job
// runs the Metal kernels on the CPU: about a second and a half of CPU per tiny job).
var soakJobs = flag.Int("soak.jobs", 0, "jobs in each soak test (0: 200 on the CPU, 32 on the Metal emulator); at least the warm-up plus one round of the mix")

// The job mix repeats every len(soakMix) jobs; KeepFinished is a multiple of it, so the finished
// jobs the queue keeps (with their images) hold the same sizes after warm-up as at the end, and any
// growth between the two samples is a leak, not retention.
var soakMix = []struct {
	w, h, steps int
	cfg         float64
	images      int
	cancel      bool // cancelled after its first step
}{
	{64, 64, 2, 1, 0, false},
	{96, 64, 2, 2.5, 1, false},
	{32, 64, 3, 1, 2, false},
	{64, 96, 8, 2.5, 0, true},
	{64, 32, 2, 2.5, 2, false},
	{32, 32, 2, 1, 1, false},
	{64, 64, 8, 2.5, 1, true},
	{96, 96, 2, 1, 0, false},
}

// soakWarmup jobs run before the first sample: the queue holds KeepFinished finished jobs by then,
// every size has been planned and every buffer pool has grown to its size (on the emulator the C
// heap settles last: RSS rose 8 MB between jobs 16 and 56 of the full run, then stayed flat).
var soakWarmup = KeepFinished + len(soakMix)

// Growth bounds after warm-up, over the rest of the run (chosen to catch a leaked prefix K/V
// cache — about 0.1–0.5 MB per tiny job — within a few dozen jobs, not the noise: measured growth
// is in docs/BENCHMARKS.md).
const (
	soakHeapGrowth = 2 << 20  // Go heap in use
	soakRSSGrowth  = 12 << 20 // resident set (Go heap, C allocations, the mapped model's pages)
)

func init() {
	if KeepFinished%len(soakMix) != 0 {
		panic("KeepFinished must be a multiple of the soak mix's length")
	}
}

// soakSample is one measurement after a full collection with memory returned to the OS.
type soakSample struct {
	rss, heap  int64
	goRuntime  int64 // memory the Go runtime holds from the OS (Sys − HeapReleased)
	goroutines int
	buffers    int
	bufBytes   int64
}

func (s soakSample) String() string {
	return fmt.Sprintf("RSS %.1f MB (Go runtime %.1f MB), Go heap %.2f MB, %d goroutines, %d live device buffers (%.2f MB)",
		float64(s.rss)/(1<<20), float64(s.goRuntime)/(1<<20), float64(s.heap)/(1<<20), s.goroutines, s.buffers, float64(s.bufBytes)/(1<<20))
}

// residentBytes is VmRSS from /proc/self/status (0 where there is none).
func residentBytes(t *testing.T) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmRSS %q: %v", v, err)
			}
			return kb << 10
		}
	}
	return 0
}

// liveBuffers is what an emulated device reports (0, 0 for a device without the counter).
type liveBuffers interface{ LiveBuffers() (int, int64) }

func sample(t *testing.T, dev liveBuffers) soakSample {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := soakSample{rss: residentBytes(t), heap: int64(ms.HeapAlloc), goRuntime: int64(ms.Sys - ms.HeapReleased), goroutines: runtime.NumGoroutine()}
	if dev != nil {
		s.buffers, s.bufBytes = dev.LiveBuffers()
	}
	return s
}

// soakImages are the condition images: two small RGBA gradients of different shapes.
func soakImages() []*image.NRGBA {
	var out []*image.NRGBA
	for k, size := range [][2]int{{48, 64}, {64, 40}} {
		img := image.NewNRGBA(image.Rect(0, 0, size[0], size[1]))
		for y := range size[1] {
			for x := range size[0] {
				img.SetNRGBA(x, y, color.NRGBA{uint8(4 * x), uint8(4 * y), uint8(80 * k), uint8(255 - 2*x)})
			}
		}
		out = append(out, img)
	}
	return out
}

// soakRecorder passes each finished job and each job's first step to the test.
type soakRecorder struct {
	mu        sync.Mutex
	firstStep map[ID]chan struct{}
	finished  chan Job
}

func (r *soakRecorder) notify(u Update) {
	if u.Event != nil && u.Event.Step == 1 {
		r.mu.Lock()
		if ch, ok := r.firstStep[u.Job.ID]; ok {
			close(ch)
			delete(r.firstStep, u.Job.ID)
		}
		r.mu.Unlock()
	}
	if u.Event == nil && u.Job.State.Finished() {
		r.finished <- u.Job
	}
}

// soak runs the jobs one after another through a queue on gen and checks the samples; after
// every job, check (may be nil) runs too.
func soak(t *testing.T, jobs int, gen Generator, dev liveBuffers, check func(i int, j Job)) {
	if *soakJobs > 0 {
		jobs = *soakJobs
	}
	// Whole rounds of the mix, so the queue keeps the same sizes at both samples.
	n := (max(jobs, soakWarmup+len(soakMix)) + len(soakMix) - 1) / len(soakMix) * len(soakMix)
	every := max(1, (n-soakWarmup)/len(soakMix)/4) * len(soakMix) // about four samples after warm-up
	attempts := 0
	images := soakImages()
	rec := &soakRecorder{firstStep: map[ID]chan struct{}{}, finished: make(chan Job, 1)}
	q := New(gen, rec.notify)
	defer q.Close()
	var warm soakSample
	cancelled, timeline := 0, []string{}
	start := time.Now()
	for i := range n {
		m := soakMix[i%len(soakMix)]
		req := pipeline.Request{Prompt: fmt.Sprintf("soak job %d: a paper crane, %d×%d", i, m.w, m.h),
			Width: m.w, Height: m.h, Steps: m.steps, CFG: m.cfg, Seed: uint64(i), Resolution: 64, Images: images[:m.images]}
		if m.cfg > 1 {
			req.NegativePrompt = "blurry"
		}
		first := make(chan struct{})
		rec.mu.Lock()
		id, err := q.Submit(req, "soak")
		if err != nil {
			rec.mu.Unlock()
			t.Fatal(err)
		}
		if m.cancel {
			rec.firstStep[id] = first
		}
		rec.mu.Unlock()
		if m.cancel {
			attempts++
			<-first
			q.Cancel(id)
		}
		j := <-rec.finished
		switch {
		case j.ID != id:
			t.Fatalf("job %d finished while waiting for %d", j.ID, id)
		case j.State == Cancelled && m.cancel:
			cancelled++
		case j.State != Done:
			t.Fatalf("job %d (%+v): %v: %v", i, m, j.State, j.Err)
		}
		if check != nil {
			check(i, j)
		}
		switch {
		case i+1 == soakWarmup:
			warm = sample(t, dev)
			timeline = append(timeline, fmt.Sprintf("after %d jobs (warm-up): %v", i+1, warm))
		case i+1 > soakWarmup && (i+1-soakWarmup)%every == 0 && i+1 < n:
			timeline = append(timeline, fmt.Sprintf("after %d jobs: %v", i+1, sample(t, dev)))
		}
	}
	// The last job's goroutines return just after it reports: give them a moment.
	end := sample(t, dev)
	for wait := time.Now(); end.goroutines > warm.goroutines && time.Since(wait) < 2*time.Second; {
		time.Sleep(20 * time.Millisecond)
		end = sample(t, dev)
	}
	for _, line := range timeline {
		t.Log(line)
	}
	t.Logf("end, %d jobs (%d cancelled) in %v: %v", n, cancelled, time.Since(start).Round(time.Second), end)
	t.Logf("growth after warm-up: RSS %+.2f MB, Go heap %+.3f MB, goroutines %+d, live buffers %+d",
		float64(end.rss-warm.rss)/(1<<20), float64(end.heap-warm.heap)/(1<<20), end.goroutines-warm.goroutines, end.buffers-warm.buffers)
	// A cancel lands within one op of the job's first step event; the job has 7 steps to go, so
	// (almost) every attempt stops its job. Half is the bound, for a very slow machine.
	if cancelled < attempts/2 {
		t.Errorf("%d of %d cancel attempts stopped their job (cancelled after step 1 of 8)", cancelled, attempts)
	}
	if end.goroutines > warm.goroutines {
		t.Errorf("goroutines grew from %d to %d", warm.goroutines, end.goroutines)
	}
	if g := end.heap - warm.heap; g > soakHeapGrowth {
		t.Errorf("Go heap grew %.2f MB over %d jobs after warm-up (bound %.0f MB)", float64(g)/(1<<20), n-soakWarmup, float64(soakHeapGrowth)/(1<<20))
	}
	if g := end.rss - warm.rss; warm.rss > 0 && g > soakRSSGrowth {
		t.Errorf("RSS grew %.2f MB over %d jobs after warm-up (bound %.0f MB)", float64(g)/(1<<20), n-soakWarmup, float64(soakRSSGrowth)/(1<<20))
	}
}

// soakModel converts the tiny reference snapshot with profile into the test's temporary folder.
func soakModel(t *testing.T, profile convert.Profile) string {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny-"+string(profile)+".cmf")
	if _, err := convert.Convert(context.Background(), snap, path, convert.Options{Profile: profile}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSoakCPU: consecutive jobs of the mix (sizes, CFG, zero to two condition images, some
// cancelled mid-run) through the queue and the real ModelGenerator on the CPU backend.
func TestSoakCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of generations")
	}
	gen := &ModelGenerator{Path: soakModel(t, convert.ProfileF16), Backend: settings.BackendCPU}
	defer gen.Close()
	soak(t, 200, gen, nil, nil)
}

// TestSoakEmuMetal: the same jobs with the denoiser on the emulated Metal device (the kernels the
// Mac runs, on the CPU); after every job the device holds exactly the buffers it held idle (the
// denoiser's auxiliary weights) and wraps no byte of the mapping (the weight arena each run makes
// is released after its last step), so no job leaves a program, a K/V cache, an activation
// buffer or its weights behind.
func TestSoakEmuMetal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of generations on the Metal emulator")
	}
	testdevice.EmulatorOnly(t, "live-buffer counts")
	dev := testdevice.Device(t, emu.Options{})
	counter, ok := dev.(liveBuffers)
	if !ok {
		t.Fatalf("the emulated device %T does not count its live buffers", dev)
	}
	f, err := cmf.Open(soakModel(t, convert.ProfileQ8))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k := metal.Knobs{Guards: metal.DefaultGuards}
	p, err := pipeline.New(f, cpu.New(), pipeline.Options{Denoiser: pipelinemetal.Denoiser(dev, f.Bytes(), qi21metal.Options{Knobs: &k})})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := p.DenoiserNotice(); !strings.Contains(n, "Metal") || strings.Contains(n, "declined") {
		t.Fatalf("the denoiser does not run on the emulated device: %q", n)
	}
	wrapped, ok := dev.(interface{ LiveNoCopyBuffers() (int, int64) })
	if !ok {
		t.Fatalf("the emulated device %T does not count its no-copy buffers", dev)
	}
	idle, idleBytes := counter.LiveBuffers()
	t.Logf("idle: %d live device buffers (%.2f MB: the denoiser's auxiliary weights)", idle, float64(idleBytes)/(1<<20))
	soak(t, 32, GeneratorFunc(p.Run), counter, func(i int, j Job) {
		if n, b := counter.LiveBuffers(); n != idle || b != idleBytes {
			t.Fatalf("after job %d (%v): %d live device buffers (%d bytes), idle is %d (%d bytes)", i, j.State, n, b, idle, idleBytes)
		}
		if n, b := wrapped.LiveNoCopyBuffers(); n != 0 || b != 0 {
			t.Fatalf("after job %d (%v): the device still wraps %d bytes of the mapping in %d buffers", i, j.State, b, n)
		}
	})
}
