package pipeline

import (
	"image"
	"sync"
	"time"

	"easel/engine/ml"
)

// Stage is where a run is.
type Stage int

// The stages of one generation, in order.
const (
	StageEncodingPrompt Stage = iota // tokenizing and running the text encoder (both prompts under CFG)
	StageEncodingImages              // preparing condition images and running the VAE encoder on them
	StagePrefill                     // the denoiser's prefix pass, once per prompt
	StageDenoising                   // the Euler steps; Event.Step says which
	StageDecoding                    // the VAE decoder
	StageDone                        // the image is ready
	numStages
)

var stageNames = [...]string{"encoding prompt", "encoding images", "prefill", "denoising", "decoding", "done"}

// String is the stage as progress lines print it.
func (s Stage) String() string {
	if s < 0 || s >= numStages {
		return "unknown stage"
	}
	return stageNames[s]
}

// Event is one report from a run. Every stage change sends one with Step 0 at its start, and every
// finished denoising step one with its number.
//
// Delivery: Run never blocks on the events channel. Events go to an unbounded queue that a
// separate goroutine drains into the channel in order; progress events are never dropped,
// but a preview still waiting in the queue when a newer step arrives is dropped (the event
// stays, its Preview becomes nil), so a slow consumer sees fewer previews, never stale ones.
// The channel is closed after the last event, which may be after Run has returned; read it
// until it is closed.
type Event struct {
	Stage Stage
	// Step is the number of finished denoising steps (1…Steps) in StageDenoising, else 0.
	Step, Steps int
	// Image is the image of a batch the event is about (0-based) and Images the batch's size
	// (1 for a single image); Seed and VariationSeed are that image's (Request.ImageSeeds). A
	// batch prefills once, then denoises and decodes each image in turn: its events go
	// prefill, then denoising and decoding for image 0, 1, …
	Image, Images       int
	Seed, VariationSeed uint64
	// NoiseSeed is the seed the image's noise is drawn from when it is not Seed (nil: Seed).
	NoiseSeed *uint64
	// Finished, on a batch's event after an image is decoded, is that image's result (the run's
	// own: do not modify it); Run returns the first image's, with every image's in its Batch.
	Finished *Result
	// Sigma is the σ the finished step started from.
	Sigma float32
	// Elapsed is the time since Run started.
	Elapsed time.Duration
	// StepTime is the mean wall time per denoising step so far (seconds per step); ETA is the
	// estimated time left to the end of the run (the steps left at StepTime, plus decoding
	// estimated as one step).
	StepTime, ETA time.Duration
	// LastStepTime is the wall time of the step just finished, so a panel can show the step
	// times over the run (thermal throttling shows there, not in the mean).
	LastStepTime time.Duration
	// Timings is the backend's per-class op time since Run started, plus the Metal text
	// encoder's and VAE's GPU time per class in profiling mode (EASEL_METAL_PROF=1).
	Timings [ml.NumClasses]ml.ClassTime
	// GPUClasses is the device networks' GPU time per class since Run started, in every mode,
	// and how it was measured (sampled, estimated split, profiling); zero when nothing ran on a
	// device.
	GPUClasses ml.GPUClasses
	// DeviceTime is the device time of the text encoder, the denoiser and the VAE since Run
	// started (the Metal command buffers' GPU time), 0 when all run on the backend.
	DeviceTime time.Duration
	// StageDeviceTimes is that device time per finished stage (indexed by Stage; the current
	// stage's is counted when it ends).
	StageDeviceTimes [numStages]time.Duration
	// Memory is the ledger at the time of the event.
	Memory Memory
	// Preview is the step's x0 estimate, on denoising events (nil when dropped).
	Preview *Preview
	// Sharp is the sharp preview's cost so far, on denoising events of a run that asked for it.
	Sharp *SharpStats
	// Notice, when not empty, is a sentence for the user about where the text encoder, the
	// denoiser or the VAE runs: the device at the start of a run, or why a device declined a
	// model, a prompt, a decode or an encode and the CPU runs it instead; or what a device
	// recovered from (then Recovery is set too). A notice event repeats the current stage and
	// step; it is not progress.
	Notice string
	// Recovery, on a notice event about a device's recovery during a call (recovery.go: a GPU
	// overflow, watchdog stop or out-of-memory a retry fixed, or a step moved to the CPU), is its
	// record. Each kind is told once per run; Result.Recoveries counts them all.
	Recovery *Recovery
}

// Preview is the model's current guess of the final image, x0 = x − σ·v, as packed latents.
type Preview struct {
	// X0 is [H·W, 64], token y·W + x, channel last (the run's own copy).
	X0 []float32
	// H, W are the latent grid (the image is 16H × 16W pixels).
	H, W int
	// Image is Request.Preview's rendering of X0, or nil without one.
	Image image.Image
	// Sharp, when not nil, is a real decode of an earlier step's x0 that finished since the last
	// event (Request.SharpPreview).
	Sharp *SharpImage
}

// emitter is the delivery side of the events channel (see Event): an unbounded queue drained by
// its own goroutine, so the engine never waits for the consumer.
type emitter struct {
	out     chan<- Event
	preview PreviewFunc

	mu     sync.Mutex
	queue  []Event
	closed bool
	wake   chan struct{}
}

// newEmitter starts delivering to out; nil out gives an emitter that discards everything.
func newEmitter(out chan<- Event, preview PreviewFunc) *emitter {
	e := &emitter{out: out, preview: preview, wake: make(chan struct{}, 1)}
	if out != nil {
		go e.deliver()
	}
	return e
}

// emit queues ev. A preview still queued is dropped when a newer one comes.
func (e *emitter) emit(ev Event) {
	if e.out == nil {
		return
	}
	e.mu.Lock()
	if ev.Preview != nil {
		for i := range e.queue {
			if q := e.queue[i].Preview; q != nil && q.Sharp != nil && ev.Preview.Sharp == nil {
				ev.Preview.Sharp = q.Sharp // a real decode is kept until a newer one replaces it
			}
			e.queue[i].Preview = nil
		}
	}
	e.queue = append(e.queue, ev)
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// close ends the stream: the channel closes once the queue is delivered.
func (e *emitter) close() {
	if e.out == nil {
		return
	}
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// deliver sends the queue in order, rendering previews just before they go out.
func (e *emitter) deliver() {
	for {
		e.mu.Lock()
		if len(e.queue) == 0 {
			closed := e.closed
			e.mu.Unlock()
			if closed {
				close(e.out)
				return
			}
			<-e.wake
			continue
		}
		ev := e.queue[0]
		e.queue[0] = Event{}
		e.queue = e.queue[1:]
		e.mu.Unlock()
		if ev.Preview != nil && e.preview != nil {
			ev.Preview.Image = e.preview(ev.Preview.X0, ev.Preview.H, ev.Preview.W)
		}
		e.out <- ev
	}
}
