package jobs

import (
	"context"
	"sync/atomic"
	"testing"

	"easel/engine/pipeline"
)

// TestKeepAwakeHoldsWhileAJobRuns: the hold is begun for each job and held while its generator
// runs, and every hold is ended once the jobs are done.
func TestKeepAwakeHoldsWhileAJobRuns(t *testing.T) {
	var held, begun, ended atomic.Int32
	var heldInRun []int32
	gen := GeneratorFunc(func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
		heldInRun = append(heldInRun, held.Load())
		close(events)
		return &pipeline.Result{}, nil
	})
	rec := newRecorder()
	q := New(gen, rec.notify)
	q.KeepAwake(func() func() {
		begun.Add(1)
		held.Add(1)
		return func() { held.Add(-1); ended.Add(1) }
	})
	submit(t, q, "one")
	submit(t, q, "two")
	<-rec.finished
	<-rec.finished
	q.Close()
	if len(heldInRun) != 2 || heldInRun[0] != 1 || heldInRun[1] != 1 || begun.Load() != 2 || ended.Load() != 2 || held.Load() != 0 {
		t.Errorf("held while running %v; begun %d, ended %d, still held %d", heldInRun, begun.Load(), ended.Load(), held.Load())
	}
}
