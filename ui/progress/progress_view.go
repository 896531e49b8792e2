package progress

import (
	"fmt"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/engine/pipeline"
)

// View is the progress line under the canvas: where the running job is (its stage, step i of N,
// seconds per step and the time left).
type View struct {
	Stage *widget.Label
	Rate  *widget.Label
	bar   *Meter
	Box   fyne.CanvasObject
}

// NewView is the progress line, "Ready." until a job starts.
func NewView() *View {
	p := &View{Stage: widget.NewLabel("Ready."), Rate: widget.NewLabel(""), bar: NewMeter()}
	p.Stage.Truncation = fyne.TextTruncateEllipsis
	p.Box = container.NewVBox(container.NewBorder(nil, nil, nil, p.Rate, p.Stage), p.bar)
	return p
}

func (p *View) Start(j jobs.Job) {
	p.Stage.SetText(fmt.Sprintf("Job %d: starting — %s", j.ID, j.Label))
	p.Rate.SetText("")
	p.bar.Set(0, "", false)
}

// StageText is the progress line for an event: "Step 3 of 20", "Encoding prompt…".
func StageText(ev pipeline.Event) string {
	switch ev.Stage {
	case pipeline.StageEncodingPrompt:
		return "Encoding prompt…"
	case pipeline.StageEncodingImages:
		return "Encoding images…"
	case pipeline.StagePrefill:
		return "Prefill (reading the prompt and images once)…"
	case pipeline.StageDenoising:
		if ev.Step == 0 {
			return fmt.Sprintf("Step 0 of %d", ev.Steps)
		}
		return fmt.Sprintf("Step %d of %d", ev.Step, ev.Steps)
	case pipeline.StageDecoding:
		return "Decoding…"
	case pipeline.StageDone:
		return "Done"
	}
	return ev.Stage.String()
}

// RateText is "3.2 s/step · about 41 s left" once a step has finished.
func RateText(ev pipeline.Event) string {
	if ev.StepTime <= 0 {
		return fmt.Sprintf("%s elapsed", roundDuration(ev.Elapsed))
	}
	return fmt.Sprintf("%.1f s/step · about %s left", ev.StepTime.Seconds(), roundDuration(ev.ETA))
}

func (p *View) ShowEvent(j jobs.Job, ev pipeline.Event) {
	p.Stage.SetText(fmt.Sprintf("Job %d: %s", j.ID, StageText(ev)))
	p.Rate.SetText(RateText(ev))
	// The bar: the steps, with the stages before and after as thin slices at the ends.
	switch {
	case ev.Stage < pipeline.StageDenoising:
		p.bar.Set(0.02*float64(ev.Stage+1), "", false)
	case ev.Stage == pipeline.StageDenoising && ev.Steps > 0:
		p.bar.Set(0.06+0.9*float64(ev.Step)/float64(ev.Steps), "", false)
	case ev.Stage == pipeline.StageDecoding:
		p.bar.Set(0.97, "", false)
	default:
		p.bar.Set(1, "", false)
	}
}

// ShowStatus puts a line about the job's work outside the pipeline's stages (the first-use GPU
// self-test, tuning the kernels) in the progress line; the bar stays where it is.
func (p *View) ShowStatus(j jobs.Job, line string) {
	p.Stage.SetText(fmt.Sprintf("Job %d: %s", j.ID, line))
}

func (p *View) Done(j jobs.Job) {
	r := j.Result
	steps := fmt.Sprintf("%d steps", r.Steps)
	if r.StepsRun > 0 && r.StepsRun < r.Steps {
		steps = fmt.Sprintf("%d of %d steps run", r.StepsRun, r.Steps) // a pass from an image runs its share
	}
	p.Stage.SetText(fmt.Sprintf("Job %d: done — %d×%d, %s, seed %d", j.ID, r.Width, r.Height, steps, r.Seed))
	p.Rate.SetText(fmt.Sprintf("%s in all", roundDuration(r.StageTimes[pipeline.StageDone])))
	p.bar.Set(1, "", false)
}

func (p *View) Failed(j jobs.Job) {
	p.Stage.SetText(fmt.Sprintf("Job %d failed.", j.ID))
	p.Rate.SetText("")
	p.bar.Set(0, "", false)
}

func (p *View) Cancelled(j jobs.Job) {
	p.Stage.SetText(fmt.Sprintf("Job %d cancelled.", j.ID))
	p.Rate.SetText("")
	p.bar.Set(0, "", false)
}

// roundDuration prints a duration the way people say it: "41 s", "3 min 20 s".
func roundDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}
