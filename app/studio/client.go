package studio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

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
	if err := roomFor(ctx, obs, len(data)); err != nil {
		return "", errors.New(storeFault("an input file", len(data), err))
	}
	if err := putWhole(ctx, obs, jetstream.ObjectMeta{Name: name}, data); err != nil {
		return "", errors.New(storeFault("an input file", len(data), err))
	}
	return name, nil
}

// Run submits the jobs (one batch, one fingerprint) and reports each image's events until every
// image has arrived or failed. Each image is reported as a result once, whoever renders it
// first; a later copy is a duplicate and dropped. While it runs it tells the hub the batch's
// client is alive (BatchesBucket); a client that stops (killed, its Mac asleep) has its jobs
// dropped by the hub. Jobs the queue has no room for wait here and go out as room comes; a
// publish that fails while the hub is away is retried until it comes back. An image whose job
// left the queue without a result (removed, or the hub lost it) fails and says so. Cancelling
// ctx takes the batch's waiting jobs off the queue (a *CancelledError says how many). It
// returns the first failure's error, if any image failed.
func (c *Conn) Run(ctx context.Context, jobs []*Job, on func(Event)) error {
	if len(jobs) == 0 {
		return nil
	}
	r, err := c.newRun(ctx, jobs, on)
	if err != nil {
		return err
	}
	defer r.close()
	return r.loop(ctx)
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
