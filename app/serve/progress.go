package serve

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"sync"
	"time"

	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/serve/render"
	"easel/engine/pipeline"
)

// batch is one txt2img/img2img request's jobs (batch_size × n_iter images, in order).
type batch struct {
	jobs  []*apiJob
	start time.Time

	mu          sync.Mutex
	ids         []jobs.ID // once submitted
	interrupted bool
	skipped     int

	// progress, when set, hears each step of the batch's images (the other APIs' live
	// previews); it returns at once.
	progress func(render.Progress)
}

// apiJob is one image of a batch; its last snapshot arrives on done when it finishes.
type apiJob struct {
	b      *batch
	index  int
	done   chan jobs.Job // buffered 1
	plan   *plan
	origin string
	// notices are the run's notices as they arrived (a stage a device declined, a tuning that
	// failed, a recovery), guarded by b.mu.
	notices []string
	// stopped is set (under b.mu) once /interrupt closed the plan's stop channel.
	stopped bool
	// cells, for a job of a grid's cells over one prefill (cellgroups.go), are the plans of its
	// cells in order (plan is the first); finished are the cells made so far, from the job's
	// Finished events, under b.mu.
	cells    []*plan
	finished []*pipeline.Result
}

// Picture is the image and the settings an API job's answer carries for its result (the init
// image's paste-back done, the origin recorded): the window, whose queue ran the job, saves the
// same into its history.
func (aj *apiJob) Picture(res *pipeline.Result) (*image.NRGBA, *imagefile.Settings, error) {
	pl := aj.plan
	if aj.cells != nil && res.Index >= 0 && res.Index < len(aj.cells) {
		pl = aj.cells[res.Index] // a grid cell's own settings
	}
	set := pl.Draft.FileSettings(res)
	set.Origin, set.ModelHash = aj.origin, pl.ModelHash
	img := res.Image
	if prep := pl.Prep; prep != nil {
		finished, err := prep.Finish(res.Image)
		if err != nil {
			return nil, nil, err
		}
		img = finished
	}
	img = pl.Exact.crop(img) // the size asked for (exactsize.go)
	set.Width, set.Height = img.Rect.Dx(), img.Rect.Dy()
	if pl.Hires != nil { // a second pass's picture records both passes (hires.go)
		pl.Hires.record(set, res)
	}
	return img, set, nil
}

// tracker follows the queue's updates for /progress and the waiting handlers. Its update runs
// inside the queue's reporting and returns at once.
type tracker struct {
	mu      sync.Mutex
	live    map[*batch]bool
	running *jobs.Job      // the job running now, any origin
	owner   *apiJob        // its apiJob when it is one of ours
	last    pipeline.Event // its latest event
	preview image.Image    // its latest preview (our jobs only)
	encoded struct {
		of  image.Image
		b64 string
	}
	jobTime time.Duration // how long the last finished job ran (Retry-After)
	started time.Time

	// useModel and currentModel run a job whose plan names another model with that model
	// (Config.UseModel), switching back once it ends; switchedFor is that job while it runs.
	useModel     func(string)
	currentModel func() string
	switchedFor  jobs.ID
}

func newTracker() *tracker { return &tracker{live: map[*batch]bool{}} }

// update is the queue's watcher.
func (t *tracker) update(u jobs.Update) {
	if u.Status != nil {
		return // a running job's self-test or tuning line: not a state change
	}
	aj, _ := u.Job.Owner.(*apiJob)
	if aj != nil && u.Event != nil && u.Event.Notice != "" {
		aj.b.mu.Lock()
		aj.notices = append(aj.notices, u.Event.Notice)
		aj.b.mu.Unlock()
	}
	if aj != nil && aj.cells != nil && u.Event != nil && u.Event.Finished != nil {
		aj.b.mu.Lock()
		aj.finished = append(aj.finished, u.Event.Finished) // kept if the group is cancelled
		aj.b.mu.Unlock()
	}
	if aj != nil && u.Event != nil && aj.b.progress != nil && u.Event.Stage == pipeline.StageDenoising && u.Event.Step > 0 {
		pr := render.Progress{Index: aj.index, Count: len(aj.b.jobs), Step: u.Event.Step, Steps: u.Event.Steps}
		if u.Event.Preview != nil && u.Event.Preview.Image != nil {
			pr.Preview = u.Event.Preview.Image
		}
		aj.b.progress(pr)
	}
	t.switchModel(u, aj)
	t.mu.Lock()
	defer t.mu.Unlock()
	if u.Event != nil {
		if t.running != nil && t.running.ID == u.Job.ID {
			if u.Event.Notice == "" {
				t.last = *u.Event
			}
			if aj != nil && u.Event.Preview != nil && u.Event.Preview.Image != nil {
				t.preview = u.Event.Preview.Image
			}
		}
		return
	}
	switch {
	case u.Job.State == jobs.Running:
		j := u.Job
		t.running, t.owner, t.last, t.preview, t.started = &j, aj, pipeline.Event{}, nil, time.Now()
	case u.Job.State.Finished():
		if t.running != nil && t.running.ID == u.Job.ID {
			if u.Job.State == jobs.Done {
				t.jobTime = time.Since(t.started)
			}
			t.running, t.owner, t.preview = nil, nil, nil
		}
		if aj != nil {
			select {
			case aj.done <- u.Job:
			default:
			}
		}
	}
}

// switchModel runs a job whose plan names another model file with it, and the next job with the
// current model again (the queue reports a job running before its generator starts and finished
// after it returned, one job at a time).
func (t *tracker) switchModel(u jobs.Update, aj *apiJob) {
	if t.useModel == nil || u.Event != nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case u.Job.State == jobs.Running && aj != nil && aj.plan.Draft.Model != "" && aj.plan.Draft.Model != t.currentModel():
		t.useModel(aj.plan.Draft.Model)
		t.switchedFor = u.Job.ID
	case t.switchedFor != 0 && (u.Job.State == jobs.Running || u.Job.State.Finished() && u.Job.ID == t.switchedFor):
		t.useModel(t.currentModel())
		t.switchedFor = 0
	}
}

// add and remove keep the batches whose handlers wait.
func (t *tracker) add(b *batch) {
	t.mu.Lock()
	t.live[b] = true
	t.mu.Unlock()
}

func (t *tracker) remove(b *batch) {
	t.mu.Lock()
	delete(t.live, b)
	t.mu.Unlock()
}

// cancel stops every job of b that is not finished (none before run has their IDs; run then
// cancels them itself when the batch was interrupted meanwhile).
func (b *batch) cancel(q *jobs.Queue) {
	b.mu.Lock()
	ids := b.ids
	b.mu.Unlock()
	for _, id := range ids {
		q.Cancel(id)
	}
}

// cancelRest cancels every job of b that /interrupt did not stop (a stopped job finishes its
// current step and answers with the image as far as it got).
func (b *batch) cancelRest(q *jobs.Queue) {
	b.mu.Lock()
	var ids []jobs.ID
	for i, id := range b.ids {
		if i < len(b.jobs) && !b.jobs[i].stopped {
			ids = append(ids, id)
		}
	}
	b.mu.Unlock()
	for _, id := range ids {
		q.Cancel(id)
	}
}

// stop ends aj's denoising at the next step (pipeline.Request.Stop); b.mu is held. A group of
// cells is not stopped but cancelled (cancelRest): it keeps the cells it finished.
func (aj *apiJob) stop() {
	if !aj.stopped && aj.cells == nil && aj.plan.stop != nil {
		aj.stopped = true
		close(aj.plan.stop)
	}
}

// cancelAll stops every batch's jobs (the server is shutting down).
func (t *tracker) cancelAll(q *jobs.Queue) {
	t.mu.Lock()
	var bs []*batch
	for b := range t.live {
		bs = append(bs, b)
	}
	t.mu.Unlock()
	for _, b := range bs {
		b.cancel(q)
	}
}

// retryAfter is a guess, in whole seconds, of when a place in the queue frees: the running job's
// ETA, or the last job's duration.
func (t *tracker) retryAfter() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	d := t.jobTime
	if t.running != nil && t.last.ETA > 0 {
		d = t.last.ETA
	}
	return max(1, int(d.Round(time.Second)/time.Second))
}

// progressState is A1111's `state` object.
type progressState struct {
	Skipped       bool   `json:"skipped"`
	Interrupted   bool   `json:"interrupted"`
	Job           string `json:"job"`
	JobCount      int    `json:"job_count"`
	JobTimestamp  string `json:"job_timestamp"`
	JobNo         int    `json:"job_no"`
	SamplingStep  int    `json:"sampling_step"`
	SamplingSteps int    `json:"sampling_steps"`
}

// progressResponse is A1111's ProgressResponse.
type progressResponse struct {
	Progress     float64       `json:"progress"`
	ETARelative  float64       `json:"eta_relative"`
	State        progressState `json:"state"`
	CurrentImage *string       `json:"current_image"`
	TextInfo     *string       `json:"textinfo"`
	CurrentTask  *string       `json:"current_task"`
}

// stageShare is how far through one image a stage puts it: the prompt and prefill are quick next
// to the steps, decoding comes after them.
func stageFraction(ev pipeline.Event) float64 {
	switch {
	case ev.Stage == pipeline.StageDenoising && ev.Steps > 0:
		return 0.05 + 0.9*float64(ev.Step)/float64(ev.Steps)
	case ev.Stage == pipeline.StageDecoding:
		return 0.95
	case ev.Stage >= pipeline.StageDone:
		return 1
	case ev.Stage == pipeline.StagePrefill:
		return 0.04
	case ev.Stage == pipeline.StageEncodingImages:
		return 0.02
	}
	return 0
}

// progress answers GET /sdapi/v1/progress[?skip_current_image=true].
func (s *Server) progress(w http.ResponseWriter, r *http.Request) {
	skipImage := false
	switch r.URL.Query().Get("skip_current_image") {
	case "true", "True", "1", "yes":
		skipImage = true
	}
	writeJSON(w, http.StatusOK, s.tracker.snapshot(!skipImage))
}

func (t *tracker) snapshot(withImage bool) progressResponse {
	t.mu.Lock()
	defer t.mu.Unlock()
	resp := progressResponse{State: progressState{JobTimestamp: "0"}}
	if t.running == nil {
		return resp
	}
	ev := t.last
	frac := stageFraction(ev)
	if ev.Images > 1 { // a batch or a group of grid cells in one job: ev.Image is the one being made
		frac = (float64(ev.Image) + frac) / float64(ev.Images)
	}
	info := ev.Stage.String()
	if ev.Stage == pipeline.StageDenoising && ev.Step > 0 {
		info = fmt.Sprintf("step %d/%d", ev.Step, ev.Steps)
	}
	resp.State.SamplingStep, resp.State.SamplingSteps = ev.Step, ev.Steps
	if t.owner == nil {
		resp.State.Job = "window"
		resp.State.JobCount = 1
		resp.Progress = frac
		info = "a job from this Mac's window: " + info
		resp.TextInfo = &info
		return resp
	}
	b := t.owner.b
	b.mu.Lock()
	resp.State.Interrupted, resp.State.Skipped = b.interrupted, b.skipped > 0
	b.mu.Unlock()
	resp.State.Job = fmt.Sprintf("Batch %d out of %d", t.owner.index+1, len(b.jobs))
	resp.State.JobCount, resp.State.JobNo = len(b.jobs), t.owner.index
	resp.State.JobTimestamp = b.start.Format("20060102150405")
	resp.Progress = (float64(t.owner.index) + frac) / float64(len(b.jobs))
	if resp.Progress > 0 {
		since := time.Since(b.start).Seconds()
		resp.ETARelative = max(0, since/resp.Progress-since)
	}
	resp.TextInfo = &info
	if withImage && t.preview != nil {
		if t.encoded.of != t.preview {
			var buf bytes.Buffer
			if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, t.preview); err == nil {
				t.encoded.of, t.encoded.b64 = t.preview, base64.StdEncoding.EncodeToString(buf.Bytes())
			}
		}
		if t.encoded.of == t.preview {
			img := t.encoded.b64
			resp.CurrentImage = &img
		}
	}
	return resp
}

// interrupt answers POST /sdapi/v1/interrupt: the API request whose image is being made stops,
// as A1111's does: the running image ends after the step it is in and is decoded from that step's
// estimate (marked interrupted in info), the rest of its batch is cancelled; its handler answers
// with the images made. A window job is not stopped from the API (the artist at the window
// cancels it there).
func (s *Server) interrupt(w http.ResponseWriter, r *http.Request) {
	s.interruptRunning()
	writeJSON(w, http.StatusOK, map[string]any{})
}

// interruptRunning stops the API request whose image is being made (interrupt).
func (s *Server) interruptRunning() {
	s.tracker.mu.Lock()
	owner := s.tracker.owner
	s.tracker.mu.Unlock()
	if owner != nil {
		owner.b.mu.Lock()
		owner.b.interrupted = true
		owner.stop()
		owner.b.mu.Unlock()
		owner.b.cancelRest(s.cfg.Queue)
	}
}

// skip answers POST /sdapi/v1/skip: the image being made is dropped and its batch goes on.
func (s *Server) skip(w http.ResponseWriter, r *http.Request) {
	s.tracker.mu.Lock()
	owner, running := s.tracker.owner, s.tracker.running
	s.tracker.mu.Unlock()
	if owner != nil && running != nil {
		owner.b.mu.Lock()
		owner.b.skipped++
		owner.b.mu.Unlock()
		s.cfg.Queue.Cancel(running.ID)
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
