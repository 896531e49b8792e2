package studiogen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"easel/app"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/studio"
	"easel/engine/pipeline"
)

// Lend is a Mac lent to a studio from its window: it takes the studio's pipeline jobs (only
// those: the generate flags of `easel generate --studio` are app/cli's to read), one at a time and
// only when Ready says its own queue is idle, and renders each with the window's own generator
// (its model and backend), so the pixels are what the window would make of the same request.
// When the Mac is about to sleep, or Run's ctx ends (the window closes), the job in hand goes
// back to the queue at once; after a sleep the Mac goes on lending when it wakes.
type Lend struct {
	Name, Chip string
	Model      string // the model file, for the PNG and the status
	ModelHash  string // its fingerprint (ModelFingerprint)
	Backend    string // the backend's name, for the PNG
	Gen        jobs.Generator
	Ready      func(ctx context.Context) error
	Hold       func(reason string) (release func())
	OnEvent    func(studio.WorkerEvent)
	// OnStep hears each step of the image in hand (index is 0-based in its batch).
	OnStep func(job *studio.Job, step, of int)
}

// Run takes jobs from the studio c until ctx ends (the window closes, or lending is turned off);
// the job in hand then goes back to the queue. A sleep notice hands it back too, and Run takes
// nothing until the Mac wakes, then goes on (studio.Worker).
func (l *Lend) Run(ctx context.Context, c *studio.Conn) error {
	w := &studio.Worker{Name: l.Name, Chip: l.Chip, Model: filepath.Base(l.Model), Renderer: l,
		Fingerprint: studio.Fingerprint{Easel: app.Version, Model: l.ModelHash, Kind: studio.KindPipeline},
		Kinds:       []string{studio.KindPipeline},
		Ready:       l.Ready, Hold: l.Hold, OnEvent: l.OnEvent,
		// Ready is asked before each pull, and a pull waits this long for a job: short, so a job
		// of the artist's own started while a pull waits is seldom preceded by a studio image.
		FetchWait: time.Second}
	return w.Run(ctx, c)
}

// Render makes one job's PNG with the window's generator.
func (l *Lend) Render(ctx context.Context, job *studio.Job, inputs studio.Inputs, progress func(studio.Step)) ([]byte, error) {
	var env struct {
		Pipeline *PipelineRequest `json:"pipeline"`
	}
	if err := json.Unmarshal(job.Request, &env); err != nil || env.Pipeline == nil {
		return nil, errors.New("not a pipeline request: a window lent to the studio renders only those")
	}
	if err := env.Pipeline.Check(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "easel-studio-lent-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	req, err := env.Pipeline.Request(ctx, inputs, dir)
	if err != nil {
		return nil, err
	}
	res, err := RunReporting(func(events chan<- pipeline.Event) (*pipeline.Result, error) { return l.Gen.Run(ctx, req, events) }, false,
		func(st studio.Step) {
			progress(st)
			if l.OnStep != nil {
				l.OnStep(job, st.N, st.Of)
			}
		})
	if err != nil {
		return nil, err
	}
	if res == nil || res.Image == nil {
		return nil, fmt.Errorf("the window's renderer gave no image for studio image %d", job.Index+1)
	}
	var b bytes.Buffer
	if err := imagefile.Encode(&b, res.Image, env.Pipeline.Settings(res, l.Model, l.ModelHash, l.Backend)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
