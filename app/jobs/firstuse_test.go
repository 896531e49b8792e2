package jobs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/app/backend"
	"easel/engine/convert"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
	"easel/internal/testdevice"
	"easel/kernels/emu"
)

// TestEmuFirstMetalUseTunesOncePerGeometry runs the window's queue with the real generator on the
// Metal emulator (the tiny model, q4tp weights), with the self-test and tuning caches in a
// temporary folder: the first job runs the GPU self-test, then tunes the kernels for its
// geometry class, reporting both as status lines, and caches both; a second job of the same size
// reads the caches (no self-test, no tuning); a job of another size tunes its class; a job of a
// third size cancelled while it tunes is cancelled and caches nothing. Which variant wins says
// nothing here (the emulator's times are CPU time).
func TestEmuFirstMetalUseTunesOncePerGeometry(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model on the Metal emulator")
	}
	testdevice.Device(t, emu.Options{}) // skips without the emulator's compiler
	t.Setenv(backend.AutoTuneEnv, "")
	for _, c := range backend.TunedClasses {
		t.Setenv(metal.ForceEnv(c), "")
	}
	dir := t.TempDir()
	gen := &ModelGenerator{Path: soakModel(t, convert.ProfileCortiq), Backend: backend.Emulator,
		SelfTestDir: filepath.Join(dir, "selftest"), TuneDir: filepath.Join(dir, "tuning")}
	defer gen.Close()
	rec := newRecorder()
	tuning := make(chan ID, 64)
	q := New(gen, func(u Update) {
		if u.Status != nil && strings.HasPrefix(u.Status.Line, "Tuning for this Mac") {
			select {
			case tuning <- u.Job.ID:
			default:
			}
		}
		rec.notify(u)
	})
	defer q.Close()
	cached := func(sub string) int {
		es, _ := os.ReadDir(filepath.Join(dir, sub))
		n := 0
		for _, e := range es {
			if strings.HasSuffix(e.Name(), ".json") {
				n++
			}
		}
		return n
	}
	lines := func(id ID, prefix string) int {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		n := 0
		for _, u := range rec.updates {
			if u.Job.ID == id && u.Status != nil && strings.HasPrefix(u.Status.Line, prefix) {
				n++
			}
		}
		return n
	}
	run := func(w, h int) (Job, string) {
		t.Helper()
		id, err := q.Submit(pipeline.Request{Prompt: "a lighthouse", Width: w, Height: h, Steps: 2, Seed: 3}, "first use")
		if err != nil {
			t.Fatal(err)
		}
		j := <-rec.finished
		if j.ID != id || j.State != Done {
			t.Fatalf("job %d (%d×%d) ended %v: %v", j.ID, w, h, j.State, j.Err)
		}
		r, geometry := gen.Tuning()
		if r == nil || r.Key.Geometry != geometry || len(r.Choices) != len(backend.TunedClasses) {
			t.Fatalf("job %d ran with the choice %+v for %q", id, r, geometry)
		}
		for _, c := range r.Choices {
			timed := 0
			for _, v := range c.Results {
				if v.Skipped == "" && v.MS > 0 {
					timed++
				}
			}
			if timed == 0 {
				t.Errorf("job %d: no %s variant was timed: %+v", id, c.Class, c.Results)
			}
		}
		return j, geometry
	}

	j1, g1 := run(64, 64)
	if lines(j1.ID, "Checking the GPU") == 0 || lines(j1.ID, "Tuning for this Mac") == 0 {
		t.Errorf("the first job reported %d self-test and %d tuning lines, want some of each", lines(j1.ID, "Checking the GPU"), lines(j1.ID, "Tuning for this Mac"))
	}
	if cached("selftest") != 1 || cached("tuning") != 1 {
		t.Fatalf("after the first job: %d self-tests and %d tunings cached, want 1 and 1", cached("selftest"), cached("tuning"))
	}
	if gen.MetalDevice() == "" || backend.FirstUseSummary(dir, gen.MetalDevice()) == "" {
		t.Errorf("no first-use summary for %q", gen.MetalDevice())
	}

	j2, g2 := run(64, 64)
	if g2 != g1 || lines(j2.ID, "Checking the GPU")+lines(j2.ID, "Tuning for this Mac") != 0 || cached("tuning") != 1 {
		t.Errorf("the second job of the same size: class %q (first %q), %d self-test and %d tuning lines, %d tunings cached; want the caches read",
			g2, g1, lines(j2.ID, "Checking the GPU"), lines(j2.ID, "Tuning for this Mac"), cached("tuning"))
	}

	j3, g3 := run(128, 64)
	if g3 == g1 || lines(j3.ID, "Tuning for this Mac") == 0 || cached("tuning") != 2 {
		t.Errorf("a job of another size: class %q (first %q), %d tuning lines, %d tunings cached; want its class tuned and cached",
			g3, g1, lines(j3.ID, "Tuning for this Mac"), cached("tuning"))
	}
	for _, r := range backend.TunedFor(filepath.Join(dir, "tuning"), gen.MetalDevice()) {
		t.Logf("tuned in %.1f s of emulator time: %s", r.Seconds, r.Summary())
	}

	// A job of a third size, cancelled while it tunes.
	for len(tuning) > 0 {
		<-tuning
	}
	id, err := q.Submit(pipeline.Request{Prompt: "a lighthouse", Width: 128, Height: 128, Steps: 2, Seed: 3}, "cancelled")
	if err != nil {
		t.Fatal(err)
	}
	for got := <-tuning; got != id; got = <-tuning {
	}
	q.Cancel(id)
	if j := <-rec.finished; j.ID != id || j.State != Cancelled {
		t.Fatalf("the job cancelled while tuning ended %v: %v", j.State, j.Err)
	}
	if cached("tuning") != 2 {
		t.Errorf("a cancelled tuning cached a choice: %d tunings cached, want 2", cached("tuning"))
	}
}
