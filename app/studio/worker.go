package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"easel/app/activity"
)

// Renderer makes one job's image (a PNG). It reports each finished step through progress and
// returns soon after ctx is cancelled. Inputs fetches an object the job names.
type Renderer interface {
	Render(ctx context.Context, job *Job, inputs Inputs, progress func(Step)) ([]byte, error)
}

// Step is a finished denoising step; Preview, when the job asked for previews (Job.Previews),
// is that step's small preview image as a PNG.
type Step struct {
	N, Of   int
	Preview []byte
}

// RenderFunc adapts a function to Renderer.
type RenderFunc func(ctx context.Context, job *Job, inputs Inputs, progress func(Step)) ([]byte, error)

// Render calls f.
func (f RenderFunc) Render(ctx context.Context, job *Job, inputs Inputs, progress func(Step)) ([]byte, error) {
	return f(ctx, job, inputs, progress)
}

// Inputs fetches an input object by name.
type Inputs func(ctx context.Context, name string) ([]byte, error)

// Worker renders the jobs of its fingerprint, one at a time, pulled only when idle.
type Worker struct {
	Name        string
	Chip        string
	Model       string // the model file's name, for the status
	Fingerprint Fingerprint
	// Kinds are the job kinds Renderer reads (KindFlags, KindPipeline); none: Fingerprint.Kind
	// alone. Each kind has its own consumer; an idle worker asks each in turn for one job.
	Kinds    []string
	Renderer Renderer
	// OnEvent hears one line per job taken, finished, handed back or failed.
	OnEvent func(WorkerEvent)
	// FetchWait is how long an idle worker's pull waits for a job (0 → 2 s; shared among its
	// kinds); a leave waits for it at most. A job already waiting is taken at once.
	FetchWait time.Duration
	// Ready, when set, returns when this Mac may take a job (a lent window: its own queue is
	// idle); the worker pulls nothing before. An error other than ctx's ends Run.
	Ready func(ctx context.Context) error
	// Hold, when set, is called while a job is held, and its release when the job is done or
	// handed back (activity.Hold: no idle sleep on a Mac holding a job).
	Hold func(reason string) (release func())

	mu     sync.Mutex
	inHand *jobInHand // the job being handled (worker_sleep.go)
	status WorkerStatus
	c      *Conn
	poked  chan struct{}
}

// WorkerEvent is what a worker did.
type WorkerEvent struct {
	Kind    string `json:"event"` // "joined", "taken", "finished", "handed_back", "failed", "late", "dropped", "notice"
	Batch   string `json:"batch,omitempty"`
	Index   int    `json:"index"`
	Attempt int    `json:"attempt,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

func (w *Worker) event(e WorkerEvent) {
	if w.OnEvent != nil {
		w.OnEvent(e)
	}
}

// consumerSettings are the hub's ack wait and max deliveries, from the stream's metadata.
func consumerSettings(ctx context.Context, js jetstream.JetStream) (time.Duration, int, error) {
	s, err := js.Stream(ctx, StreamName)
	if err != nil {
		return 0, 0, hubMissing(err)
	}
	md := s.CachedInfo().Config.Metadata
	ack, err := time.ParseDuration(md[metaAckWait])
	if err != nil || ack <= 0 {
		ack = DefaultAckWait
	}
	maxDeliver, err := strconv.Atoi(md[metaMaxDeliver])
	if err != nil || maxDeliver <= 0 {
		maxDeliver = DefaultMaxDeliver
	}
	return ack, maxDeliver, nil
}

// Run takes jobs until ctx is cancelled (a quit): then the job in hand goes back to the queue at
// once (Nak) and Run returns nil. When the Mac is about to sleep the job in hand goes back too,
// and Run takes no job until the Mac wakes (worker_sleep.go). A consumer that vanished (deleted,
// or the hub restarted on other data) is made again (worker_queue.go).
func (w *Worker) Run(ctx context.Context, c *Conn) error {
	defer activity.KeepResponsive(activity.LendingReason)() // no App Nap while waiting for jobs
	kinds := w.Kinds
	if len(kinds) == 0 {
		kinds = []string{w.Fingerprint.Kind}
	}
	ackWait, maxDeliver, err := consumerSettings(ctx, c.JS)
	if err != nil {
		return err
	}
	q := &workerQueue{js: c.JS, ackWait: ackWait, maxDeliver: maxDeliver, say: func(s string) { w.event(WorkerEvent{Kind: "notice", Detail: s}) }}
	for _, kind := range kinds {
		q.keys = append(q.keys, w.Fingerprint.WithKind(kind).Key())
	}
	if err := q.join(ctx); err != nil {
		return fmt.Errorf("joining the studio's queue: %w", err)
	}
	key := q.keys[0]
	inputs, err := c.JS.ObjectStore(ctx, InputsBucket)
	if err != nil {
		return hubMissing(err)
	}
	results, err := c.JS.ObjectStore(ctx, ResultsBucket)
	if err != nil {
		return hubMissing(err)
	}
	kv, err := c.JS.KeyValue(ctx, WorkersBucket)
	if err != nil {
		return hubMissing(err)
	}
	batches, err := c.JS.KeyValue(ctx, BatchesBucket)
	if err != nil {
		return hubMissing(err)
	}
	w.mu.Lock()
	w.c, w.poked = c, make(chan struct{}, 1)
	w.status = WorkerStatus{Name: w.Name, Chip: w.Chip, Model: w.Model, Key: key, Keys: q.keys, Easel: w.Fingerprint.Easel, State: StateIdle}
	w.mu.Unlock()
	stopStatus := w.publishStatus(kv)
	defer stopStatus()
	stopWatching := w.watchSleep()
	defer stopWatching()
	w.event(WorkerEvent{Kind: "joined", Detail: fmt.Sprintf("ack wait %s, at most %d deliveries", ackWait, maxDeliver)})

	h := &jobHandling{
		inputs:        verifiedInputs(func(ctx context.Context, name string) ([]byte, error) { return inputs.GetBytes(ctx, name) }),
		results:       results,
		batches:       batches,
		heartbeat:     min(maxHeartbeat, ackWait/4),
		ackWait:       ackWait,
		clientTimeout: clientTimeoutOf(ctx, c.JS),
	}
	wait := w.FetchWait
	if wait <= 0 {
		wait = 2 * time.Second
	}
	for ctx.Err() == nil {
		if activity.Awake(ctx) != nil {
			break
		}
		if w.Ready != nil {
			if err := w.Ready(ctx); err != nil {
				if ctx.Err() != nil {
					break
				}
				return err
			}
		}
		m, err := q.next(ctx, wait)
		switch {
		case ctx.Err() != nil:
		case err != nil:
			// the hub is away (asleep, restarting: the connection reconnects by itself), or
			// the consumer vanished: made again on the next pull
			q.lost(err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		case m != nil:
			w.handle(ctx, m, h)
		}
	}
	return nil
}

// jobHandling is what handle needs of the hub.
type jobHandling struct {
	inputs             Inputs
	results            jetstream.ObjectStore
	batches            jetstream.KeyValue
	heartbeat, ackWait time.Duration
	clientTimeout      time.Duration
}

// justRestarted says whether the batches bucket is younger than a client's timeout: a hub that
// restarted keeps no clients' keys (they live in memory), and the clients put them back within
// a third of it.
func justRestarted(ctx context.Context, kv jetstream.KeyValue, timeout time.Duration) bool {
	st, err := kv.Status(ctx)
	if err != nil {
		return true
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	return !ok || bs.StreamInfo() == nil || time.Since(bs.StreamInfo().Created) < timeout
}

// refuse ends a job that cannot be rendered: it leaves the queue (Term, with the reason in
// JetStream's advisory) and its client hears why.
func (w *Worker) refuse(m jetstream.Msg, job *Job, attempt int, why string) {
	w.say(job, attempt, Progress{Error: why})
	m.TermWithReason(why)
	w.event(WorkerEvent{Kind: "failed", Batch: job.Batch, Index: job.Index, Attempt: attempt, Detail: why})
}

// handle renders one job: heartbeat and progress keep it ours; a leave, a sleep notice or
// HandBack hands it back at once.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg, h *jobHandling) {
	// the hub's ack wait runs from the delivery: so does this worker's judgement of a late copy
	silence := newHubSilence(time.Now(), h.ackWait)
	ctx, release := w.holdJob(ctx)
	defer release()
	if activity.Asleep() { // the sleep notice came while this job was on its way
		w.HandBack()
	}
	attempt := 1
	if md, err := m.Metadata(); err == nil {
		attempt = int(md.NumDelivered)
	}
	var job Job
	if err := json.Unmarshal(m.Data(), &job); err != nil || job.Batch != batchOfSubject(m.Subject()) {
		m.TermWithReason("not an Easel job of this batch")
		w.event(WorkerEvent{Kind: "failed", Detail: "a message that is not an Easel job was dropped"})
		return
	}
	if err := CheckInputNames(job.Inputs...); err != nil {
		w.refuse(m, &job, attempt, err.Error())
		return
	}
	// The batch's client must still be there: a dead client's images are rendered for nobody.
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err := h.batches.Get(bctx, job.Batch)
	cancel()
	if errors.Is(err, jetstream.ErrKeyNotFound) && !justRestarted(ctx, h.batches, h.clientTimeout) {
		m.TermWithReason("its client is gone")
		w.event(WorkerEvent{Kind: "dropped", Batch: job.Batch, Index: job.Index, Attempt: attempt, Detail: "its client is gone"})
		return
	}
	w.setStatus(func(s *WorkerStatus) {
		s.State, s.Job, s.Attempt, s.Step, s.Steps = StateRendering, job.Batch+"/"+strconv.Itoa(job.Index), attempt, 0, 0
	})
	defer w.setStatus(func(s *WorkerStatus) { s.State, s.Job, s.Attempt, s.Step, s.Steps = StateIdle, "", 0, 0, 0 })
	if w.Hold != nil {
		release := w.Hold("Rendering an image for the Easel studio")
		defer release()
	}
	w.event(WorkerEvent{Kind: "taken", Batch: job.Batch, Index: job.Index, Attempt: attempt})
	w.say(&job, attempt, Progress{})
	// A leave that came while the job was on its way, or while it was announced, hands it back
	// unrendered: the ticker below hears a later one, but a quick render could beat it.
	if ctx.Err() != nil {
		w.say(&job, attempt, Progress{HandedBack: true}) // said before the Nak: it reaches the client first
		m.Nak()
		w.event(WorkerEvent{Kind: "handed_back", Batch: job.Batch, Index: job.Index, Attempt: attempt, Detail: handBackReason()})
		return
	}

	// The render's context is not ctx: on a leave the heartbeat goroutine hands the job back
	// first and then stops the render.
	rctx, stopRender := context.WithCancel(context.Background())
	defer stopRender()
	done := make(chan struct{})
	handedBack := make(chan bool, 1)
	go func() {
		t := time.NewTicker(h.heartbeat)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				// a word counts for the late judgement once the hub has it (worker_silence.go)
				sent := time.Now()
				if m.InProgress() == nil && w.flush(ctx, h.heartbeat) == nil {
					silence.heard(sent, time.Now())
				}
			case <-ctx.Done():
				w.say(&job, attempt, Progress{HandedBack: true}) // said before the Nak: it reaches the client first
				m.Nak()
				handedBack <- true
				stopRender()
				return
			case <-done:
				handedBack <- false
				return
			}
		}
	}()
	png, err := w.Renderer.Render(rctx, &job, h.inputs, func(st Step) {
		m.InProgress() // keeps the job; the ticker's confirmed words judge lateness
		w.say(&job, attempt, Progress{Step: st.N, Steps: st.Of, Preview: st.Preview})
		w.setStatus(func(s *WorkerStatus) { s.Step, s.Steps = st.N, st.Of })
	})
	close(done)
	if <-handedBack {
		w.event(WorkerEvent{Kind: "handed_back", Batch: job.Batch, Index: job.Index, Attempt: attempt, Detail: handBackReason()})
		return
	}
	if err != nil {
		w.refuse(m, &job, attempt, scrubPaths(err.Error()))
		return
	}
	// A finished image is delivered even when a leave comes now: it takes a moment. A store that
	// fails (the hub's disk) fails the image at once: another Mac would meet the same disk.
	pctx, cancel := context.WithTimeout(context.Background(), putTimeout)
	defer cancel()
	if err := roomFor(pctx, h.results, len(png)); err != nil {
		w.refuse(m, &job, attempt, storeFault("the image", len(png), err))
		return
	}
	err = putWhole(pctx, h.results, jetstream.ObjectMeta{
		Name: resultName(job.Batch, job.Index, attempt, statusKey(w.Name)),
		Metadata: map[string]string{
			"batch": job.Batch, "index": strconv.Itoa(job.Index), "worker": w.Name, "attempt": strconv.Itoa(attempt),
		},
	}, png)
	if err != nil {
		w.refuse(m, &job, attempt, storeFault("the image", len(png), err))
		return
	}
	// The result is stored: the acknowledgement is waited for a moment only (the hub may have
	// gone just now; a job whose ack is lost comes again and its copy is dropped as a duplicate).
	actx, cancelAck := context.WithTimeout(context.Background(), ackTimeout)
	ackErr := m.DoubleAck(actx)
	acked := time.Now()
	cancelAck()
	// Late is judged after the acknowledgement: a freeze (a sleep, a stop) can fall anywhere up to
	// it, so a silence past the ack wait means the job may have gone to another Mac meanwhile,
	// even when the hub still takes the late ack.
	late := silence.late(acked)
	var apiErr *jetstream.APIError
	switch {
	case late || errors.As(ackErr, &apiErr):
		// The job had gone to another worker meanwhile (this Mac slept past the ack wait): the
		// client keeps whichever result came first.
		why := "this Mac was silent past the ack wait: the job had gone to another"
		if ackErr != nil {
			why = ackErr.Error()
		}
		w.event(WorkerEvent{Kind: "late", Batch: job.Batch, Index: job.Index, Attempt: attempt, Detail: why})
	case ackErr != nil:
		w.event(WorkerEvent{Kind: "finished", Batch: job.Batch, Index: job.Index, Attempt: attempt,
			Detail: "delivered; the hub did not confirm the acknowledgement (" + ackErr.Error() + "): should the job come again, its copy is dropped"})
	default:
		w.event(WorkerEvent{Kind: "finished", Batch: job.Batch, Index: job.Index, Attempt: attempt})
	}
	w.setStatus(func(s *WorkerStatus) { s.Done++ })
}

// putTimeout bounds storing one result on the hub; ackTimeout its acknowledgement.
const (
	putTimeout = 30 * time.Second
	ackTimeout = 5 * time.Second
)

// say publishes progress on the job's subject (fire and forget: a lost one is harmless).
func (w *Worker) say(job *Job, attempt int, p Progress) {
	p.Batch, p.Index, p.Worker, p.Attempt = job.Batch, job.Index, w.Name, attempt
	data, _ := json.Marshal(p)
	if c := w.conn(); c != nil {
		c.NC.Publish(progressSubject(job.Batch, job.Index), data)
	}
}

// flush waits (at most timeout, or until ctx ends) until the hub has what this worker sent.
func (w *Worker) flush(ctx context.Context, timeout time.Duration) error {
	c := w.conn()
	if c == nil {
		return errors.New("not connected")
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.NC.FlushWithContext(fctx)
}

func (w *Worker) setStatus(f func(*WorkerStatus)) {
	w.mu.Lock()
	f(&w.status)
	w.mu.Unlock()
	w.poke()
}
