package studio

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// workerQueue is a worker's side of the queue: one durable pull consumer per job kind it takes
// (consumers of a work-queue stream may not overlap, and a window lent to the studio takes fewer
// kinds than `easel studio join`).
//
// An idle worker first asks every consumer for a job that is already waiting (FetchNoWait), so
// the next job of a batch is taken the moment the last one is done, whatever its kind; only
// when none waits does it wait on one consumer at a time (Fetch with JetStream's idle
// heartbeats). A consumer that is not there (deleted, or the hub restarted on other data) sends
// no heartbeats: the pull ends in ErrNoHeartbeat (or ErrConsumerDeleted) and every consumer is
// made again.
type workerQueue struct {
	js                 jetstream.JetStream
	keys               []string
	ackWait            time.Duration
	maxDeliver         int
	consumers          []jetstream.Consumer
	turn               int
	say                func(string)
	broken             bool      // a pull failed: join again before the next
	brokenSaid, lostAt time.Time // when the last notice was given, and since when it fails
}

// join makes (or finds again) the worker's consumers.
func (q *workerQueue) join(ctx context.Context) error {
	var cs []jetstream.Consumer
	for _, key := range q.keys {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		cons, err := q.js.CreateOrUpdateConsumer(cctx, StreamName, jetstream.ConsumerConfig{
			Durable:       consumerName(key),
			FilterSubject: jobsFilter(key),
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       q.ackWait,
			MaxDeliver:    q.maxDeliver,
		})
		cancel()
		if err != nil {
			return err
		}
		cs = append(cs, cons)
	}
	q.consumers = cs
	return nil
}

// lost notes a failed pull: the consumers are joined again before the next.
func (q *workerQueue) lost(err error) {
	if !q.broken {
		q.lostAt = time.Now()
	}
	q.broken = true
	if time.Since(q.brokenSaid) > 30*time.Second {
		q.brokenSaid = time.Now()
		q.say(fmt.Sprintf("cannot take jobs from the hub's queue (%v) since %s; trying again every second", plainPullError(err), q.lostAt.Format("15:04:05")))
	}
}

// plainPullError says what a failed pull means.
func plainPullError(err error) string {
	switch {
	case errors.Is(err, jetstream.ErrNoHeartbeat), errors.Is(err, jetstream.ErrConsumerDeleted), errors.Is(err, jetstream.ErrConsumerNotFound):
		return "the queue's consumer is not on the hub: it was deleted, or the hub restarted on other data"
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return "the hub has no studio queue"
	}
	return err.Error()
}

// next takes one job: one already waiting at once, else the first to come within wait. nil, nil:
// none came.
func (q *workerQueue) next(ctx context.Context, wait time.Duration) (jetstream.Msg, error) {
	if q.broken {
		if err := q.join(ctx); err != nil {
			return nil, err
		}
		if !q.brokenSaid.IsZero() {
			q.say("joined the hub's queue again")
		}
		q.broken, q.brokenSaid = false, time.Time{}
	}
	if len(q.consumers) > 1 {
		for _, cons := range q.consumers {
			b, err := cons.FetchNoWait(1)
			if err != nil {
				return nil, err
			}
			for m := range b.Messages() {
				return m, nil
			}
			if err := b.Error(); err != nil {
				return nil, err
			}
		}
	}
	cons := q.consumers[q.turn%len(q.consumers)]
	q.turn++
	each := wait / time.Duration(len(q.consumers))
	b, err := cons.Fetch(1, jetstream.FetchMaxWait(each), jetstream.FetchHeartbeat(each/4))
	if err != nil {
		return nil, err
	}
	for m := range b.Messages() {
		return m, nil
	}
	return nil, b.Error()
}
