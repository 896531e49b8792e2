package jobs

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"easel/engine/pipeline"
)

// fakeGen is a generator under the test's control: each run announces itself on started, sends
// Steps events, then waits for a release (or its context) before it returns.
type fakeGen struct {
	steps   int
	started chan string // the prompt of each run as it starts
	release chan struct{}

	mu     sync.Mutex
	active int // runs that have not returned
	order  []string
}

func newFakeGen(steps int) *fakeGen {
	return &fakeGen{steps: steps, started: make(chan string, 16), release: make(chan struct{}, 16)}
}

func (g *fakeGen) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	defer close(events)
	g.mu.Lock()
	g.active++
	g.order = append(g.order, req.Prompt)
	g.mu.Unlock()
	defer func() { g.mu.Lock(); g.active--; g.mu.Unlock() }()
	g.started <- req.Prompt
	for i := 1; i <= g.steps; i++ {
		events <- pipeline.Event{Stage: pipeline.StageDenoising, Step: i, Steps: g.steps}
	}
	select {
	case <-g.release:
		return &pipeline.Result{Width: 64, Height: 64, Seed: req.Seed}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// recorder keeps every update and signals each finished job.
type recorder struct {
	mu       sync.Mutex
	updates  []Update
	finished chan Job
}

func newRecorder() *recorder { return &recorder{finished: make(chan Job, 16)} }

func (r *recorder) notify(u Update) {
	r.mu.Lock()
	r.updates = append(r.updates, u)
	r.mu.Unlock()
	if u.Event == nil && u.Job.State.Finished() {
		r.finished <- u.Job
	}
}

func (r *recorder) statesOf(id ID) []State {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []State
	for _, u := range r.updates {
		if u.Job.ID == id && u.Event == nil && u.Status == nil {
			out = append(out, u.Job.State)
		}
	}
	return out
}

func (r *recorder) stepsOf(id ID) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for _, u := range r.updates {
		if u.Job.ID == id && u.Event != nil {
			out = append(out, u.Event.Step)
		}
	}
	return out
}

func submit(t *testing.T, q *Queue, prompt string) ID {
	t.Helper()
	id, err := q.Submit(pipeline.Request{Prompt: prompt}, prompt)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func equalStates(a, b []State) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Jobs run one at a time in submission order; each reports queued → running → its events →
// done, and the listener sees the events in step order.
func TestJobsRunInOrderOneAtATime(t *testing.T) {
	gen, rec := newFakeGen(3), newRecorder()
	q := New(gen, rec.notify)
	defer q.Close()
	a, b, c := submit(t, q, "a"), submit(t, q, "b"), submit(t, q, "c")
	for _, want := range []string{"a", "b", "c"} {
		if got := <-gen.started; got != want {
			t.Fatalf("started %q, want %q", got, want)
		}
		gen.mu.Lock()
		active := gen.active
		gen.mu.Unlock()
		if active != 1 {
			t.Fatalf("%d generations at once, want 1", active)
		}
		gen.release <- struct{}{}
		if j := <-rec.finished; j.State != Done || j.Result == nil {
			t.Fatalf("job %d ended %v (%v), want done with a result", j.ID, j.State, j.Err)
		}
	}
	for _, id := range []ID{a, b, c} {
		if got, want := rec.statesOf(id), []State{Queued, Running, Done}; !equalStates(got, want) {
			t.Errorf("job %d states %v, want %v", id, got, want)
		}
		if got := rec.stepsOf(id); len(got) != 3 || got[0] != 1 || got[2] != 3 {
			t.Errorf("job %d events at steps %v, want [1 2 3]", id, got)
		}
	}
	if n := q.Pending(); n != 0 {
		t.Errorf("%d jobs pending after all finished", n)
	}
}

// Cancelling a queued job removes it from the run order; cancelling the running one stops it
// and the next one starts.
func TestCancelQueuedAndRunning(t *testing.T) {
	gen, rec := newFakeGen(1), newRecorder()
	q := New(gen, rec.notify)
	defer q.Close()
	first := submit(t, q, "first")
	second := submit(t, q, "second")
	third := submit(t, q, "third")
	if got := <-gen.started; got != "first" {
		t.Fatalf("started %q first", got)
	}
	if !q.Cancel(second) {
		t.Fatal("the queued job could not be cancelled")
	}
	if j := <-rec.finished; j.ID != second || j.State != Cancelled || !errors.Is(j.Err, context.Canceled) {
		t.Fatalf("job %d %v (%v), want job %d cancelled", j.ID, j.State, j.Err, second)
	}
	if !q.Cancel(first) {
		t.Fatal("the running job could not be cancelled")
	}
	if j := <-rec.finished; j.ID != first || j.State != Cancelled {
		t.Fatalf("job %d %v (%v), want job %d cancelled", j.ID, j.State, j.Err, first)
	}
	if got := <-gen.started; got != "third" {
		t.Fatalf("after cancelling, %q started, want third", got)
	}
	gen.release <- struct{}{}
	if j := <-rec.finished; j.ID != third || j.State != Done {
		t.Fatalf("job %d %v, want job %d done", j.ID, j.State, third)
	}
	if q.Cancel(third) {
		t.Error("a finished job reported as cancellable")
	}
	gen.mu.Lock()
	defer gen.mu.Unlock()
	if len(gen.order) != 2 {
		t.Errorf("the generator ran %v, want only first and third", gen.order)
	}
}

// A generator error fails the job with that error; the queue goes on.
func TestFailedJobKeepsItsError(t *testing.T) {
	boom := errors.New("model file is truncated")
	rec := newRecorder()
	q := New(GeneratorFunc(func(ctx context.Context, req pipeline.Request, ev chan<- pipeline.Event) (*pipeline.Result, error) {
		close(ev)
		if req.Prompt == "bad" {
			return nil, boom
		}
		return &pipeline.Result{}, nil
	}), rec.notify)
	defer q.Close()
	submit(t, q, "bad")
	submit(t, q, "good")
	if j := <-rec.finished; j.State != Failed || !errors.Is(j.Err, boom) {
		t.Fatalf("bad job %v (%v), want failed with the generator's error", j.State, j.Err)
	}
	if j := <-rec.finished; j.State != Done {
		t.Fatalf("good job %v after a failure, want done", j.State)
	}
}

// Close cancels the running and queued jobs and returns only after the generator has returned:
// no generation and no worker outlives the queue.
func TestCloseStopsEverythingAndLeavesNoGeneration(t *testing.T) {
	gen, rec := newFakeGen(2), newRecorder()
	q := New(gen, rec.notify)
	submit(t, q, "running")
	submit(t, q, "waiting")
	<-gen.started
	q.Close()
	gen.mu.Lock()
	active := gen.active
	gen.mu.Unlock()
	if active != 0 {
		t.Errorf("%d generations still running after Close", active)
	}
	for _, j := range q.Jobs() {
		if j.State != Cancelled {
			t.Errorf("job %d (%s) is %v after Close, want cancelled", j.ID, j.Label, j.State)
		}
	}
	if _, err := q.Submit(pipeline.Request{}, "late"); !errors.Is(err, ErrClosed) {
		t.Errorf("Submit after Close: %v, want ErrClosed", err)
	}
	q.Close() // a second Close returns too
	select {
	case <-q.done:
	default:
		t.Error("the worker goroutine is still alive after Close")
	}
}

// The queue keeps the newest KeepFinished finished jobs and forgets older ones (their images and
// condition images with them); jobs still queued or running are always kept.
func TestQueueForgetsOldFinishedJobs(t *testing.T) {
	gen := GeneratorFunc(func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
		close(events)
		return &pipeline.Result{Width: 64, Height: 64, Seed: req.Seed}, nil
	})
	rec := newRecorder()
	q := New(gen, rec.notify)
	defer q.Close()
	total := KeepFinished + 5
	var last ID
	for i := range total {
		id, err := q.Submit(pipeline.Request{Prompt: "x", Seed: uint64(i)}, "x")
		if err != nil {
			t.Fatal(err)
		}
		if j := <-rec.finished; j.ID != id || j.State != Done || j.Result == nil {
			t.Fatalf("job %d: %v %v", id, j.State, j.Err)
		}
		last = id
	}
	cancelled := submit(t, q, "cancelled while queued") // may start at once; either way it finishes
	q.Cancel(cancelled)
	<-rec.finished
	all := q.Jobs()
	if len(all) != KeepFinished {
		t.Fatalf("%d jobs kept after %d finished, want %d", len(all), total+1, KeepFinished)
	}
	if all[len(all)-1].ID != cancelled || all[len(all)-2].ID != last || all[0].ID != cancelled-KeepFinished+1 {
		t.Errorf("kept jobs %d…%d, want the newest %d (%d…%d)", all[0].ID, all[len(all)-1].ID, KeepFinished, cancelled-KeepFinished+1, cancelled)
	}
}

// A generator that panics without closing its event channel fails its job with the panic as a
// bug report, keeps the events it sent, lets the next job run, and leaves no goroutine behind.
func TestPanickingGeneratorFailsOneJobAndLeavesNothingRunning(t *testing.T) {
	before := runtime.NumGoroutine()
	rec := newRecorder()
	q := New(GeneratorFunc(func(ctx context.Context, req pipeline.Request, ev chan<- pipeline.Event) (*pipeline.Result, error) {
		if req.Prompt == "bad" {
			ev <- pipeline.Event{Stage: pipeline.StageDenoising, Step: 1, Steps: 2}
			panic("index out of range in a generator")
		}
		close(ev)
		return &pipeline.Result{}, nil
	}), rec.notify)
	bad := submit(t, q, "bad")
	submit(t, q, "good")
	if j := <-rec.finished; j.State != Failed || j.Err == nil || !strings.Contains(j.Err.Error(), "index out of range in a generator") {
		t.Fatalf("panicking job %v (%v), want failed naming the panic", j.State, j.Err)
	}
	if j := <-rec.finished; j.State != Done {
		t.Fatalf("job after the panic %v (%v), want done", j.State, j.Err)
	}
	if got := rec.stepsOf(bad); len(got) != 1 || got[0] != 1 {
		t.Errorf("events of the panicking job %v, want its one step", got)
	}
	q.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before the queue: something still waits on the panicked run", n, before)
	}
}
