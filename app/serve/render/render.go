// Package render is what easel serve's other APIs (app/serve/openai, app/serve/comfy) ask of the
// server's generation plumbing: a request in the app's own terms (a prompt, a size, a seed,
// condition images, a start image) in, finished pictures and live progress out. The server
// (app/serve) implements Renderer over the same queue, drafts and checkpoints its A1111 routes
// use, so every API's picture equals `easel generate`'s with the same settings.
package render

import (
	"context"
	"errors"
	"image"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/engine/pipeline"
)

// MaxPromptChars caps a prompt and a negative prompt, in characters: far above what the text
// encoder reads, low enough that an abandoned giant prompt cannot hold the queue.
const MaxPromptChars = 20000

// Request is one generation: Count images with seeds Seed, Seed+1, …
type Request struct {
	Prompt, Negative string
	// Width and Height are the picture's size; 0 leaves it to the model (its default size, or
	// the start image's, as `easel generate` without --size).
	Width, Height int
	Steps         int     // 0: the model's
	CFG           float64 // 0: the model's
	Seed          uint64
	RandomSeed    bool // draw a random 32-bit seed, as A1111 does
	Count         int  // 0 counts as 1
	Conditions    []compose.Condition
	// Start is the image to start from (img2img, a mask to repaint), as compose builds it.
	Start *compose.Start
	// Model is a model of the server's folder by name ("": the server's current model).
	Model string
	// Kind names the API in the queue's labels and the log ("openai", "comfy"); Origin is the
	// client's address.
	Kind, Origin string
}

// Picture is one image made, with the settings its PNG records.
type Picture struct {
	Image    *image.NRGBA
	Settings *imagefile.Settings
	Seed     uint64
}

// Result is a request's pictures (in seed order; a skipped or interrupted image is left out) and
// what the server has to say about them.
type Result struct {
	Pictures    []Picture
	Warnings    []string
	Interrupted bool
}

// Progress is a running image's state: which image of the request, the step, and the live
// preview when the server renders one (nil otherwise).
type Progress struct {
	Index, Count int
	Step, Steps  int
	Preview      image.Image
}

// Model is the server's current model and the folder's choices.
type Model struct {
	Name     string   // file name of the current model
	Names    []string // every model of the folder, file names
	Defaults pipeline.Defaults
}

// Renderer is the server's side.
type Renderer interface {
	// Render queues the request's images and waits for them. progress (may be nil) is called
	// from the queue's reporting and must return at once. A refusal is an *Error.
	Render(ctx context.Context, req Request, progress func(Progress)) (*Result, error)
	// Model is the current model and the folder's models.
	Model() Model
	// Save keeps a picture in the server's output folder and history as A1111's save_images
	// does (a no-op where the host keeps its images itself).
	Save(p Picture) error
}

// The kinds of refusal.
var (
	ErrBadRequest = errors.New("bad request")   // a field the client must change
	ErrBusy       = errors.New("busy")          // the queue is full or closing: try again
	ErrFailed     = errors.New("render failed") // the generation failed on the server
	ErrGone       = errors.New("client gone")   // ctx ended; the jobs were cancelled
)

// Error is a refusal: Kind is one of the Err values above, Field the request field at fault
// (for ErrBadRequest), RetryAfter seconds for ErrBusy.
type Error struct {
	Kind       error
	Field      string
	Msg        string
	RetryAfter int
}

func (e *Error) Error() string { return e.Msg }

// Unwrap lets errors.Is match the kind.
func (e *Error) Unwrap() error { return e.Kind }
