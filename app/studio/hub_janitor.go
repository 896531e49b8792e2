package studio

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The hub keeps its queue clean with JetStream's own means (no scheduler of its own):
//   - a job that used its MaxDeliver deliveries (its Macs went silent each time) leaves the queue
//     when JetStream's MAX_DELIVERIES advisory says so: it would hold a slot for ever;
//   - a batch whose client stopped saying it is alive (its key in BatchesBucket expired: the
//     client was killed, or its Mac slept) has its jobs purged from the queue by subject, and
//     its results removed; a client says so every third of ClientTimeout, so its jobs leave
//     within ClientTimeout and a third;
//   - every image that failed on a worker is written to the hub's log, with the reason.
// Jobs older than MaxAge leave the queue by the stream's MaxAge.

// startJanitor starts the hub's upkeep on an in-process connection; stop ends it.
func (h *Hub) startJanitor() (stop func(), err error) {
	nc, err := h.connect(roleHub)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := js.Stream(ctx, StreamName)
	if err != nil {
		cancel()
		nc.Close()
		return nil, err
	}
	// exhausted jobs leave the queue
	nc.Subscribe(maxDeliveriesAdvisory+"*", func(m *nats.Msg) {
		var a struct {
			StreamSeq  uint64 `json:"stream_seq"`
			Deliveries int    `json:"deliveries"`
		}
		if json.Unmarshal(m.Data, &a) != nil {
			return
		}
		dctx, c := context.WithTimeout(ctx, 5*time.Second)
		defer c()
		if err := stream.DeleteMsg(dctx, a.StreamSeq); err == nil {
			h.logf("job %d went to %d Macs and none finished it (each went silent past the ack wait): it left the queue", a.StreamSeq, a.Deliveries)
		}
	})
	// failures, in the hub's log
	nc.Subscribe(progressPrefix+">", func(m *nats.Msg) {
		var p Progress
		if json.Unmarshal(m.Data, &p) == nil && p.Error != "" {
			h.logf("image %d of batch %s failed on %s: %s", p.Index+1, p.Batch, p.Worker, p.Error)
		}
	})
	finished := every(ctx, h.cfg.ClientTimeout/3, nil, func() {
		h.checkDisk(ctx, js)
		// After a restart the clients' keys (kept in memory) come back within a third of
		// ClientTimeout: until then no batch is judged.
		if time.Since(h.started) > h.cfg.ClientTimeout {
			h.dropOrphans(ctx, js, stream)
		}
	})
	return func() {
		cancel()
		<-finished
		nc.Close()
	}, nil
}

// dropOrphans purges the jobs, and removes the results, of batches whose client is gone.
func (h *Hub) dropOrphans(ctx context.Context, js jetstream.JetStream, stream jetstream.Stream) {
	kv, err := js.KeyValue(ctx, BatchesBucket)
	if err != nil {
		return
	}
	alive := func(batch string) bool {
		if batch == "" {
			return false
		}
		_, err := kv.Get(ctx, batch)
		return !errors.Is(err, jetstream.ErrKeyNotFound) || ctx.Err() != nil
	}
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(jobsPrefix+">"))
	if err == nil {
		for subject, n := range info.State.Subjects {
			if batch := batchOfSubject(subject); !alive(batch) {
				if err := stream.Purge(ctx, jetstream.WithPurgeSubject(subject)); err == nil {
					h.logf("batch %s: its client is gone (silent for %s); its %d jobs left the queue", orUnknown(batch), h.cfg.ClientTimeout, n)
				}
			}
		}
	}
	results, err := js.ObjectStore(ctx, ResultsBucket)
	if err != nil {
		return
	}
	list, err := results.List(ctx)
	if err != nil {
		return
	}
	for _, o := range list {
		if time.Since(o.ModTime) > h.cfg.ClientTimeout && !alive(o.Metadata["batch"]) {
			results.Delete(ctx, o.Name)
		}
	}
}

// checkDisk warns, once until it recovers, when other files filled the hub's disk so that the
// hub's share no longer fits in what is free: JetStream would then meet a full disk before its
// limit and turn itself off.
func (h *Hub) checkDisk(ctx context.Context, js jetstream.JetStream) {
	now, err := shareOfDisk(h.cfg.Data, 0)
	if now.Free == 0 && err != nil {
		return
	}
	ai, err := js.AccountInfo(ctx)
	if err != nil {
		return
	}
	unused := uint64(max(h.Disk.Store-int64(ai.Store), 0))
	short := now.Free < unused
	if short && !h.diskShort {
		h.logf("the disk of %s has %s free, less than the %s the hub may still fill: free space there, or restart the hub with a smaller --max-store", h.cfg.Data, sizeText(int64(now.Free)), sizeText(int64(unused)))
	}
	h.diskShort = short
}

func orUnknown(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(none)"
	}
	return s
}
