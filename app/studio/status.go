package studio

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// WorkerStatus is one worker as `easel studio status` and the window's Studio panel show it.
type WorkerStatus struct {
	Name  string `json:"name"`
	Chip  string `json:"chip,omitempty"`
	Model string `json:"model"` // the model file's name
	Key   string `json:"key"`   // the fingerprint key of the jobs it takes
	// Keys are the keys of every job kind it takes (Key is the first).
	Keys    []string `json:"keys,omitempty"`
	Easel   string   `json:"easel"`
	State   string   `json:"state"`         // "idle" or "rendering"
	Job     string   `json:"job,omitempty"` // batch/index while rendering
	Attempt int      `json:"attempt,omitempty"`
	Step    int      `json:"step"`
	Steps   int      `json:"steps"`
	Done    int      `json:"done"` // images finished since it joined
}

// Status is the studio: its workers, how many jobs wait, of which batches, and the hub's disk.
type Status struct {
	Workers []WorkerStatus `json:"workers"`
	Queued  int            `json:"queued"`
	Batches []BatchStatus  `json:"batches"`
	Disk    DiskStatus     `json:"disk"`
}

// DiskStatus is the hub's use of its disk.
type DiskStatus struct {
	FreeAtStart uint64 `json:"free_at_start_bytes"` // the data folder's disk, when the hub started
	Limit       int64  `json:"limit_bytes"`         // the hub's share of it
	Used        uint64 `json:"used_bytes"`          // what the queue and stores fill now
}

// The worker states.
const (
	StateIdle      = "idle"
	StateRendering = "rendering"
)

// statusKey is a worker name made safe as a key.
func statusKey(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "worker"
	}
	return b.String()
}

// Workers are the workers that spoke within the status lifetime, by name.
func (c *Conn) Workers(ctx context.Context) ([]WorkerStatus, error) {
	kv, err := c.JS.KeyValue(ctx, WorkersBucket)
	if err != nil {
		return nil, hubMissing(err)
	}
	keys, err := kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []WorkerStatus
	for _, k := range keys {
		e, err := kv.Get(ctx, k)
		if err != nil {
			continue // expired between the listing and now
		}
		var s WorkerStatus
		if json.Unmarshal(e.Value(), &s) == nil {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Status reads the studio's state.
func (c *Conn) Status(ctx context.Context) (*Status, error) {
	ws, err := c.Workers(ctx)
	if err != nil {
		return nil, err
	}
	s, err := c.JS.Stream(ctx, StreamName)
	if err != nil {
		return nil, hubMissing(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, err
	}
	queued := int(info.State.Msgs)
	for _, w := range ws {
		if w.State == StateRendering {
			queued--
		}
	}
	st := &Status{Workers: ws, Queued: max(queued, 0)}
	st.Disk.FreeAtStart, _ = strconv.ParseUint(info.Config.Metadata[metaDiskFree], 10, 64)
	st.Disk.Limit, _ = strconv.ParseInt(info.Config.Metadata[metaStoreLimit], 10, 64)
	if ai, err := c.JS.AccountInfo(ctx); err == nil {
		st.Disk.Used = ai.Store
	}
	if st.Batches, err = c.Batches(ctx); err != nil {
		return nil, err
	}
	return st, nil
}

// hubMissing explains a stream or bucket that is not there.
func hubMissing(err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrBucketNotFound) {
		return errors.New("this server is not an Easel hub (no studio queue on it): start one with `easel studio hub`")
	}
	return err
}
