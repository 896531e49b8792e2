package studio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Event is what the client hears about a batch's image.
type Event struct {
	Kind    string // see the Event* constants
	Index   int
	Worker  string
	Attempt int
	Step    int
	Steps   int
	PNG     []byte // EventResult: the image; EventProgress: the step's preview (nil without one)
	Detail  string // a failure's reason, a notice's text
}

// The kinds of Event.
const (
	EventTaken      = "taken"       // a worker took the image (Attempt > 1: after a redelivery)
	EventProgress   = "progress"    // a step finished
	EventHandedBack = "handed_back" // the worker left and gave the image back to the queue
	EventResult     = "result"      // the image arrived; the client writes it
	EventDuplicate  = "duplicate"   // a late second result of an image already written: dropped
	EventFailed     = "failed"      // the image cannot be made (a bad request, or MaxDeliver deliveries)
	EventNotice     = "notice"      // something the user should know (no worker can take the jobs now)
)

// ErrQueueFull: the hub's queue holds as many jobs as it takes.
var ErrQueueFull = errors.New("the studio's queue is full")

// ErrNoWorker: no worker in the studio has the model (and Easel version) the jobs need.
var ErrNoWorker = errors.New("no Mac in the studio can take these jobs")

// PutInput stores an input file (condition image, start image, mask, LoRA) in the hub once, by
// its SHA-256, and returns its object name.
func (c *Conn) PutInput(ctx context.Context, data []byte) (string, error) {
	name := InputName(data)
	obs, err := c.JS.ObjectStore(ctx, InputsBucket)
	if err != nil {
		return "", hubMissing(err)
	}
	if info, err := obs.GetInfo(ctx, name); err == nil && info.Size == uint64(len(data)) {
		return name, nil
	}
	if _, err := obs.PutBytes(ctx, name, data); err != nil {
		return "", fmt.Errorf("sending an input file to the hub: %w", err)
	}
	return name, nil
}

// Run submits the jobs (one batch, one fingerprint) and reports each image's events until every
// image has arrived or failed. Each image is reported as a result once, whoever renders it
// first; a later copy is a duplicate and dropped. Cancelling ctx takes the batch's waiting jobs
// off the queue. It returns the first failure's error, if any image failed.
func (c *Conn) Run(ctx context.Context, jobs []*Job, on func(Event)) error {
	if len(jobs) == 0 {
		return nil
	}
	batch, key := jobs[0].Batch, jobs[0].Fingerprint.Key()
	if err := c.checkTaker(ctx, jobs[0].Fingerprint); err != nil {
		return err
	}
	events := make(chan any, 256)
	psub, err := c.NC.Subscribe(progressPrefix+batch+".>", func(m *nats.Msg) {
		var p Progress
		if json.Unmarshal(m.Data, &p) == nil {
			events <- p
		}
	})
	if err != nil {
		return err
	}
	defer psub.Unsubscribe()
	type maxDeliveries struct {
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries int    `json:"deliveries"`
	}
	asub, err := c.NC.Subscribe(maxDeliveriesAdvisory+consumerName(key), func(m *nats.Msg) {
		var a maxDeliveries
		if json.Unmarshal(m.Data, &a) == nil {
			events <- a
		}
	})
	if err != nil {
		return err
	}
	defer asub.Unsubscribe()
	results, err := c.JS.ObjectStore(ctx, ResultsBucket)
	if err != nil {
		return hubMissing(err)
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watcher, err := results.Watch(wctx, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer watcher.Stop()
	stream, err := c.JS.Stream(ctx, StreamName)
	if err != nil {
		return hubMissing(err)
	}

	seqs := map[uint64]int{}   // stream sequence → index, for the advisories
	attempts := map[int]int{}  // the latest attempt seen per index
	resolved := map[int]bool{} // written or failed
	var firstErr error
	next := 0 // the next job to publish
	publish := func() error {
		for next < len(jobs) {
			j := jobs[next]
			data, _ := json.Marshal(j)
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			ack, err := c.JS.Publish(pctx, jobsSubject(key), data, jetstream.WithMsgID(j.msgID()))
			cancel()
			if err != nil {
				if strings.Contains(err.Error(), "maximum messages") {
					if next > len(resolved) {
						return nil // wait for one of ours to finish, then go on
					}
					return fmt.Errorf("%w (it holds its %d jobs): wait for the studio to render some, or ask the hub for a longer queue", ErrQueueFull, queueLength(ctx, stream))
				}
				return fmt.Errorf("submitting image %d to the studio: %w", j.Index+1, err)
			}
			seqs[ack.Sequence] = j.Index
			next++
		}
		return nil
	}
	defer func() {
		if ctx.Err() != nil { // cancelled: take the batch's waiting jobs off the queue
			dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for seq, i := range seqs {
				if !resolved[i] {
					stream.DeleteMsg(dctx, seq)
				}
			}
		}
	}()
	if err := publish(); err != nil {
		return err
	}
	check := time.NewTicker(statusEvery)
	defer check.Stop()
	// handle is one progress message or advisory.
	handle := func(ev any) {
		switch ev := ev.(type) {
		case Progress:
			if resolved[ev.Index] || ev.Index < 0 || ev.Index >= len(jobs) {
				return
			}
			switch {
			case ev.Error != "":
				resolved[ev.Index] = true
				if firstErr == nil {
					firstErr = fmt.Errorf("image %d: %s", ev.Index+1, ev.Error)
				}
				on(Event{Kind: EventFailed, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt, Detail: ev.Error})
			case ev.HandedBack:
				on(Event{Kind: EventHandedBack, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt})
			case ev.Attempt > attempts[ev.Index]:
				attempts[ev.Index] = ev.Attempt
				on(Event{Kind: EventTaken, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt})
				fallthrough
			default:
				if ev.Step > 0 && ev.Attempt == attempts[ev.Index] {
					on(Event{Kind: EventProgress, Index: ev.Index, Worker: ev.Worker, Attempt: ev.Attempt, Step: ev.Step, Steps: ev.Steps, PNG: ev.Preview})
				}
			}
		case maxDeliveries:
			i, ok := seqs[ev.StreamSeq]
			if !ok || resolved[i] {
				return
			}
			resolved[i] = true
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			stream.DeleteMsg(dctx, ev.StreamSeq)
			cancel()
			err := fmt.Errorf("image %d was given to %d Macs and none finished it (each went silent past the ack wait): retry it", i+1, ev.Deliveries)
			if firstErr == nil {
				firstErr = err
			}
			on(Event{Kind: EventFailed, Index: i, Detail: err.Error()})
		}
	}
	warned := false
	for len(resolved) < len(jobs) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-check.C:
			if err := c.checkTaker(ctx, jobs[0].Fingerprint); err != nil && !warned {
				warned = true
				on(Event{Kind: EventNotice, Detail: err.Error() + "; the images wait in the hub's queue until one joins"})
			} else if err == nil {
				warned = false
			}
		case ev := <-events:
			handle(ev)
		case info := <-watcher.Updates():
			// The messages that came before this result are told first (a hand-back before the
			// other Mac's result of the same image).
			for drained := false; !drained; {
				select {
				case ev := <-events:
					handle(ev)
				default:
					drained = true
				}
			}
			if info == nil || info.Metadata["batch"] != batch {
				continue
			}
			i, err := strconv.Atoi(info.Metadata["index"])
			if err != nil || i < 0 || i >= len(jobs) {
				continue
			}
			attempt, _ := strconv.Atoi(info.Metadata["attempt"])
			ev := Event{Index: i, Worker: info.Metadata["worker"], Attempt: attempt}
			if resolved[i] {
				ev.Kind = EventDuplicate
			} else {
				data, err := results.GetBytes(ctx, info.Name)
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					on(Event{Kind: EventNotice, Index: i, Detail: fmt.Sprintf("image %d's result could not be read (%v); waiting for another copy", i+1, err)})
					continue
				}
				resolved[i] = true
				ev.Kind, ev.PNG = EventResult, data
			}
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			results.Delete(dctx, info.Name)
			cancel()
			on(ev)
		}
		if next < len(jobs) {
			if err := publish(); err != nil {
				return err
			}
		}
	}
	return firstErr
}

// queueLength is the hub's queue length, for messages.
func queueLength(ctx context.Context, s jetstream.Stream) int64 {
	info, err := s.Info(ctx)
	if err != nil {
		return 0
	}
	return info.Config.MaxMsgs
}

// checkTaker says whether some worker can take jobs of this fingerprint.
func (c *Conn) checkTaker(ctx context.Context, fp Fingerprint) error {
	ws, err := c.Workers(ctx)
	if err != nil {
		return err
	}
	key := fp.Key()
	var have []string
	for _, w := range ws {
		if w.Key == key || slices.Contains(w.Keys, key) {
			return nil
		}
		have = append(have, fmt.Sprintf("%s (%s, Easel %s)", w.Name, w.Model, w.Easel))
	}
	model := fp.Model
	if len(model) > 10 {
		model = model[:10]
	}
	if len(have) == 0 {
		return fmt.Errorf("%w: none has joined; on each Mac run `easel studio join URL --token T --model M.cmf`", ErrNoWorker)
	}
	return fmt.Errorf("%w: none has this model (fingerprint %s) with Easel %s; the Macs there: %s. Join one with the same model file and version",
		ErrNoWorker, model, fp.Easel, strings.Join(have, ", "))
}
