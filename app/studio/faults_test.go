package studio

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// hubLog collects a hub's log lines and hands over those that contain a word.
type hubLog struct {
	mu    sync.Mutex
	lines []string
	heard chan string
}

func newHubLog() *hubLog { return &hubLog{heard: make(chan string, 64)} }

func (l *hubLog) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	select {
	case l.heard <- line:
	default:
	}
}

// waitLine waits (bounded) for a log line containing word.
func (l *hubLog) waitLine(t *testing.T, word string, limit time.Duration) string {
	t.Helper()
	deadline := time.After(limit)
	for {
		select {
		case line := <-l.heard:
			if strings.Contains(line, word) {
				return line
			}
		case <-deadline:
			l.mu.Lock()
			defer l.mu.Unlock()
			t.Fatalf("the hub's log has no line with %q within %s: %q", word, limit, l.lines)
		}
	}
}

// A job that names an input other than by content is refused before the renderer sees it, and
// its client hears why.
func TestJobWithPathInputIsRefused(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	rendered := make(chan struct{}, 1)
	startWorker(t, h, "mac", testFP, RenderFunc(func(context.Context, *Job, Inputs, func(Step)) ([]byte, error) {
		rendered <- struct{}{}
		return []byte("x"), nil
	}))
	c := dial(t, h, RoleClient, testToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	jobs := makeJobs(1, testFP)
	jobs[0].Inputs = []string{"../x"}
	var failed string
	err := c.Run(ctx, jobs, func(ev Event) {
		if ev.Kind == EventFailed {
			failed = ev.Detail
		}
	})
	if err == nil || !strings.Contains(failed, "content reference") {
		t.Fatalf("err %v, failure %q: want the job refused for its input's name", err, failed)
	}
	select {
	case <-rendered:
		t.Fatal("the renderer saw the job")
	default:
	}
}

// What a worker fetches is checked against the input's name.
func TestInputNotMatchingItsNameIsRefused(t *testing.T) {
	data := []byte("a start image")
	get := verifiedInputs(func(context.Context, string) ([]byte, error) { return []byte("another image"), nil })
	if _, err := get(context.Background(), InputName(data)); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("a mismatched input: %v", err)
	}
	if _, err := get(context.Background(), "../"+InputName(data)); err == nil {
		t.Fatal("a path was fetched")
	}
	ok := verifiedInputs(func(context.Context, string) ([]byte, error) { return data, nil })
	if got, err := ok(context.Background(), InputName(data)); err != nil || string(got) != string(data) {
		t.Fatalf("the matching input: %q, %v", got, err)
	}
}

// tinyDisk is a 2 MiB disk for the hub's data: a tmpfs when this process may mount one (root on
// Linux), else a folder with the hub's store limited to 2 MiB, which takes the same path (the
// hub's share of a disk, refused writes past it).
func tinyDisk(t *testing.T) (dir string, maxStore int64) {
	t.Helper()
	dir = t.TempDir()
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", dir).Run(); err == nil {
			t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
			t.Log("the hub's data is on a 2 MiB tmpfs")
			return dir, 0
		}
	}
	t.Log("no tmpfs: the hub's store is limited to 2 MiB")
	return dir, 2 << 20
}

// With the hub's data on a 2 MiB disk, an image too large for what is left fails at once, with a
// message naming the hub's disk (to the client, the worker and the hub's log), the failed put's
// space is given back, and the next batch is rendered.
func TestFullHubDiskFailsTheImageAtOnce(t *testing.T) {
	dir, maxStore := tinyDisk(t)
	log := newHubLog()
	h := startTestHub(t, HubConfig{Token: testToken, Data: dir, MaxStore: maxStore, Logf: log.logf})
	t.Logf("hub disk: %s", h.Disk)
	size := 1100 << 10 // more than the results store takes on a 2 MiB disk, either way
	var workerSaid []string
	var wmu sync.Mutex
	c := dial(t, h, RoleWorker, testToken)
	w := &Worker{Name: "mac", Model: "m.cmf", Fingerprint: testFP, FetchWait: 500 * time.Millisecond,
		Renderer: RenderFunc(func(_ context.Context, job *Job, _ Inputs, _ func(Step)) ([]byte, error) {
			b := make([]byte, size)
			rand.Read(b)
			if job.Index == 0 && job.Images == 2 {
				return b, nil // the large image of the first batch
			}
			return b[:1000], nil
		}),
		OnEvent: func(e WorkerEvent) {
			wmu.Lock()
			workerSaid = append(workerSaid, e.Kind+": "+e.Detail)
			t.Logf("worker: %s %d %s", e.Kind, e.Index, e.Detail)
			wmu.Unlock()
		}}
	wctx, stop := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { defer close(finished); w.Run(wctx, c) }()
	t.Cleanup(func() { stop(); <-finished })
	client := dial(t, h, RoleClient, testToken)
	waitFor(t, 10*time.Second, func() bool { ws, _ := client.Workers(context.Background()); return len(ws) == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var failed []string
	results := 0
	err := client.Run(ctx, makeJobs(2, testFP), func(ev Event) {
		switch ev.Kind {
		case EventFailed:
			failed = append(failed, ev.Detail)
		case EventResult:
			results++
		}
	})
	if err == nil || len(failed) != 1 || !strings.Contains(failed[0], "hub's disk") || results != 1 {
		t.Fatalf("err %v, failures %q, %d results: want the large image failed naming the hub's disk, the other written", err, failed, results)
	}
	t.Logf("the client heard: %s", failed[0])
	log.waitLine(t, "hub's disk", 10*time.Second)
	wmu.Lock()
	said := strings.Join(workerSaid, "\n")
	wmu.Unlock()
	if !strings.Contains(said, "failed: the hub's disk") {
		t.Errorf("the worker did not say the image failed on the hub's disk:\n%s", said)
	}
	// the failed put's chunks were given back: the results store is empty again (the small
	// image was read and removed)
	rs, err := client.JS.Stream(ctx, "OBJ_"+ResultsBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := rs.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Bytes > 8<<10 {
		t.Errorf("the results store holds %d bytes after a failed put: its chunks were not given back", info.State.Bytes)
	}
	// not wedged: a small image goes through
	if err := client.Run(ctx, makeJobs(1, testFP), func(Event) {}); err != nil {
		t.Fatalf("the next batch after the full disk: %v", err)
	}
	st, err := client.Status(ctx)
	if err != nil || st.Disk.Limit == 0 || st.Disk.FreeAtStart == 0 {
		t.Errorf("the status shows no disk: %+v, %v", st, err)
	}
}

// A hub that cannot have even its minimum share of the disk says so at start.
func TestHubWithoutDiskSpaceRefusesToStart(t *testing.T) {
	_, err := StartHub(HubConfig{Listen: "127.0.0.1:0", Data: t.TempDir(), MaxStore: 1000})
	if err == nil || !strings.Contains(err.Error(), "free") {
		t.Fatalf("a hub with 1000 bytes of store started: %v", err)
	}
}

// A worker whose queue consumer was deleted makes it again: the next batch is rendered.
func TestDeletedConsumerIsMadeAgain(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken})
	startWorker(t, h, "mac", testFP, echoRenderer(1, nil))
	c := dial(t, h, RoleClient, testToken)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Run(ctx, makeJobs(1, testFP), func(Event) {}); err != nil {
		t.Fatal(err)
	}
	if err := c.JS.DeleteConsumer(ctx, StreamName, consumerName(testFP.Key())); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx, makeJobs(2, testFP), func(Event) {}); err != nil {
		t.Fatalf("the batch after the consumer was deleted: %v", err)
	}
}

// A client that notices its jobs left the queue without a result says so instead of waiting.
func TestClientHearsItsJobsAreGone(t *testing.T) {
	queueCheckEvery = 100 * time.Millisecond
	t.Cleanup(func() { queueCheckEvery = statusEvery })
	h := startTestHub(t, HubConfig{Token: testToken})
	c := dial(t, h, RoleClient, testToken)
	register(t, c, testFP)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, _ := c.JS.Stream(ctx, StreamName)
	jobs := makeJobs(2, testFP)
	done := make(chan error, 1)
	var failed []string
	go func() {
		done <- c.Run(ctx, jobs, func(ev Event) {
			if ev.Kind == EventFailed {
				failed = append(failed, ev.Detail)
			}
		})
	}()
	waitFor(t, 10*time.Second, func() bool { info, err := s.Info(ctx); return err == nil && info.State.Msgs == 2 })
	admin := dial(t, h, RoleClient, testToken)
	n, err := admin.CancelBatch(ctx, jobs[0].Batch)
	if err != nil || n != 2 {
		t.Fatalf("cancel: %d, %v", n, err)
	}
	if err := <-done; err == nil || len(failed) != 2 || !strings.Contains(failed[0], "left the studio's queue") {
		t.Fatalf("err %v, failures %q", err, failed)
	}
}

// A client that dies (its connection closed abruptly, as kill -9 does) has its queued jobs
// dropped by the hub within its client timeout; a worker given such a job drops it unrendered.
func TestDeadClientsJobsLeaveTheQueue(t *testing.T) {
	log := newHubLog()
	h := startTestHub(t, HubConfig{Token: testToken, ClientTimeout: 1500 * time.Millisecond, Logf: log.logf})
	c := dial(t, h, RoleClient, testToken)
	register(t, c, testFP)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, _ := c.JS.Stream(ctx, StreamName)
	rctx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(rctx, makeJobs(3, testFP), func(Event) {}) }()
	waitFor(t, 10*time.Second, func() bool { info, err := s.Info(ctx); return err == nil && info.State.Msgs == 3 })
	c.NC.Close() // the client dies: no word, no cancel
	log.waitLine(t, "its client is gone", 30*time.Second)
	admin := dial(t, h, RoleClient, testToken)
	as, _ := admin.JS.Stream(ctx, StreamName)
	if info, err := as.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Fatalf("after the client died the queue holds %d jobs (%v)", info.State.Msgs, err)
	}
	stopRun()
	<-done

	// a job whose batch has no live client is dropped by the worker that gets it
	dropped := make(chan string, 1)
	wc := dial(t, h, RoleWorker, testToken)
	w := &Worker{Name: "mac", Model: "m.cmf", Fingerprint: testFP, FetchWait: 500 * time.Millisecond,
		Renderer: RenderFunc(func(context.Context, *Job, Inputs, func(Step)) ([]byte, error) { return nil, errors.New("rendered") }),
		OnEvent: func(e WorkerEvent) {
			if e.Kind == "dropped" {
				dropped <- e.Detail
			}
		}}
	wctx, stop := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { defer close(finished); w.Run(wctx, wc) }()
	defer func() { stop(); <-finished }()
	j := makeJobs(1, testFP)[0]
	data := []byte(`{"batch":"` + j.Batch + `","index":0,"images":1,"request":{}}`)
	if _, err := admin.JS.Publish(ctx, jobsSubject(testFP.Key(), j.Batch), data); err != nil {
		t.Fatal(err)
	}
	select {
	case why := <-dropped:
		t.Logf("dropped: %s", why)
	case <-ctx.Done():
		t.Fatal("the worker did not drop the job of a batch without a client")
	}
}

// startSilentWorker pulls testFP's jobs from h until ctx ends, and never finishes one nor says a
// word: a raw consumer with the hub's ack wait and max deliveries that never acknowledges.
func startSilentWorker(ctx context.Context, t *testing.T, h *Hub) {
	t.Helper()
	w := dial(t, h, RoleWorker, testToken)
	cons, err := w.JS.CreateOrUpdateConsumer(ctx, StreamName, jetstream.ConsumerConfig{
		Durable: consumerName(testFP.Key()), FilterSubject: jobsFilter(testFP.Key()),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: h.cfg.AckWait, MaxDeliver: h.cfg.MaxDeliver})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ctx.Err() == nil {
			if b, err := cons.Fetch(1, jetstream.FetchMaxWait(200*time.Millisecond)); err == nil {
				for range b.Messages() {
				}
			}
		}
	}()
}

// A job that used all its deliveries leaves the queue even when its client is gone.
func TestExhaustedJobLeavesTheQueue(t *testing.T) {
	log := newHubLog()
	h := startTestHub(t, HubConfig{Token: testToken, AckWait: 300 * time.Millisecond, MaxDeliver: 2, Logf: log.logf})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	startSilentWorker(ctx, t, h)
	c := dial(t, h, RoleClient, testToken)
	if _, err := c.JS.Publish(ctx, jobsSubject(testFP.Key(), "orphan"), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	log.waitLine(t, "went to 2 Macs", 20*time.Second)
	s, _ := c.JS.Stream(ctx, StreamName)
	if info, err := s.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Fatalf("the exhausted job is still queued: %d (%v)", info.State.Msgs, err)
	}
}

// Messages that leave the worker carry no path of its file system.
func TestFailuresCarryNoWorkerPaths(t *testing.T) {
	for in, want := range map[string]string{
		"open /Users/ann/models/qwen.cmf: no such file":          "open qwen.cmf: no such file",
		`model "/tmp/easel-studio-job-1-2/lora-1/x.safetensors"`: `model "x.safetensors"`,
		"the prompt a/b stays":                                   "the prompt a/b stays",
	} {
		if got := scrubPaths(in); got != want {
			t.Errorf("scrubPaths(%q) = %q, want %q", in, got, want)
		}
	}
}

// A put the store has no room for leaves nothing behind: the chunks it stored are given back and
// no record of the object stays for a reader to wait on.
func TestFailedPutGivesItsSpaceBack(t *testing.T) {
	h := startTestHub(t, HubConfig{Token: testToken, MaxStore: 2 << 20})
	c := dial(t, h, RoleWorker, testToken)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	obs, err := c.JS.ObjectStore(ctx, ResultsBucket)
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 1100<<10)
	rand.Read(big)
	err = putWhole(ctx, obs, jetstream.ObjectMeta{Name: "b/0/1-mac"}, big)
	if err == nil || !strings.Contains(storeFault("the image", len(big), err), "hub's disk") {
		t.Fatalf("the put past the store's cap: %v", err)
	}
	if _, err := obs.GetInfo(ctx, "b/0/1-mac"); err == nil {
		t.Error("the failed object is still listed")
	}
	s, _ := c.JS.Stream(ctx, "OBJ_"+ResultsBucket)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Bytes > 4<<10 {
		t.Errorf("the results store holds %d bytes after the failed put", info.State.Bytes)
	}
}

// A batch whose later jobs wait for room goes on across a hub restart: the publishes that fail
// while the hub is away are tried again, and every image arrives once.
func TestPublishRetriedAcrossHubOutage(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfg := HubConfig{Listen: addr, Token: testToken, Data: dir, PerBatch: 1}
	h := startTestHub(t, cfg)
	c := dial(t, h, RoleClient, testToken)
	register(t, c, testFP)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, _ := c.JS.Stream(ctx, StreamName)
	done := make(chan error, 1)
	results := map[int]int{}
	var mu sync.Mutex
	go func() {
		done <- c.Run(ctx, makeJobs(3, testFP), func(ev Event) {
			if ev.Kind == EventResult {
				mu.Lock()
				results[ev.Index]++
				mu.Unlock()
			}
		})
	}()
	waitFor(t, 10*time.Second, func() bool { info, err := s.Info(ctx); return err == nil && info.State.Msgs == 1 })
	h.Close() // the hub goes away with one job queued and two waiting on the client
	h2 := startTestHub(t, cfg)
	startWorker(t, h2, "mac", testFP, echoRenderer(1, nil))
	if err := <-done; err != nil {
		t.Fatalf("the batch across the outage: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range 3 {
		if results[i] != 1 {
			t.Errorf("image %d arrived %d times", i, results[i])
		}
	}
}

// A lasting outage is said again, and its end once.
func TestOutageIsSaidAgainUntilItEnds(t *testing.T) {
	said := make(chan string, 16)
	o := &outage{say: func(s string) { said <- s }}
	o.begin(errors.New("EOF"))
	o.begin(errors.New("EOF")) // a second drop while away says nothing new
	if s := <-said; !strings.Contains(s, "lost the hub") {
		t.Fatalf("first: %q", s)
	}
	o.end()
	if s := <-said; s != "reconnected to the hub" {
		t.Fatalf("then: %q", s)
	}
	if o.stop() {
		t.Error("an outage is still on after its end")
	}
	select {
	case s := <-said:
		t.Errorf("said after the end: %q", s)
	default:
	}
}

// A hub restarted on another data folder has none of the workers' consumers: they make them
// again and the next batch is rendered.
func TestWorkerFindsHubRestartedOnOtherData(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h := startTestHub(t, HubConfig{Listen: addr, Token: testToken})
	stopWorker := startWorker(t, h, "mac", testFP, echoRenderer(1, nil))
	h.Close()
	h2 := startTestHub(t, HubConfig{Listen: addr, Token: testToken}) // a fresh data folder
	t.Cleanup(stopWorker)                                            // before h2 closes
	c := dial(t, h2, RoleClient, testToken)
	waitFor(t, 30*time.Second, func() bool { ws, _ := c.Workers(context.Background()); return len(ws) == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.Run(ctx, makeJobs(2, testFP), func(Event) {}); err != nil {
		t.Fatalf("the batch on the new hub: %v", err)
	}
}

// Other files filling the hub's disk below what the hub may still fill: the hub's log says so.
func TestHubWarnsWhenItsDiskFillsFromOutside(t *testing.T) {
	dir, maxStore := tinyDisk(t)
	if maxStore != 0 {
		t.Skip("needs a tmpfs of its own (root on Linux)")
	}
	log := newHubLog()
	startTestHub(t, HubConfig{Token: testToken, Data: dir, ClientTimeout: 600 * time.Millisecond, Logf: log.logf})
	if err := os.WriteFile(dir+"/other-program.bin", make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Log(log.waitLine(t, "free space there", 20*time.Second))
}
