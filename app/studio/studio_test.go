package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

const testToken = "0123456789abcdef-test-token"

// startTestHub runs a loopback hub with a token in a temporary folder.
func startTestHub(t testing.TB, cfg HubConfig) *Hub {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Data == "" {
		cfg.Data = t.TempDir()
	}
	h, err := StartHub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	return h
}

func dial(t testing.TB, h *Hub, role Role, token string) *Conn {
	t.Helper()
	c, err := Dial(context.Background(), h.URL(), DialOptions{Role: role, Token: token, Pin: h.Fingerprint, Name: string(role)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

var testFP = Fingerprint{Easel: "test", Model: "model-a"}

// echoRenderer "renders" a job into its own request bytes after the given steps, each gated by
// step (nil: no gate).
func echoRenderer(steps int, gate func(ctx context.Context, job *Job, step int) error) Renderer {
	return RenderFunc(func(ctx context.Context, job *Job, _ Inputs, progress func(Step)) ([]byte, error) {
		for s := 1; s <= steps; s++ {
			if gate != nil {
				if err := gate(ctx, job, s); err != nil {
					return nil, err
				}
			}
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			st := Step{N: s, Of: steps}
			if job.Previews {
				st.Preview = []byte(fmt.Sprintf("preview %d", s))
			}
			progress(st)
		}
		return []byte(fmt.Sprintf("image %s/%d", job.Batch, job.Index)), nil
	})
}

// startWorker runs a worker until the test ends (or stop is called).
func startWorker(t testing.TB, h *Hub, name string, fp Fingerprint, r Renderer) (stop func()) {
	t.Helper()
	c := dial(t, h, RoleWorker, testToken)
	w := &Worker{Name: name, Model: "m.cmf", Fingerprint: fp, Renderer: r, FetchWait: 500 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		if err := w.Run(ctx, c); err != nil {
			t.Errorf("worker %s: %v", name, err)
		}
	}()
	// wait (bounded) until its status is on the hub, so clients see it
	waitFor(t, 10*time.Second, func() bool {
		ws, _ := dial(t, h, RoleClient, testToken).Workers(context.Background())
		for _, s := range ws {
			if s.Name == name {
				return true
			}
		}
		return false
	})
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-finished }) }
	t.Cleanup(stop)
	return stop
}

// waitFor polls cond (a bounded wait on state the hub holds, not a sleep for synchronisation).
func waitFor(t testing.TB, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func makeJobs(n int, fp Fingerprint) []*Job {
	batch := NewBatchID()
	jobs := make([]*Job, n)
	for i := range jobs {
		req, _ := json.Marshal(map[string]int{"seed": 100 + i})
		jobs[i] = &Job{Batch: batch, Index: i, Images: n, Fingerprint: fp, Request: req}
	}
	return jobs
}

func TestBatchOverThreeWorkersArrivesOnceEach(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	// Image 5 asks for previews; its render waits after step 1 until the client has seen the
	// step's preview (progress after a result is dropped, and a stand-in renders at once).
	seen := make(chan struct{})
	var seenOnce sync.Once
	gate := func(ctx context.Context, job *Job, step int) error {
		if job.Index == 5 && step == 2 {
			select {
			case <-seen:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("the client never saw image 5's first preview")
			}
		}
		return nil
	}
	for _, n := range []string{"mac-a", "mac-b", "mac-c"} {
		startWorker(t, h, n, testFP, echoRenderer(2, gate))
	}
	client := dial(t, h, RoleClient, testToken)
	jobs := makeJobs(24, testFP)
	jobs[5].Previews = true
	previews := 0
	got := map[int]string{}
	by := map[string]int{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := client.Run(ctx, jobs, func(ev Event) {
		if ev.Kind == EventProgress && ev.PNG != nil {
			if ev.Index != 5 || string(ev.PNG) != fmt.Sprintf("preview %d", ev.Step) {
				t.Errorf("preview %q with image %d's step %d", ev.PNG, ev.Index, ev.Step)
			}
			previews++
			seenOnce.Do(func() { close(seen) })
		}
		if ev.Kind == EventResult {
			if _, dup := got[ev.Index]; dup {
				t.Errorf("image %d reported twice", ev.Index)
			}
			got[ev.Index] = string(ev.PNG)
			by[ev.Worker]++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 24 {
		t.Fatalf("%d results, want 24", len(got))
	}
	for i, j := range jobs {
		if want := fmt.Sprintf("image %s/%d", j.Batch, i); got[i] != want {
			t.Errorf("image %d: %q, want %q", i, got[i], want)
		}
	}
	if previews == 0 {
		t.Error("no preview came back for the image that asked for them")
	}
	t.Logf("images per worker: %v", by)
}

// A worker holds off sleep (Hold) exactly while it holds a job: taken after the hold, the hold
// released once the result is in.
func TestWorkerHoldsWhileRendering(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	var mu sync.Mutex
	held, holds := 0, 0
	r := RenderFunc(func(ctx context.Context, job *Job, _ Inputs, progress func(Step)) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if held != 1 {
			t.Errorf("rendering with %d holds, want 1", held)
		}
		return []byte("png"), nil
	})
	c := dial(t, h, RoleWorker, testToken)
	w := &Worker{Name: "mac-a", Fingerprint: testFP, Renderer: r, FetchWait: 500 * time.Millisecond,
		Hold: func(string) func() {
			mu.Lock()
			held++
			holds++
			mu.Unlock()
			return func() { mu.Lock(); held--; mu.Unlock() }
		}}
	finished := make(chan struct{})
	events := make(chan WorkerEvent, 16)
	w.OnEvent = func(e WorkerEvent) { events <- e }
	ctx, cancel := context.WithCancel(context.Background())
	go func() { defer close(finished); w.Run(ctx, c) }()
	client := dial(t, h, RoleClient, testToken)
	waitFor(t, 10*time.Second, func() bool { return client.checkTaker(ctx, testFP) == nil })
	if err := client.Run(ctx, makeJobs(3, testFP), func(Event) {}); err != nil {
		t.Fatal(err)
	}
	for n := 0; n < 3; { // each job finished; Run returns after the last one is released
		if e := <-events; e.Kind == "finished" {
			n++
		}
	}
	cancel()
	<-finished
	mu.Lock()
	defer mu.Unlock()
	if holds != 3 || held != 0 {
		t.Errorf("%d holds for 3 jobs, %d still held after; want 3 and 0", holds, held)
	}
}

func TestNoMatchingWorkerIsReported(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	startWorker(t, h, "mac-a", Fingerprint{Easel: "test", Model: "other"}, echoRenderer(1, nil))
	client := dial(t, h, RoleClient, testToken)
	err := client.Run(context.Background(), makeJobs(2, testFP), func(Event) {})
	if !errors.Is(err, ErrNoWorker) || !strings.Contains(err.Error(), "mac-a") {
		t.Fatalf("got %v, want ErrNoWorker naming mac-a", err)
	}
}

// Two Macs with the same name are two rows in the status, not one.
func TestWorkersOfTheSameNameBothShow(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	startWorker(t, h, "Mac-mini", testFP, echoRenderer(1, nil))
	c := dial(t, h, RoleWorker, testToken)
	w := &Worker{Name: "Mac-mini", Fingerprint: testFP, Renderer: echoRenderer(1, nil), FetchWait: 500 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx, c) }()
	defer func() { cancel(); <-done }()
	client := dial(t, h, RoleClient, testToken)
	waitFor(t, 10*time.Second, func() bool {
		ws, _ := client.Workers(context.Background())
		return len(ws) == 2
	})
}
