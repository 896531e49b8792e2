package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// CancelledError is a cancelled batch: how many of its waiting jobs left the hub's queue.
type CancelledError struct {
	Removed, Waiting int
	// Unreachable: the hub could not be reached to remove them; they leave its queue when it
	// sees this client gone (within Timeout).
	Unreachable bool
	Timeout     time.Duration
}

func (e *CancelledError) Error() string {
	switch {
	case e.Waiting == 0:
		return "cancelled"
	case e.Unreachable:
		return fmt.Sprintf("cancelled; the hub could not be reached to take %d waiting images off its queue: they leave it within %s, when the hub sees this client gone", e.Waiting-e.Removed, e.Timeout.Round(time.Second))
	}
	return fmt.Sprintf("cancelled; %d waiting images were taken off the studio's queue", e.Removed)
}

// Unwrap makes a CancelledError a context.Canceled.
func (e *CancelledError) Unwrap() error { return context.Canceled }

// batchRun is one Run: the batch's jobs and what the client knows of them.
type batchRun struct {
	c      *Conn
	jobs   []*Job
	on     func(Event)
	batch  string
	key    string
	events chan any
	subs   []*nats.Subscription

	stream  jetstream.Stream
	results jetstream.ObjectStore
	watcher jetstream.ObjectWatcher
	stopAll context.CancelFunc
	alive   func() // the heartbeat's stop
	timeout time.Duration

	seqs     map[uint64]int    // stream sequence → index
	seqOf    map[int]uint64    // index → stream sequence
	attempts map[int]int       // the latest attempt seen per index
	resolved map[int]bool      // written or failed
	reasons  map[uint64]string // why a worker terminated a job (its advisory)
	missing  map[int]int       // checks that found the job gone from the queue
	seen     map[string]bool   // the result objects taken
	firstErr error
	next     int // the next job to publish

	waitingSaid, outageSaid time.Time // when the last notice of each was given
}

type maxDeliveries struct {
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries int    `json:"deliveries"`
}

type terminated struct {
	StreamSeq uint64 `json:"stream_seq"`
	Reason    string `json:"reason"`
}

func (c *Conn) newRun(ctx context.Context, jobs []*Job, on func(Event)) (*batchRun, error) {
	r := &batchRun{c: c, jobs: jobs, on: on, batch: jobs[0].Batch, key: jobs[0].Fingerprint.Key(),
		events: make(chan any, 256), seqs: map[uint64]int{}, seqOf: map[int]uint64{}, attempts: map[int]int{},
		resolved: map[int]bool{}, reasons: map[uint64]string{}, missing: map[int]int{}, seen: map[string]bool{}}
	if err := c.checkTaker(ctx, jobs[0].Fingerprint); err != nil {
		return nil, err
	}
	var err error
	if r.stream, err = c.JS.Stream(ctx, StreamName); err != nil {
		return nil, hubMissing(err)
	}
	r.timeout = clientTimeoutOf(ctx, c.JS)
	sub := func(subject string, decode func([]byte) (any, bool)) error {
		s, err := c.NC.Subscribe(subject, func(m *nats.Msg) {
			if v, ok := decode(m.Data); ok {
				r.events <- v
			}
		})
		r.subs = append(r.subs, s)
		return err
	}
	if err := sub(progressPrefix+r.batch+".>", func(b []byte) (any, bool) {
		var p Progress
		return p, json.Unmarshal(b, &p) == nil
	}); err != nil {
		r.close()
		return nil, err
	}
	if err := sub(maxDeliveriesAdvisory+consumerName(r.key), func(b []byte) (any, bool) {
		var a maxDeliveries
		return a, json.Unmarshal(b, &a) == nil
	}); err != nil {
		r.close()
		return nil, err
	}
	if err := sub(terminatedAdvisory+consumerName(r.key), func(b []byte) (any, bool) {
		var a terminated
		return a, json.Unmarshal(b, &a) == nil
	}); err != nil {
		r.close()
		return nil, err
	}
	if r.results, err = c.JS.ObjectStore(ctx, ResultsBucket); err != nil {
		r.close()
		return nil, hubMissing(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	r.stopAll = cancel
	if r.watcher, err = r.results.Watch(wctx, jetstream.IgnoreDeletes()); err != nil {
		r.close()
		return nil, err
	}
	if r.alive, err = c.sayAlive(r.batch, len(jobs), r.timeout/3); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *batchRun) close() {
	for _, s := range r.subs {
		s.Unsubscribe()
	}
	if r.watcher != nil {
		r.watcher.Stop()
	}
	if r.stopAll != nil {
		r.stopAll()
	}
	if r.alive != nil {
		r.alive()
	}
}

// sayAlive keeps the batch's key in BatchesBucket fresh every period until stop, which removes
// it: workers render a batch's jobs only while it is there, and the hub drops the jobs of a
// batch whose key expired.
func (c *Conn) sayAlive(batch string, images int, period time.Duration) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	kv, err := c.JS.KeyValue(ctx, BatchesBucket)
	if err != nil {
		cancel()
		return nil, hubMissing(err)
	}
	value, _ := json.Marshal(map[string]any{"images": images})
	put := func() {
		pctx, c := context.WithTimeout(ctx, period)
		kv.Put(pctx, batch, value)
		c()
	}
	pctx, c2 := context.WithTimeout(ctx, 10*time.Second)
	_, err = kv.Put(pctx, batch, value)
	c2()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("telling the hub about the batch: %w", err)
	}
	finished := every(ctx, period, nil, put)
	return func() {
		cancel()
		<-finished
		if c.NC.IsConnected() { // else the key expires by itself
			dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			kv.Delete(dctx, batch)
			cancel()
		}
	}, nil
}

// clientTimeoutOf is the hub's ClientTimeout, from the stream's metadata.
func clientTimeoutOf(ctx context.Context, js jetstream.JetStream) time.Duration {
	if s, err := js.Stream(ctx, StreamName); err == nil {
		if d, err := time.ParseDuration(s.CachedInfo().Config.Metadata[metaClientTimeout]); err == nil && d > 0 {
			return d
		}
	}
	return DefaultClientTimeout
}

// queueCheckEvery is how often a client checks that a worker can take its jobs and that they
// are still in the queue (a variable: tests shorten it).
var queueCheckEvery = statusEvery

// publishRetry is how soon a job that found no room, or no hub, is offered again.
const publishRetry = time.Second

// publish offers the batch's next jobs to the queue. It returns with the jobs left when the queue
// or the batch's share of it is full, or the hub is away: they go out on a later try.
func (r *batchRun) publish(ctx context.Context) {
	for r.next < len(r.jobs) && ctx.Err() == nil {
		j := r.jobs[r.next]
		data, _ := json.Marshal(j)
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ack, err := r.c.JS.Publish(pctx, jobsSubject(r.key, r.batch), data, jetstream.WithMsgID(j.msgID()))
		cancel()
		if err != nil {
			msg := err.Error()
			switch {
			case ctx.Err() != nil:
			case strings.Contains(msg, "per subject"):
				// the batch holds its share of the queue: the next goes out when one of its own
				// is done
			case strings.Contains(msg, "maximum messages") || strings.Contains(msg, "maximum bytes"):
				if time.Since(r.waitingSaid) > time.Minute {
					r.waitingSaid = time.Now()
					r.on(Event{Kind: EventNotice, Index: j.Index, Detail: fmt.Sprintf("%v (%d jobs): image %d and the %d after it wait here for room",
						ErrQueueFull, queueLength(ctx, r.stream), j.Index+1, len(r.jobs)-r.next-1)})
				}
			default:
				if time.Since(r.outageSaid) > 30*time.Second {
					r.outageSaid = time.Now()
					r.on(Event{Kind: EventNotice, Index: j.Index, Detail: fmt.Sprintf("cannot submit image %d to the hub (%v): trying again until it answers", j.Index+1, err)})
				}
			}
			return
		}
		r.seqs[ack.Sequence] = j.Index
		r.seqOf[j.Index] = ack.Sequence
		r.next++
	}
}

// fail resolves image i as failed.
func (r *batchRun) fail(i int, ev Event) {
	r.resolved[i] = true
	if r.firstErr == nil {
		r.firstErr = fmt.Errorf("image %d: %s", i+1, ev.Detail)
	}
	ev.Kind, ev.Index = EventFailed, i
	r.on(ev)
}

// handle is one progress message or advisory.
func (r *batchRun) handle(ctx context.Context, ev any) {
	switch ev := ev.(type) {
	case Progress:
		if ev.Index < 0 || ev.Index >= len(r.jobs) || r.resolved[ev.Index] {
			return
		}
		switch {
		case ev.Error != "":
			r.fail(ev.Index, Event{Worker: ev.Worker, Attempt: ev.Attempt, Detail: ev.Error})
		case ev.HandedBack:
			r.on(Event{Kind: EventHandedBack, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt})
		case ev.Attempt > r.attempts[ev.Index]:
			r.attempts[ev.Index] = ev.Attempt
			r.on(Event{Kind: EventTaken, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt})
			fallthrough
		default:
			if ev.Step > 0 && ev.Attempt == r.attempts[ev.Index] {
				r.on(Event{Kind: EventProgress, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt, Step: ev.Step, Steps: ev.Steps, PNG: ev.Preview})
			}
		}
	case maxDeliveries:
		i, ok := r.seqs[ev.StreamSeq]
		if !ok || r.resolved[i] {
			return
		}
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r.stream.DeleteMsg(dctx, ev.StreamSeq) // the hub does too; whoever is first
		cancel()
		r.fail(i, Event{Detail: fmt.Sprintf("it was given to %d Macs and none finished it (each went silent past the ack wait): retry it", ev.Deliveries)})
	case terminated:
		r.reasons[ev.StreamSeq] = ev.Reason
	}
}

// checkQueue finds the batch's jobs that left the queue without a result (removed by someone,
// refused by a worker whose word was lost, or lost by a hub restarted on other data): one found
// gone at two checks in a row fails.
func (r *batchRun) checkQueue(ctx context.Context) {
	var gone []int
	for i, seq := range r.seqOf {
		if r.resolved[i] {
			delete(r.missing, i)
			continue
		}
		gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		m, err := r.stream.GetMsg(gctx, seq)
		cancel()
		if errors.Is(err, jetstream.ErrMsgNotFound) || (err == nil && m.Header.Get(jetstream.MsgIDHeader) != r.jobs[i].msgID()) {
			gone = append(gone, i)
		} else {
			delete(r.missing, i)
		}
	}
	if len(gone) == 0 {
		return
	}
	r.sweepResults(ctx)
	for _, i := range gone {
		if r.resolved[i] {
			continue
		}
		if r.missing[i]++; r.missing[i] < 2 {
			continue
		}
		why := r.reasons[r.seqOf[i]]
		if why == "" {
			why = "removed from the hub's queue (cancelled there, or the hub restarted without its queue)"
		}
		r.fail(i, Event{Detail: "it left the studio's queue without a result: " + why})
	}
}

// sweepResults reads the results bucket's list for the batch's images: a job that left the
// queue was often done, and its result may not have come through the watcher (it catches up
// some seconds after a hub restart).
func (r *batchRun) sweepResults(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	list, err := r.results.List(lctx)
	if err != nil {
		return
	}
	for _, info := range list {
		if info.Metadata["batch"] == r.batch {
			r.result(ctx, info)
		}
	}
}

// loop publishes and listens until every image has arrived or failed.
func (r *batchRun) loop(ctx context.Context) error {
	r.publish(ctx)
	check := time.NewTicker(queueCheckEvery)
	defer check.Stop()
	retry := time.NewTicker(publishRetry)
	defer retry.Stop()
	warned := false
	for len(r.resolved) < len(r.jobs) {
		select {
		case <-ctx.Done():
			return r.cancelled()
		case <-retry.C:
		case <-check.C:
			if err := r.c.checkTaker(ctx, r.jobs[0].Fingerprint); err != nil && !warned {
				warned = true
				r.on(Event{Kind: EventNotice, Detail: err.Error() + "; the images wait in the hub's queue until one joins"})
			} else if err == nil {
				warned = false
			}
			r.checkQueue(ctx)
		case ev := <-r.events:
			r.handle(ctx, ev)
		case info := <-r.watcher.Updates():
			// The messages that came before this result are told first (a hand-back before the
			// other Mac's result of the same image).
			for drained := false; !drained; {
				select {
				case ev := <-r.events:
					r.handle(ctx, ev)
				default:
					drained = true
				}
			}
			if err := r.result(ctx, info); err != nil {
				return err
			}
		}
		if r.next < len(r.jobs) {
			r.publish(ctx)
		}
	}
	return r.firstErr
}

// result takes an object of the results bucket that may be one of the batch's images.
func (r *batchRun) result(ctx context.Context, info *jetstream.ObjectInfo) error {
	if info == nil || info.Metadata["batch"] != r.batch || r.seen[info.Name] {
		return nil
	}
	i, err := strconv.Atoi(info.Metadata["index"])
	if err != nil || i < 0 || i >= len(r.jobs) {
		return nil
	}
	attempt, _ := strconv.Atoi(info.Metadata["attempt"])
	ev := Event{Index: i, Worker: info.Metadata["worker"], Attempt: attempt}
	if r.resolved[i] {
		ev.Kind = EventDuplicate
	} else {
		// bounded: an object whose chunks never came (its put failed half way) is not waited for
		gctx, cancel := context.WithTimeout(ctx, 10*time.Second+time.Duration(info.Size>>20)*time.Second)
		data, err := r.results.GetBytes(gctx, info.Name)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return r.cancelled()
			}
			r.on(Event{Kind: EventNotice, Index: i, Detail: fmt.Sprintf("image %d's result could not be read (%v); waiting for another copy", i+1, err)})
			return nil
		}
		r.resolved[i] = true
		ev.Kind, ev.PNG = EventResult, data
	}
	r.seen[info.Name] = true
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	r.results.Delete(dctx, info.Name)
	cancel()
	r.on(ev)
	return nil
}

// cancelled takes the batch's waiting jobs off the queue and says how that went.
func (r *batchRun) cancelled() error {
	e := &CancelledError{Timeout: r.timeout}
	dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for seq, i := range r.seqs {
		if r.resolved[i] {
			continue
		}
		e.Waiting++
		if !r.c.NC.IsConnected() { // the hub is away: nothing to wait for
			e.Unreachable = true
			continue
		}
		err := r.stream.DeleteMsg(dctx, seq)
		switch {
		case err == nil:
			e.Removed++
		case errors.Is(err, jetstream.ErrMsgNotFound) || strings.Contains(err.Error(), "no message found"):
			e.Waiting-- // already gone (rendered meanwhile, or dropped)
		default:
			e.Unreachable = true
		}
	}
	return e
}
