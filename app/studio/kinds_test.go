package studio

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A worker pulls only the job kinds its renderer reads: a pipeline-only worker (the window lent
// to the studio) never takes a command line's flag job, which a worker of both kinds (easel
// studio join) renders; and a flag batch with only a pipeline-only worker is refused up front.
func TestWorkerTakesOnlyItsKinds(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	flagFP, pipeFP := testFP, testFP.WithKind(KindPipeline)
	if flagFP.Key() == pipeFP.Key() {
		t.Fatal("the two kinds share a subject")
	}
	var mu sync.Mutex
	took := map[string][]string{} // worker → the kinds of the jobs it rendered
	kindsOf := func(name string) Renderer {
		inner := echoRenderer(1, nil)
		return RenderFunc(func(ctx context.Context, job *Job, in Inputs, p func(Step)) ([]byte, error) {
			mu.Lock()
			took[name] = append(took[name], job.Fingerprint.Kind)
			mu.Unlock()
			return inner.Render(ctx, job, in, p)
		})
	}
	c := dial(t, h, RoleWorker, testToken)
	w := &Worker{Name: "window", Model: "m.cmf", Fingerprint: pipeFP, Kinds: []string{KindPipeline}, Renderer: kindsOf("window"), FetchWait: 300 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, c) }()
	client := dial(t, h, RoleClient, testToken)
	waitFor(t, 10*time.Second, func() bool {
		ws, _ := client.Workers(context.Background())
		return len(ws) == 1
	})
	rctx, rcancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer rcancel()
	if err := client.Run(rctx, makeJobs(2, flagFP), func(Event) {}); !errors.Is(err, ErrNoWorker) {
		t.Fatalf("a flag batch with only a pipeline worker: %v, want ErrNoWorker", err)
	}

	both := &Worker{Name: "cli", Model: "m.cmf", Fingerprint: testFP, Kinds: []string{KindFlags, KindPipeline}, Renderer: kindsOf("cli"), FetchWait: 300 * time.Millisecond}
	go func() { both.Run(ctx, dial(t, h, RoleWorker, testToken)) }()
	waitFor(t, 10*time.Second, func() bool {
		ws, _ := client.Workers(context.Background())
		return len(ws) == 2
	})
	for _, fp := range []Fingerprint{flagFP, pipeFP} {
		jobs := makeJobs(4, fp)
		got := 0
		if err := client.Run(rctx, jobs, func(ev Event) {
			if ev.Kind == EventResult {
				if want := fmt.Sprintf("image %s/%d", jobs[ev.Index].Batch, ev.Index); string(ev.PNG) != want {
					t.Errorf("kind %q image %d: %q, want %q", fp.Kind, ev.Index, ev.PNG, want)
				}
				got++
			}
		}); err != nil {
			t.Fatalf("kind %q: %v", fp.Kind, err)
		}
		if got != 4 {
			t.Errorf("kind %q: %d results, want 4", fp.Kind, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, k := range took["window"] {
		if k != KindPipeline {
			t.Errorf("the pipeline-only worker took a job of kind %q", k)
		}
	}
	flags := 0
	for _, k := range took["cli"] {
		if k == KindFlags {
			flags++
		}
	}
	if flags != 4 {
		t.Errorf("the worker of both kinds rendered %d flag jobs, want 4 (took %v)", flags, took)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
