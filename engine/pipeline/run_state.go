package pipeline

import (
	"fmt"
	"time"

	"easel/engine/ml"
	"easel/engine/procmem"
)

// run is the state of one Run: the current stage and the clocks behind the events.
type run struct {
	p          *Pipeline
	req        *Request
	em         *emitter
	start      time.Time
	stage      Stage
	stageStart time.Time
	stageTimes [numStages]time.Duration
	stageDev   [numStages]time.Duration // device time per stage
	stageDev0  time.Duration            // device time when the current stage began
	stagePeak  [numStages]int64         // peak memory footprint per stage
	stageMem   procmem.Interval         // the current stage's memory interval
	memExact   bool                     // every stage's peak was reset at its start
	timings0   [ml.NumClasses]ml.ClassTime
	gpu0       ml.GPUClasses // the device networks' GPU time per class when the run started
	device0    time.Duration // the denoiser's device time when the run started
	progs      []Program     // the live programs while denoising
	steps      int
	stepsDone  int
	image      int       // the batch's image being made (0-based)
	images     int       // the images of the run
	denoise0   time.Time // when the first step began
	lastStep   time.Time // when the latest step ended (or the first began)
}

// where is the stage, with the step while denoising.
func (r *run) where() string {
	if r.stage == StageDenoising && r.images > 1 {
		return fmt.Sprintf("%s (image %d of %d, step %d of %d)", r.stage, r.image+1, r.images, r.stepsDone+1, r.steps)
	}
	if r.stage == StageDenoising {
		return fmt.Sprintf("%s (step %d of %d)", r.stage, r.stepsDone+1, r.steps)
	}
	return r.stage.String()
}

// enter closes the current stage's clock and announces the next one.
func (r *run) enter(s Stage) {
	now := time.Now()
	dev := r.p.deviceTime()
	if !r.stageStart.IsZero() {
		r.stageTimes[r.stage] += now.Sub(r.stageStart)
		r.stageDev[r.stage] += dev - r.stageDev0
		r.stagePeak[r.stage] = max(r.stagePeak[r.stage], r.stageMem.End())
		r.memExact = r.memExact && r.stageMem.Exact()
	} else {
		r.memExact = true
	}
	if s != StageDone {
		r.stageMem = procmem.Begin()
	}
	r.stage, r.stageStart, r.stageDev0 = s, now, dev
	if s == StageDenoising {
		r.denoise0, r.lastStep = now, now
	}
	r.em.emit(r.event())
}

// timings is the per-class time since the run started.
func (r *run) timings() [ml.NumClasses]ml.ClassTime {
	t := r.p.classTimes()
	for c := range t {
		t[c].Time -= r.timings0[c].Time
		t[c].Ops -= r.timings0[c].Ops
		t[c].Flops -= r.timings0[c].Flops
	}
	return t
}

// event is the current state as an Event.
func (r *run) event() Event {
	ev := Event{Stage: r.stage, Steps: r.steps, Elapsed: time.Since(r.start), Timings: r.timings(), Memory: r.p.liveLedger(r.progs),
		DeviceTime: r.p.deviceTime() - r.device0, StageDeviceTimes: r.stageDev, Image: r.image, Images: r.images,
		GPUClasses: r.p.gpuClasses().Minus(r.gpu0)}
	ev.Seed, ev.VariationSeed = r.req.ImageSeeds(r.image)
	ev.NoiseSeed = r.req.NoiseSeeds(r.image)
	if r.stage == StageDenoising && r.stepsDone > 0 {
		ev.Step = r.stepsDone
		ev.StepTime = time.Since(r.denoise0) / time.Duration(r.stepsDone)
		// This image's steps left and its decode (estimated as one step), then each later
		// image's steps and decode.
		ev.ETA = ev.StepTime * time.Duration(r.steps-r.stepsDone+1+(r.images-r.image-1)*(r.steps+1))
	}
	return ev
}

// notice reports a sentence about where the denoiser runs, at the current stage.
func (r *run) notice(s string) {
	ev := r.event()
	ev.Notice = s
	r.em.emit(ev)
}

// recovery reports a device's recovery, once per kind per run, as a notice event.
func (r *run) recovery(rec Recovery) {
	ev := r.event()
	ev.Notice, ev.Recovery = rec.Notice, &rec
	r.em.emit(ev)
}

// declineNotices reports the calls a network's device declined, and its recoveries, since the
// last report.
func (r *run) declineNotices(l *placed) {
	for _, n := range l.takeNotices() {
		r.notice(n)
	}
	for _, rec := range l.takeRecoveries(0, 0, r.image, r.images) {
		r.recovery(rec)
	}
}
