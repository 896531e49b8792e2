package studio

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// register puts a fake worker status on the hub so a client sees a taker, without taking jobs.
func register(t *testing.T, c *Conn, fp Fingerprint) {
	t.Helper()
	kv, err := c.JS.KeyValue(context.Background(), WorkersBucket)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte(`{"name":"asleep","model":"m.cmf","key":"` + fp.Key() + `","easel":"test","state":"idle"}`)
	if _, err := kv.Put(context.Background(), "asleep", data); err != nil {
		t.Fatal(err)
	}
}

// A full queue makes a client wait, not fail, and one batch holds at most PerBatch of the
// queue: a second client's image goes before the long batch's later ones.
func TestFullQueueWaitsAndBatchesShare(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken, QueueLength: 3, PerBatch: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a, b := dial(t, h, RoleClient, testToken), dial(t, h, RoleClient, testToken)
	register(t, a, testFP)
	s, _ := a.JS.Stream(ctx, StreamName)
	queued := func(n uint64) func() bool {
		return func() bool { info, err := s.Info(ctx); return err == nil && info.State.Msgs == n }
	}
	long, short := makeJobs(5, testFP), makeJobs(3, testFP)
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() { aDone <- a.Run(ctx, long, func(Event) {}) }()
	waitFor(t, 10*time.Second, queued(2)) // the long batch holds its 2
	full := make(chan string, 1)
	go func() {
		bDone <- b.Run(ctx, short, func(ev Event) {
			if ev.Kind == EventNotice && strings.Contains(ev.Detail, "full") {
				select {
				case full <- ev.Detail:
				default:
				}
			}
		})
	}()
	waitFor(t, 10*time.Second, queued(3))
	select {
	case msg := <-full:
		t.Logf("the second client waits: %s", msg)
	case <-ctx.Done():
		t.Fatal("the second client was not told the queue is full")
	}
	var mu sync.Mutex
	var order []string
	startWorker(t, h, "mac", testFP, echoRenderer(1, func(_ context.Context, job *Job, _ int) error {
		mu.Lock()
		order = append(order, fmt.Sprintf("%s/%d", job.Batch, job.Index))
		mu.Unlock()
		return nil
	}))
	if err := <-aDone; err != nil {
		t.Fatalf("the long batch: %v", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("the second batch: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	pos := map[string]int{}
	for i, o := range order {
		pos[o] = i
	}
	first, third := fmt.Sprintf("%s/0", short[0].Batch), fmt.Sprintf("%s/2", long[0].Batch)
	if pos[first] > pos[third] {
		t.Errorf("the second client's first image was rendered after the long batch's third: %v", order)
	}
}

// queuedBatch is a batch run by a client of its own hub, whose jobs are all in the queue (a
// fake worker status lets them wait there).
type queuedBatch struct {
	h      *Hub
	c      *Conn
	stream jetstream.Stream
	cancel context.CancelFunc // cancels the run
	done   chan error         // the run's end
}

func startQueuedBatch(t *testing.T, jobs int) *queuedBatch {
	t.Helper()
	b := &queuedBatch{h: startTestHub(t, HubConfig{Token: testToken}), done: make(chan error, 1)}
	b.c = dial(t, b.h, RoleClient, testToken)
	register(t, b.c, testFP)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b.cancel = cancel
	b.stream, _ = b.c.JS.Stream(ctx, StreamName)
	go func() { b.done <- b.c.Run(ctx, makeJobs(jobs, testFP), func(Event) {}) }()
	waitFor(t, 10*time.Second, func() bool {
		info, err := b.stream.Info(ctx)
		return err == nil && info.State.Msgs == uint64(jobs)
	})
	return b
}

// Cancelling a batch takes its waiting jobs off the queue and says how many.
func TestCancelledBatchLeavesTheQueue(t *testing.T) {
	b := startQueuedBatch(t, 3)
	b.cancel()
	err := <-b.done
	var ce *CancelledError
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || ce.Removed != 3 {
		t.Fatalf("cancelled: %v", err)
	}
	info, _ := b.stream.Info(context.Background())
	if info.State.Msgs != 0 {
		t.Errorf("%d jobs left after the client cancelled its batch", info.State.Msgs)
	}
}

func TestQueueSurvivesHubRestart(t *testing.T) {
	dir := t.TempDir()
	h := startTestHub(t, HubConfig{Token: testToken, Data: dir})
	c := dial(t, h, RoleClient, testToken)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.JS.Publish(ctx, jobsSubject(testFP.Key(), "b1"), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	h.Close()
	h2 := startTestHub(t, HubConfig{Token: testToken, Data: dir})
	c2 := dial(t, h2, RoleClient, testToken)
	st, err := c2.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Queued != 3 {
		t.Fatalf("after a restart the queue holds %d jobs, want 3", st.Queued)
	}
}

// A job whose worker goes silent past the ack wait is redelivered; after MaxDeliver silent
// deliveries the client is told.
func TestSilentWorkersThenClientIsTold(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken, AckWait: 300 * time.Millisecond, MaxDeliver: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	startSilentWorker(ctx, t, h)
	c := dial(t, h, RoleClient, testToken)
	register(t, c, testFP)
	var failed []Event
	err := c.Run(ctx, makeJobs(1, testFP), func(ev Event) {
		if ev.Kind == EventFailed {
			failed = append(failed, ev)
		}
	})
	if err == nil || len(failed) != 1 || !strings.Contains(failed[0].Detail, "given to 2 Macs") {
		t.Fatalf("err %v, failures %+v", err, failed)
	}
}

// A worker that leaves (its context cancelled: quit, or a sleep notice) hands its job back at
// once: the ack wait here is 10 minutes, so only the Nak can bring the job to the second worker.
func TestGracefulLeaveHandsBackAtOnce(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken, AckWait: 10 * time.Minute})
	holding := make(chan struct{})
	var stopA func()
	stopA = startWorker(t, h, "mac-a", testFP, echoRenderer(3, func(ctx context.Context, job *Job, step int) error {
		if step == 2 {
			close(holding)
			<-ctx.Done() // blocks until the leave
			return ctx.Err()
		}
		return nil
	}))
	c := dial(t, h, RoleClient, testToken)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// mac-a leaves once it holds the job; mac-b joins after (its own worker loop; the status
	// wait in startWorker runs on this goroutine).
	joined := make(chan func(), 1)
	go func() {
		<-holding
		stopA()
		c := dial(t, h, RoleWorker, testToken)
		w := &Worker{Name: "mac-b", Model: "m.cmf", Fingerprint: testFP, Renderer: echoRenderer(3, nil), FetchWait: 500 * time.Millisecond}
		wctx, stop := context.WithCancel(context.Background())
		finished := make(chan struct{})
		go func() { defer close(finished); w.Run(wctx, c) }()
		joined <- func() { stop(); <-finished }
	}()
	defer func() {
		select {
		case stop := <-joined:
			stop()
		case <-time.After(10 * time.Second):
		}
	}()
	var events []Event
	err := c.Run(ctx, makeJobs(1, testFP), func(ev Event) { events = append(events, ev) })
	if err != nil {
		t.Fatal(err)
	}
	handed, result := false, false
	for _, ev := range events {
		switch {
		case ev.Kind == EventHandedBack && ev.Worker == "mac-a" && ev.Attempt == 1:
			handed = true
		case ev.Kind == EventResult && ev.Worker == "mac-b" && ev.Attempt == 2:
			result = true
		}
	}
	if !handed || !result {
		t.Fatalf("want mac-a's hand-back then mac-b's result as attempt 2; events %+v", events)
	}
}

// Publishing a job twice (a retry after a lost acknowledgement) queues it once: Nats-Msg-Id.
func TestRepublishedJobQueuesOnce(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	c := dial(t, h, RoleClient, testToken)
	ctx := context.Background()
	j := makeJobs(1, testFP)[0]
	for range 2 {
		if _, err := c.JS.Publish(ctx, jobsSubject(testFP.Key(), j.Batch), j.Request, jetstream.WithMsgID(j.msgID())); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := c.JS.Stream(ctx, StreamName)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 {
		t.Fatalf("%d jobs queued after publishing one twice, want 1", info.State.Msgs)
	}
}

// Cancelling while the hub is away says the jobs could not be removed, and that they leave
// the queue when the hub sees the client gone; it does not claim they were removed.
func TestCancelWithoutTheHubSaysSo(t *testing.T) {
	b := startQueuedBatch(t, 2)
	b.h.Close()
	waitFor(t, 10*time.Second, func() bool { return !b.c.NC.IsConnected() })
	b.cancel()
	err := <-b.done
	var ce *CancelledError
	if !errors.As(err, &ce) || !ce.Unreachable || ce.Removed != 0 || !strings.Contains(err.Error(), "could not be reached") {
		t.Fatalf("cancelled without the hub: %v (%+v)", err, ce)
	}
	t.Log(err)
}
