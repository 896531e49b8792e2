package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"easel/app/checkpoint"
	"easel/engine/pipeline"
)

// DefaultCheckpointGrace is how long a checkpoint left by an earlier run of the server waits for
// its client to send the same request again before it is removed.
const DefaultCheckpointGrace = 10 * time.Minute

// apiCheckpoints keeps running API jobs' checkpoints in Config.Checkpoints for the server's own
// restart. An A1111 call waits for its picture, so a checkpoint is only useful while its client
// does: a client that sends the same request again (the same JSON object) after the server
// restarted gets the picture resumed from it, with the seeds the first run drew. A checkpoint is
// removed once its request ends for any reason but the server's stop (answered, skipped,
// interrupted, failed, its client gone), or — left by an earlier run
// and asked for by nobody — a grace period after the server starts.
type apiCheckpoints struct {
	dir     string
	mu      sync.Mutex
	claimed map[string]bool
	fps     map[string]string // model path → checkpoint.Fingerprint
}

// resumeRecord is a request's record.json: the seeds its first run drew.
type resumeRecord struct {
	Seed    int64 `json:"seed"`
	Subseed int64 `json:"subseed"`
}

// startCheckpoints opens the folder and schedules the removal of what earlier runs left.
func (s *Server) startCheckpoints() {
	if s.cfg.Checkpoints == "" {
		return
	}
	if err := os.MkdirAll(s.cfg.Checkpoints, 0o755); err != nil {
		s.cfg.Log.Printf("API jobs are not checkpointed: %v", err)
		return
	}
	c := &apiCheckpoints{dir: s.cfg.Checkpoints, claimed: map[string]bool{}, fps: map[string]string{}}
	s.ck = c
	entries, _ := os.ReadDir(c.dir)
	var left []string
	for _, e := range entries {
		if e.IsDir() {
			left = append(left, e.Name())
		}
	}
	if len(left) == 0 {
		return
	}
	grace := s.cfg.CheckpointGrace
	if grace <= 0 {
		grace = DefaultCheckpointGrace
	}
	time.AfterFunc(grace, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, k := range left {
			if !c.claimed[k] {
				os.RemoveAll(filepath.Join(c.dir, k))
			}
		}
	})
}

// resumeRun is one request's checkpoints.
type resumeRun struct {
	c       *apiCheckpoints
	key     string
	dir     string
	found   bool
	writers []*checkpoint.Writer
}

// claimCheckpoints finds the request's checkpoints (by its JSON object and model) and, when an
// earlier run left them, takes its seeds into p. Nil when checkpoints are off or the same request
// is running already.
func (s *Server) claimCheckpoints(kind string, f *fields, p *params) *resumeRun {
	c := s.ck
	if c == nil {
		return nil
	}
	body, err := json.Marshal(f.m) // keys sorted: the same object gives the same key
	if err != nil {
		return nil
	}
	_, modelPath, _ := s.models.current()
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", kind, modelPath)
	h.Write(body)
	key := hex.EncodeToString(h.Sum(nil))[:32]
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.claimed[key] {
		return nil
	}
	c.claimed[key] = true
	rr := &resumeRun{c: c, key: key, dir: filepath.Join(c.dir, key)}
	var rec resumeRecord
	if b, err := os.ReadFile(filepath.Join(rr.dir, "record.json")); err == nil && json.Unmarshal(b, &rec) == nil {
		p.Seed, p.Subseed, rr.found = rec.Seed, rec.Subseed, true
	}
	return rr
}

// attach records the seeds drawn, resumes each plan from its checkpoint when it has a usable one
// (another model file or changed LoRAs start it again, said in the warnings) and checkpoints it.
func (rr *resumeRun) attach(plans []plan, p *params, modelPath string) {
	if rr == nil {
		return
	}
	if !rr.found {
		b, _ := json.Marshal(resumeRecord{Seed: p.Seed, Subseed: p.Subseed})
		if err := os.MkdirAll(rr.dir, 0o755); err != nil {
			return
		}
		if err := checkpoint.WriteAtomic(filepath.Join(rr.dir, "record.json"), b); err != nil {
			return
		}
	}
	fp := rr.c.fingerprint(modelPath)
	if fp == "" {
		return
	}
	for i := range plans {
		req := &plans[i].Request
		w := checkpoint.NewWriter(filepath.Join(rr.dir, strconv.Itoa(i)+".ckpt"))
		rr.writers = append(rr.writers, w)
		var loras []checkpoint.LoRA
		for _, lf := range req.LoRAFiles {
			loras = append(loras, checkpoint.LoRA{Path: lf.Path, Strength: lf.Strength})
		}
		loras, lerr := checkpoint.HashLoRAs(loras)
		if rr.found && lerr == nil {
			if ck, err := checkpoint.Read(w.Path()); err == nil {
				if err := ck.Check(fp, loras); err != nil {
					p.Warnings = append(p.Warnings, fmt.Sprintf("image %d starts again: %v", i+1, err))
				} else {
					req.Resume = &pipeline.Resume{Image: ck.Image, Step: ck.Step, Latents: ck.Latents, Finished: ck.Finished}
					p.Warnings = append(p.Warnings, fmt.Sprintf("image %d resumed at step %d of %d from the checkpoint kept when the server stopped", i+1, ck.Step, ck.Steps))
				}
			}
		}
		base := checkpoint.Checkpoint{Model: checkpoint.Model{Path: modelPath, Fingerprint: fp}, LoRAs: loras,
			Request: json.RawMessage(`{"api_job":true}`), Seed: req.Seed, NoiseSeed: req.NoiseSeed, VariationSeed: req.VariationSeed, Pass: 1}
		req.OnStep = func(s pipeline.StepState) {
			w.Offer(func() *checkpoint.Checkpoint {
				c := base
				c.Image, c.Images, c.Step, c.Steps = s.Image, s.Images, s.Step, s.Steps
				c.Sigmas, c.Latents = slices.Clone(s.Sigmas), slices.Clone(s.Latents)
				for _, f := range s.Finished {
					c.Finished = append(c.Finished, slices.Clone(f))
				}
				return &c
			})
		}
	}
}

// end lets the request's checkpoints go: removed (remove: the request ended in any way but the
// server's own stop: answered, skipped, interrupted, failed or its client gone) or kept for the
// client's retry after a restart.
func (rr *resumeRun) end(remove bool) {
	if rr == nil {
		return
	}
	for _, w := range rr.writers {
		w.Wait()
	}
	rr.c.mu.Lock()
	defer rr.c.mu.Unlock()
	delete(rr.c.claimed, rr.key)
	if remove {
		os.RemoveAll(rr.dir)
	}
}

// fingerprint is the model file's (cached per path), or "" when it cannot be read.
func (c *apiCheckpoints) fingerprint(path string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if fp, ok := c.fps[path]; ok {
		return fp
	}
	fp, err := checkpoint.FingerprintFile(path)
	if err != nil {
		return ""
	}
	c.fps[path] = fp
	return fp
}
