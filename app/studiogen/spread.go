package studiogen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"sync"

	"easel/app/studio"
	"easel/engine/pipeline"
)

// A request's images spread over the studio (`easel serve --studio`). The server queues one job
// per image (its progress, /interrupt and skip work per image), and the queue runs one job at a
// time; sent one by one, a batch would render on one Mac after another. So the server tells the
// generator all of a request's images first (serve.Config.Spread): they go to the studio as one
// batch at once, every idle Mac takes one, and each queue job only collects its image's events
// and result as they arrive. An image is known by its request's Stop channel, which the server
// makes per image.

// spreadImage is one image of a spread batch, as its queue job will collect it.
type spreadImage struct {
	index  int               // in the studio batch
	events chan studio.Event // taken, progress, hand-backs: what arrives before and while the job collects
	done   chan struct{}     // closed when res or err is set
	once   sync.Once
	res    *pipeline.Result
	err    error
}

func (s *spreadImage) finish(res *pipeline.Result, err error) {
	s.once.Do(func() { s.res, s.err = res, err; close(s.done) })
}

// tell passes an event on without blocking the batch: a step's progress is dropped when the
// collector lags (progress is fire and forget), the rest are kept while there is room.
func (s *spreadImage) tell(e studio.Event) {
	if e.Kind == studio.EventProgress && len(s.events) > cap(s.events)/2 {
		return
	}
	select {
	case s.events <- e:
	default:
	}
}

// Spread sends reqs (one image each, each with its own Stop channel) to the studio as one batch
// now; their queue jobs collect them (Run). release takes the images nobody collected off the
// hub's queue (the request was interrupted or its client left) and forgets them. Requests it
// cannot spread (one image, no Stop, an input it cannot send) run one by one as before.
func (g *Generator) Spread(reqs []pipeline.Request) (release func()) {
	nothing := func() {}
	if len(reqs) < 2 {
		return nothing
	}
	seen := map[<-chan struct{}]bool{}
	for _, r := range reqs {
		if r.Stop == nil || r.Batch() != 1 || seen[r.Stop] {
			return nothing
		}
		seen[r.Stop] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	batch := studio.NewBatchID()
	n := len(reqs)
	jobs := make([]*studio.Job, n)
	slots := make([]*spreadImage, n)
	for i, r := range reqs {
		sr, inputs, err := g.requestOf(ctx, r)
		if err != nil {
			cancel()
			return nothing // its queue job meets the same error and reports it
		}
		sr.Seed, sr.VariationSeed = r.ImageSeeds(0)
		data, _ := json.Marshal(envelope{Pipeline: &sr, Index: i, Count: n})
		jobs[i] = &studio.Job{Batch: batch, Index: i, Images: n, Fingerprint: g.fp, Request: data, Inputs: inputs, Previews: r.Preview != nil}
		slots[i] = &spreadImage{index: i, events: make(chan studio.Event, 64), done: make(chan struct{})}
	}
	g.smu.Lock()
	if g.spread == nil {
		g.spread = map[<-chan struct{}]*spreadImage{}
	}
	for i, r := range reqs {
		g.spread[r.Stop] = slots[i]
	}
	g.smu.Unlock()
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		err := g.conn.Run(ctx, jobs, func(e studio.Event) {
			if e.Index < 0 || e.Index >= n {
				return
			}
			s := slots[e.Index]
			switch e.Kind {
			case studio.EventResult:
				s.tell(e) // for its queue row: where it was made
				s.finish(resultOf(e, reqs[e.Index], 0))
			case studio.EventFailed:
				s.tell(e)
				s.finish(nil, fmt.Errorf("image %d: %s", e.Index+1, e.Detail))
			default:
				s.tell(e)
			}
		})
		if err == nil {
			err = fmt.Errorf("the studio ended the batch without this image")
		}
		for _, s := range slots { // the batch could not be sent, or was cancelled
			s.finish(nil, err)
		}
	}()
	return func() {
		cancel()
		<-finished
		g.smu.Lock()
		for _, r := range reqs {
			delete(g.spread, r.Stop)
		}
		g.smu.Unlock()
	}
}

// spreadSlot is req's image in a spread batch, or nil.
func (g *Generator) spreadSlot(req pipeline.Request) *spreadImage {
	if req.Stop == nil || req.Batch() != 1 {
		return nil
	}
	g.smu.Lock()
	defer g.smu.Unlock()
	return g.spread[req.Stop]
}

// collect is a spread image's queue job: its events until its result arrives.
func (g *Generator) collect(ctx context.Context, s *spreadImage, req pipeline.Request, send func(pipeline.Event)) (*pipeline.Result, error) {
	places := newPlacements(ctx, 1)
	tell := func(e studio.Event) {
		places.note(e, 0)
		if ev, ok := studioPipelineEvent(e, req, 0, 1); ok {
			send(ev)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case e := <-s.events:
			tell(e)
		case <-s.done:
			for drained := false; !drained; {
				select {
				case e := <-s.events:
					tell(e)
				default:
					drained = true
				}
			}
			if s.err != nil {
				return nil, s.err
			}
			send(pipeline.Event{Stage: pipeline.StageDone})
			return s.res, nil
		}
	}
}

// studioPipelineEvent is a studio event about image i (of n) of req as the queue's event: a
// step (with the worker's preview picture), or a notice naming the Mac and its attempt.
func studioPipelineEvent(e studio.Event, req pipeline.Request, i, n int) (pipeline.Event, bool) {
	seed, v := req.ImageSeeds(i)
	switch e.Kind {
	case studio.EventProgress:
		ev := pipeline.Event{Stage: pipeline.StageDenoising, Step: e.Step, Steps: e.Steps, Image: i, Images: n, Seed: seed, VariationSeed: v}
		if e.PNG != nil {
			if im, err := png.Decode(bytes.NewReader(e.PNG)); err == nil {
				ev.Preview = &pipeline.Preview{Image: im} // the picture travels, not the latents
			}
		}
		return ev, true
	case studio.EventTaken, studio.EventHandedBack, studio.EventDuplicate, studio.EventNotice:
		return pipeline.Event{Notice: fmt.Sprintf("image %d: %s", e.Index+1, EventText(e))}, true
	}
	return pipeline.Event{}, false
}
