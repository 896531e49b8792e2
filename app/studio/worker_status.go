package studio

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func (w *Worker) conn() *Conn {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.c
}

// Status is the worker's own status.
func (w *Worker) Status() WorkerStatus {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.status
}

// poke asks for the status to be published now.
func (w *Worker) poke() {
	w.mu.Lock()
	ch := w.poked
	w.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- struct{}{}:
	default:
	}
}

// publishStatus keeps the worker's entry (under a key of its own for this run) in the workers bucket fresh (on each change and every
// statusEvery, so it expires statusTTL after the worker goes silent); stop removes it.
func (w *Worker) publishStatus(kv jetstream.KeyValue) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	key := statusKey(w.Name) + "-" + NewBatchID()[:6] // two Macs of the same name keep their own entries
	put := func() {
		data, _ := json.Marshal(w.Status())
		pctx, c := context.WithTimeout(ctx, 5*time.Second)
		kv.Put(pctx, key, data)
		c()
	}
	put()
	finished := every(ctx, statusEvery, w.poked, put)
	return func() {
		cancel()
		<-finished
		dctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		kv.Delete(dctx, key)
		c()
	}
}
