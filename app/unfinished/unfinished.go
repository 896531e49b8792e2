// Package unfinished keeps the window's jobs across a crash, a quit or a restart: each submitted
// job's draft and seed in the app-support folder's unfinished/ (one folder per job, in the order
// they were queued), its checkpoints beside them (app/checkpoint), all removed once its image is
// saved. After a restart List gives what was left — waiting jobs and jobs stopped mid-run — and
// each becomes its request again, resumed from its checkpoint bit for bit; Discard drops them.
package unfinished

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"easel/app/checkpoint"
	"easel/app/compose"
	"easel/engine/pipeline"
)

// ErrUnwritable is wrapped by Open's error when the folder cannot be written: jobs are then not
// kept (the window says so once and runs them as before).
var ErrUnwritable = errors.New("unfinished jobs cannot be kept")

// Store is the unfinished/ folder.
type Store struct {
	dir string
	mu  sync.Mutex
	seq int64
}

// record is a job's job.json.
type record struct {
	Order int64         `json:"order"`
	Label string        `json:"label"`
	Seed  uint64        `json:"seed"`
	Draft compose.Draft `json:"draft"`
	// Where is where the job renders: "" this Mac, else the machine or studio it was sent to.
	Where string `json:"where,omitempty"`
}

// Open opens (making it) the unfinished/ folder under appSupport, checking it can be written.
func Open(appSupport string) (*Store, error) {
	dir := filepath.Join(appSupport, "unfinished")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v; jobs will run, but not resume after a crash or a quit", ErrUnwritable, err)
	}
	probe := filepath.Join(dir, ".probe")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return nil, fmt.Errorf("%w: %s cannot be written (%v); jobs will run, but not resume after a crash or a quit", ErrUnwritable, dir, err)
	}
	os.Remove(probe)
	return &Store{dir: dir, seq: time.Now().UnixNano()}, nil
}

// Job is one kept job: its folder and its checkpoint writer.
type Job struct {
	dir   string
	rec   record
	w     *checkpoint.Writer
	sleep sleepFlush
}

// Add keeps a job queued now: its draft (condition images, start image and mask included), seed
// and where it renders ("" this Mac; a job sent to another machine is kept only while it is
// queued or running there: when it fails it is failed, not unfinished).
func (s *Store) Add(d compose.Draft, seed uint64, label, where string) (*Job, error) {
	s.mu.Lock()
	s.seq++
	order := s.seq
	s.mu.Unlock()
	j := &Job{dir: filepath.Join(s.dir, strconv.FormatInt(order, 10)), rec: record{Order: order, Label: label, Seed: seed, Draft: d, Where: where}}
	b, err := json.Marshal(j.rec)
	if err != nil {
		return nil, fmt.Errorf("the job cannot be kept: %w", err)
	}
	if err := os.MkdirAll(j.dir, 0o755); err != nil {
		return nil, fmt.Errorf("the job cannot be kept: %w", err)
	}
	if err := checkpoint.WriteAtomic(filepath.Join(j.dir, "job.json"), b); err != nil {
		os.RemoveAll(j.dir)
		return nil, fmt.Errorf("the job cannot be kept: %w", err)
	}
	j.w = checkpoint.NewWriter(filepath.Join(j.dir, "checkpoint.ckpt"))
	return j, nil
}

// Where is where the job renders ("" this Mac).
func (j *Job) Where() string { return j.rec.Where }

// Writer is the job's checkpoint writer (set its Notice; EveryStep for tests).
func (j *Job) Writer() *checkpoint.Writer { return j.w }

// OnStep is the Request.OnStep that checkpoints the job's run of the model with fingerprint.
func (j *Job) OnStep(req *pipeline.Request, fingerprint string) func(pipeline.StepState) {
	base := checkpoint.Checkpoint{Model: checkpoint.Model{Path: j.rec.Draft.Model, Fingerprint: fingerprint},
		Request: json.RawMessage(`{"window_job":true}`), Seed: req.Seed, NoiseSeed: req.NoiseSeed, VariationSeed: req.VariationSeed, Pass: 1}
	loras := hashLoRAs(req.LoRAFiles)
	return func(s pipeline.StepState) {
		j.sleep.running(j.w) // the Mac's sleep writes the newest state first (sleep.go)
		defer j.sleep.stepped(s)
		j.w.Offer(func() *checkpoint.Checkpoint {
			c := base
			c.LoRAs = loras()
			c.Image, c.Images, c.Step, c.Steps = s.Image, s.Images, s.Step, s.Steps
			c.Sigmas, c.Latents = slices.Clone(s.Sigmas), slices.Clone(s.Latents)
			for _, f := range s.Finished {
				c.Finished = append(c.Finished, slices.Clone(f))
			}
			return &c
		})
	}
}

// Done forgets the job: its image is saved (or it was cancelled).
func (j *Job) Done() error {
	j.sleep.stop()
	j.w.Wait()
	if err := os.RemoveAll(j.dir); err != nil {
		return fmt.Errorf("cannot remove the finished job's folder %s: %w", j.dir, err)
	}
	return nil
}

// Pending is a job left by an earlier session.
type Pending struct {
	Label string
	Seed  uint64
	Draft compose.Draft
	// Where is where it was rendering ("" this Mac).
	Where string
	// Checkpoint is where it stopped (nil: it had not started). Problem says why a checkpoint
	// that is there cannot be used (damaged, newer; it is kept for inspection): the job then
	// starts again from its first step.
	Checkpoint *checkpoint.Checkpoint
	Problem    error
	job        *Job
}

// List is what earlier sessions left, in queue order. A folder without a readable job.json is
// skipped (it is reported in the error, and left alone).
func (s *Store) List() ([]*Pending, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var out []*Pending
	var bad []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(s.dir, e.Name())
		var rec record
		b, err := os.ReadFile(filepath.Join(dir, "job.json"))
		if err == nil {
			err = json.Unmarshal(b, &rec)
		}
		if err != nil {
			bad = append(bad, dir)
			continue
		}
		p := &Pending{Label: rec.Label, Seed: rec.Seed, Draft: rec.Draft, Where: rec.Where,
			job: &Job{dir: dir, rec: rec, w: checkpoint.NewWriter(filepath.Join(dir, "checkpoint.ckpt"))}}
		if _, err := os.Stat(p.job.w.Path()); err == nil {
			p.Checkpoint, p.Problem = checkpoint.Read(p.job.w.Path())
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b *Pending) int { return int(a.job.rec.Order - b.job.rec.Order) })
	if len(bad) > 0 {
		return out, fmt.Errorf("%d kept job folder(s) cannot be read and were left as they are: %s", len(bad), strings.Join(bad, ", "))
	}
	return out, nil
}

// Describe says where the job stopped: "waiting", "step 23 of 40", "image 2 of 4, step 23 of 40".
func (p *Pending) Describe() string {
	c := p.Checkpoint
	switch {
	case c == nil:
		return "waiting"
	case c.Images > 1:
		return fmt.Sprintf("image %d of %d, step %d of %d", c.Image+1, c.Images, c.Step, c.Steps)
	}
	return fmt.Sprintf("step %d of %d", c.Step, c.Steps)
}

// Job is the pending job's compose.Job, resumed from its checkpoint when it has a usable one for
// the model with fingerprint and the draft's LoRA files as they are now (one of another model or
// other LoRAs is refused with a sentence, and the job stays kept), and the kept job that goes on
// checkpointing it. The LoRA files are hashed here (once per file while it is unchanged).
func (p *Pending) Job(fingerprint string) (compose.Job, *Job, error) {
	job, err := p.Draft.Job(p.Seed)
	if err != nil {
		return job, nil, err
	}
	if c := p.Checkpoint; c != nil {
		loras, err := checkpointLoRAs(job.Request.LoRAFiles)
		if err != nil {
			return job, nil, fmt.Errorf("%w: %v; put it back or start the image again", checkpoint.ErrOther, err)
		}
		if err := c.Check(fingerprint, loras); err != nil {
			return job, nil, err
		}
		job.Request.Resume = &pipeline.Resume{Image: c.Image, Step: c.Step, Latents: c.Latents, Finished: c.Finished}
	}
	return job, p.job, nil
}

// Discard drops this one job and its checkpoints (the others stay kept).
func (p *Pending) Discard() error {
	if err := os.RemoveAll(p.job.dir); err != nil {
		return fmt.Errorf("cannot discard the kept job %q (%s): %w", p.Label, p.job.dir, err)
	}
	return nil
}

// Discard drops every kept job and its checkpoints.
func (s *Store) Discard() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			return fmt.Errorf("cannot discard %s: %w", e.Name(), err)
		}
	}
	return nil
}
