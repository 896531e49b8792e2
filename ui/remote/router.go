package remote

import (
	"context"
	"sync"

	"easel/app/jobs"
	"easel/app/serve/client"
	"easel/engine/pipeline"
)

// Router runs the queue's jobs on this Mac's generator, or — with Settings → "Render on:
// host:port" — on another Easel's server through app/serve/client, behind the same job
// interface: a remote job streams its progress and preview as events like a local one.
type Router struct {
	// Local is this Mac's generator.
	Local jobs.Generator

	mu     sync.Mutex
	remote *client.Generator
	// studio, when set, takes the window's jobs instead (the Studio dialog's Render on a studio); studioAt names it.
	studio   jobs.Generator
	studioAt string
	// localTurn: one run on this Mac's renderer at a time, the queue's or a studio image the
	// window was lent (the Studio dialog's Lend this Mac).
	localTurn chan struct{}
}

// RunLocal runs on this Mac's renderer, after any run already on it (a cancelled job stops
// waiting).
func (r *Router) RunLocal(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	r.mu.Lock()
	if r.localTurn == nil {
		r.localTurn = make(chan struct{}, 1)
	}
	turn := r.localTurn
	r.mu.Unlock()
	select {
	case turn <- struct{}{}:
	case <-ctx.Done():
		if events != nil {
			close(events)
		}
		return nil, ctx.Err()
	}
	defer func() { <-turn }()
	return r.Local.Run(ctx, req, events)
}

// SetStudio sends the window's jobs to a studio (nil: not).
func (r *Router) SetStudio(g jobs.Generator, at string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.studio, r.studioAt = g, at
}

// Set chooses where the next job runs ("" = this Mac).
func (r *Router) Set(addr, token string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if addr == "" {
		r.remote = nil
		return
	}
	r.remote = &client.Generator{Addr: addr, Token: token}
}

// Where is the remote address, "" for this Mac.
func (r *Router) Where() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.studio != nil {
		return r.studioAt
	}
	if r.remote == nil {
		return ""
	}
	return r.remote.Addr
}

// Run runs a job where the setting says. API jobs (submitted by this window's own server) always
// run here: the Mac that shares renders them.
func (r *Router) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	r.mu.Lock()
	remote, onStudio := r.remote, r.studio
	r.mu.Unlock()
	if onStudio != nil && !fromAPI(ctx) {
		return onStudio.Run(ctx, req, events)
	}
	if remote != nil && !fromAPI(ctx) {
		return remote.Run(ctx, req, events)
	}
	return r.RunLocal(ctx, req, events)
}

// fromAPI reports whether the job is one the window's server queued (jobs.OriginOf).
func fromAPI(ctx context.Context) bool { return jobs.OriginOf(ctx) != "" }
