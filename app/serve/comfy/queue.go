package comfy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"slices"
	"strings"
	"sync"
	"time"

	"easel/app/imagefile"
	"easel/app/serve/render"
)

// task is one queued workflow.
type task struct {
	number   int
	id       string
	prompt   json.RawMessage
	extra    map[string]any
	outputs  []output
	clientID string
	cancel   context.CancelFunc
}

// item is ComfyUI's queue entry: [number, prompt_id, prompt, extra_data, outputs_to_execute].
func (t *task) item() []any {
	var ids []string
	for _, o := range t.outputs {
		ids = append(ids, o.id)
	}
	return []any{t.number, t.id, t.prompt, t.extra, ids}
}

// entry is one finished workflow in the history.
type entry struct {
	task     *task
	outputs  map[string]any
	status   map[string]any
	finished time.Time
}

// imageRef is ComfyUI's {filename, subfolder, type}.
type imageRef struct {
	Filename  string `json:"filename"`
	Subfolder string `json:"subfolder"`
	Type      string `json:"type"`
}

// The history kept (the oldest go first) and the images' bytes in all.
const (
	maxHistory     = 64
	maxStoredBytes = 512 << 20
)

// queue runs the workflows one at a time on the Renderer and keeps the history and the images.
type queue struct {
	a       *API
	mu      sync.Mutex
	pending []*task
	running *task
	history map[string]*entry
	order   []string
	images  map[string][]byte // "type/filename" → PNG
	bytes   int
	number  int
	counter int // SaveImage's file counter
	wake    chan struct{}
	ctx     context.Context
	stop    context.CancelFunc
	done    chan struct{}
}

func newQueue(a *API) *queue {
	ctx, stop := context.WithCancel(context.Background())
	q := &queue{a: a, history: map[string]*entry{}, images: map[string][]byte{}, wake: make(chan struct{}, 1), ctx: ctx, stop: stop, done: make(chan struct{})}
	go q.work()
	return q
}

// add queues a task; false when the queue holds its limit already.
func (q *queue) add(t *task, limit int) bool {
	q.mu.Lock()
	if len(q.pending) >= limit {
		q.mu.Unlock()
		return false
	}
	t.number = q.number
	q.number++
	q.pending = append(q.pending, t)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	q.a.hub.send("", message("status", map[string]any{"status": q.status()}))
	return true
}

// remaining is ComfyUI's queue_remaining: the tasks waiting or running.
func (q *queue) status() map[string]any {
	q.mu.Lock()
	n := len(q.pending)
	if q.running != nil {
		n++
	}
	q.mu.Unlock()
	return map[string]any{"exec_info": map[string]any{"queue_remaining": n}}
}

// work runs the tasks in order until the queue stops.
func (q *queue) work() {
	defer close(q.done)
	for {
		q.mu.Lock()
		var t *task
		if len(q.pending) > 0 {
			t, q.pending = q.pending[0], q.pending[1:]
			ctx, cancel := context.WithCancel(q.ctx)
			t.cancel = cancel
			q.running = t
			q.mu.Unlock()
			q.run(ctx, t)
			cancel()
			q.mu.Lock()
			q.running = nil
			q.mu.Unlock()
			q.a.hub.send("", message("status", map[string]any{"status": q.status()}))
			continue
		}
		q.mu.Unlock()
		select {
		case <-q.wake:
		case <-q.ctx.Done():
			return
		}
	}
}

// run renders a task's outputs, telling its client as ComfyUI does.
func (q *queue) run(ctx context.Context, t *task) {
	h, sid := q.a.hub, t.clientID
	now := func() int64 { return time.Now().UnixMilli() }
	h.send(sid, message("execution_start", map[string]any{"prompt_id": t.id, "timestamp": now()}))
	h.send(sid, message("execution_cached", map[string]any{"nodes": []string{}, "prompt_id": t.id, "timestamp": now()}))
	outputs := map[string]any{}
	var notes []string
	fail := func(kind string, err error, node string) {
		msg := map[string]any{"prompt_id": t.id, "node_id": node, "node_type": "", "executed": []string{}, "exception_message": err.Error(),
			"exception_type": kind, "traceback": []string{}, "current_inputs": map[string]any{}, "current_outputs": map[string]any{}, "timestamp": now()}
		typ := "execution_error"
		if kind == "interrupted" {
			typ = "execution_interrupted"
		}
		h.send(sid, message(typ, msg))
		q.finish(t, outputs, "error", []any{[]any{typ, msg}})
		h.send(sid, message("executing", map[string]any{"node": nil, "prompt_id": t.id}))
	}
	for _, o := range t.outputs {
		o.req.Kind = "comfy"
		h.send(sid, message("executing", map[string]any{"node": o.id, "display_node": o.id, "prompt_id": t.id}))
		res, err := q.a.r.Render(ctx, o.req, func(p render.Progress) {
			h.send(sid, message("progress", map[string]any{"value": p.Step, "max": p.Steps, "prompt_id": t.id, "node": o.id}))
			if p.Preview != nil {
				var buf bytes.Buffer
				if (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, p.Preview) == nil {
					h.send(sid, preview(buf.Bytes()))
				}
			}
		})
		switch {
		case errors.Is(err, render.ErrGone):
			fail("interrupted", errors.New("the prompt was interrupted"), o.id)
			return
		case err != nil:
			fail("EaselError", err, o.id)
			return
		}
		var refs []imageRef
		for _, p := range res.Pictures {
			ref, err := q.store(o, p)
			if err != nil {
				fail("EaselError", err, o.id)
				return
			}
			refs = append(refs, ref)
			if !o.temp {
				if err := q.a.r.Save(p); err != nil {
					notes = append(notes, err.Error())
				}
			}
		}
		notes = append(append(notes, o.notes...), res.Warnings...)
		outputs[o.id] = map[string]any{"images": refs}
		h.send(sid, message("executed", map[string]any{"node": o.id, "display_node": o.id, "output": map[string]any{"images": refs}, "prompt_id": t.id}))
	}
	msgs := []any{[]any{"execution_start", map[string]any{"prompt_id": t.id, "timestamp": now()}}}
	for _, n := range notes {
		msgs = append(msgs, []any{"easel_warning", map[string]any{"prompt_id": t.id, "message": n}})
	}
	msgs = append(msgs, []any{"execution_success", map[string]any{"prompt_id": t.id, "timestamp": now()}})
	q.finish(t, outputs, "success", msgs)
	h.send(sid, message("execution_success", map[string]any{"prompt_id": t.id, "timestamp": now()}))
	h.send(sid, message("executing", map[string]any{"node": nil, "prompt_id": t.id}))
}

// store keeps a picture as ComfyUI's SaveImage names it (PREFIX_00001_.png, RGB as SaveImage
// writes it, with the app's metadata).
func (q *queue) store(o output, p render.Picture) (imageRef, error) {
	var buf bytes.Buffer
	if err := imagefile.Encode(&buf, render.Opaque(p.Image), p.Settings); err != nil {
		return imageRef{}, err
	}
	typ := "output"
	if o.temp {
		typ = "temp"
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.counter++
	prefix := strings.NewReplacer("/", "_", "\\", "_", "..", "_").Replace(o.prefix)
	name := fmt.Sprintf("%s_%05d_.png", prefix, q.counter)
	q.images[typ+"/"+name] = buf.Bytes()
	q.bytes += buf.Len()
	return imageRef{Filename: name, Subfolder: "", Type: typ}, nil
}

// finish moves a task into the history, dropping the oldest entries (and their images) past
// the caps.
func (q *queue) finish(t *task, outputs map[string]any, status string, msgs []any) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.history[t.id] = &entry{task: t, outputs: outputs, finished: time.Now(),
		status: map[string]any{"status_str": status, "completed": status == "success", "messages": msgs}}
	q.order = append(q.order, t.id)
	for len(q.order) > maxHistory || q.bytes > maxStoredBytes && len(q.order) > 1 {
		old := q.history[q.order[0]]
		for _, out := range old.outputs {
			for _, ref := range out.(map[string]any)["images"].([]imageRef) {
				key := ref.Type + "/" + ref.Filename
				q.bytes -= len(q.images[key])
				delete(q.images, key)
			}
		}
		delete(q.history, q.order[0])
		q.order = q.order[1:]
	}
}

// drop removes waiting tasks: all of them (clear) or those named.
func (q *queue) drop(clear bool, ids []string) {
	q.mu.Lock()
	kept := q.pending[:0]
	for _, t := range q.pending {
		if !clear && !slices.Contains(ids, t.id) {
			kept = append(kept, t)
		}
	}
	q.pending = kept
	q.mu.Unlock()
	q.a.hub.send("", message("status", map[string]any{"status": q.status()}))
}

// interrupt stops the running task.
func (q *queue) interrupt() {
	q.mu.Lock()
	t := q.running
	q.mu.Unlock()
	if t != nil && t.cancel != nil {
		t.cancel()
	}
}

// close stops the worker (the running task's jobs are cancelled) and waits for it.
func (q *queue) close() {
	q.stop()
	<-q.done
}

// newID is a random UUID (version 4), ComfyUI's prompt_id.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
