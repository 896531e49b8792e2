package preview

import (
	"context"
	"fmt"
	"image"
	"sync"

	"easel/assets/calibration"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/mmapfile"
	"easel/engine/vae"
)

// Status is where the calibration for the current model is.
type Status int

// The calibration states.
const (
	NoModel     Status = iota // Start has not been called, or with no path
	Calibrating               // fitting in the background; previews use Neutral
	Ready                     // the model's projection is in use
	Failed                    // it could not be fitted (Err says why); previews use Neutral
)

// Calibrator fits (or finds in its cache) the projection for the opened model in the background
// and renders previews with whatever is ready: the model's projection once it exists, Neutral
// before. Its methods may be called from any goroutine.
type Calibrator struct {
	// Cache keeps calibrations between launches; with no Dir every Start calibrates.
	Cache Cache
	// OnChange, when set, is called after the status changes (on the calibrator's goroutine).
	OnChange func()

	mu        sync.Mutex
	path      string
	p         *Projection
	status    Status
	err       error
	fromCache bool
	cancel    context.CancelFunc
	done      chan struct{}
}

// Start calibrates for the model file at path, replacing whatever was in use; the work runs on
// its own goroutine with its own VAE on its own CPU backend, so no generation waits for it. A
// previous calibration still running is cancelled. Starting again with the same path re-reads
// the file's directory: a changed VAE gets a new calibration.
func (c *Calibrator) Start(path string) {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.path, c.p, c.err, c.fromCache = path, nil, nil, false
	if path == "" {
		c.status, c.cancel, c.done = NoModel, nil, nil
		c.mu.Unlock()
		c.changed()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	c.status, c.cancel, c.done = Calibrating, cancel, done
	c.mu.Unlock()
	c.changed()
	go func() {
		defer close(done)
		p, cached, err := c.calibrate(ctx, path)
		c.mu.Lock()
		if c.done != done { // superseded by a later Start
			c.mu.Unlock()
			return
		}
		c.p, c.fromCache, c.err = p, cached, err
		c.status = Ready
		if err != nil {
			c.status = Failed
		}
		c.mu.Unlock()
		c.changed()
	}()
}

func (c *Calibrator) changed() {
	if c.OnChange != nil {
		c.OnChange()
	}
}

// calibrate finds the cached projection for the file's VAE or fits and caches a new one.
func (c *Calibrator) calibrate(ctx context.Context, path string) (p *Projection, cached bool, err error) {
	// The VAE reads the model file's mapping: if the file goes away meanwhile, the fault is this
	// calibration's error (a *mmapfile.FaultError), not the end of the app.
	defer mmapfile.Recover(&err)
	defer mmapfile.Guard()()
	f, err := cmf.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	key, err := ModelKey(f.Entries())
	if err != nil {
		return nil, false, err
	}
	if c.Cache.Dir != "" {
		if p, found, err := c.Cache.Load(key); err == nil && found {
			return p, true, nil
		}
	}
	m, err := vae.Load(cpu.New(), f)
	if err != nil {
		return nil, false, fmt.Errorf("preview calibration: %w", err)
	}
	pictures, err := calibration.Images()
	if err != nil {
		return nil, false, err
	}
	if p, err = Calibrate(ctx, m, pictures); err != nil {
		return nil, false, err
	}
	p.Model = f.Path()
	if c.Cache.Dir != "" {
		if err := c.Cache.Store(key, p); err != nil {
			// The projection works without the cache; the next open calibrates again.
			return p, false, nil
		}
	}
	return p, false, nil
}

// Wait blocks until the calibration started last has finished (at once when none runs).
func (c *Calibrator) Wait() {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done != nil {
		<-done
	}
}

// Stop cancels a calibration still running.
func (c *Calibrator) Stop() {
	c.mu.Lock()
	if c.cancel != nil {
		c.cancel()
	}
	c.mu.Unlock()
}

// State is the status, the projection in use (nil before Ready), whether it came from the cache,
// and the error after Failed.
func (c *Calibrator) State() (s Status, p *Projection, fromCache bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.p, c.fromCache, c.err
}

// Render is a pipeline.PreviewFunc: the model's projection when it is ready, Neutral before.
func (c *Calibrator) Render(x0 []float32, h, w int) image.Image {
	c.mu.Lock()
	p := c.p
	c.mu.Unlock()
	if p != nil {
		return p.Image(x0, h, w)
	}
	return Neutral(x0, h, w)
}

// Note is the caption the window shows over step previews: a word while calibrating or after a
// failure, "" once the model's projection is in use.
func (c *Calibrator) Note() string {
	s, _, _, err := c.State()
	switch s {
	case Calibrating:
		return "Calibrating preview… (grey until it is ready)"
	case Failed:
		return fmt.Sprintf("Preview in grey: calibrating it for this model failed (%v)", err)
	}
	return ""
}
