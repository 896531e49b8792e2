package jobs

import (
	"context"

	"easel/engine/pipeline"
)

// Generator makes one image. *pipeline.Pipeline is one; tests use fakes.
//
// Contract (the pipeline's): Run sends events on the channel and closes it after the last one,
// whatever happens — also when it fails before any work — so the queue can read it to the end.
// Cancelling ctx makes Run return soon with an error wrapping context.Canceled.
type Generator interface {
	Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error)
}

// GeneratorFunc adapts a function to Generator.
type GeneratorFunc func(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error)

// Run calls f.
func (f GeneratorFunc) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	return f(ctx, req, events)
}
