package studio

import (
	"context"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
)

// Cancelling a batch and purging the queue, for `easel studio cancel` and `easel studio purge`.
// Both are JetStream purges by subject: a batch's jobs are easel.jobs.*.<batch>.

// BatchStatus is a batch with jobs in the queue.
type BatchStatus struct {
	Batch string `json:"batch"`
	Jobs  int    `json:"jobs"` // waiting or rendering
}

// Batches are the batches with jobs in the queue, largest first.
func (c *Conn) Batches(ctx context.Context) ([]BatchStatus, error) {
	s, err := c.JS.Stream(ctx, StreamName)
	if err != nil {
		return nil, hubMissing(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(jobsPrefix+">"))
	if err != nil {
		return nil, err
	}
	by := map[string]int{}
	for subject, n := range info.State.Subjects {
		by[orUnknown(batchOfSubject(subject))] += int(n)
	}
	out := make([]BatchStatus, 0, len(by))
	for b, n := range by {
		out = append(out, BatchStatus{Batch: b, Jobs: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Jobs != out[j].Jobs {
			return out[i].Jobs > out[j].Jobs
		}
		return out[i].Batch < out[j].Batch
	})
	return out, nil
}

// CancelBatch takes a batch's jobs off the queue (its client, if still running, hears that they
// left without a result) and says how many there were.
func (c *Conn) CancelBatch(ctx context.Context, batch string) (int, error) {
	if batch == "" || !subjectToken(batch) {
		return 0, fmt.Errorf("%q is not a batch: give one that `easel studio status` lists", batch)
	}
	s, err := c.JS.Stream(ctx, StreamName)
	if err != nil {
		return 0, hubMissing(err)
	}
	filter := jobsPrefix + "*." + batch
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, k := range info.State.Subjects {
		n += int(k)
	}
	if n == 0 {
		return 0, fmt.Errorf("batch %s has no jobs in the queue: `easel studio status` lists those that have", batch)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(filter)); err != nil {
		return 0, err
	}
	if kv, err := c.JS.KeyValue(ctx, BatchesBucket); err == nil {
		kv.Delete(ctx, batch)
	}
	return n, nil
}

// Purge empties the queue and the results store (every client's batch) and says how many jobs
// left.
func (c *Conn) Purge(ctx context.Context) (int, error) {
	s, err := c.JS.Stream(ctx, StreamName)
	if err != nil {
		return 0, hubMissing(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	if err := s.Purge(ctx); err != nil {
		return 0, err
	}
	if rs, err := c.JS.Stream(ctx, "OBJ_"+ResultsBucket); err == nil {
		rs.Purge(ctx)
	}
	return int(info.State.Msgs), nil
}

// subjectToken says whether s can be one token of a subject.
func subjectToken(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == '.' || r == '*' || r == '>' || r > '~' {
			return false
		}
	}
	return true
}
