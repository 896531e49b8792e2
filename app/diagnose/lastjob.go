package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"easel/engine/ml"
	"easel/engine/pipeline"
)

// LastJob is what the report says about the most recent finished job (from `easel generate`, the
// window's queue or `easel serve`): sizes and times, the model file's name, never the prompt or a
// path.
type LastJob struct {
	When    time.Time `json:"when"`
	Backend string    `json:"backend"`
	// Model is the model file's base name ("" when not known).
	Model  string  `json:"model,omitempty"`
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Steps  int     `json:"steps"`
	Stages []Stage `json:"stages"`
	// PeakFootprint is the largest stage peak (the process's peak when no stage has one).
	PeakFootprint int64 `json:"peak_footprint_bytes,omitempty"`
	// PeakMemoryMethod says how the stages' peaks were measured (engine/procmem).
	PeakMemoryMethod string `json:"peak_memory_method,omitempty"`
	// Classes is the time per kernel class in seconds; ClassesAre says whose and how measured:
	// "GPU, sampled" (timestamps at compute-pass boundaries), "GPU, estimated split" (each
	// command buffer's GPU time apportioned by a cost model), "GPU, profiling" (EASEL_METAL_PROF),
	// or "CPU" when nothing ran on a device.
	Classes    map[string]float64 `json:"class_seconds,omitempty"`
	ClassesAre string             `json:"class_seconds_are,omitempty"`
	// Notices are the run's notices (where the networks ran, fallbacks, recoveries); Declines
	// those of them that are a device's decline; Recoveries the devices' recoveries during the run
	// (a GPU overflow, watchdog stop or out-of-memory a retry fixed, a step moved to the CPU: the
	// pipeline's Result.Recoveries, one per kind and network with its count).
	Notices    []string            `json:"notices,omitempty"`
	Declines   []string            `json:"declines,omitempty"`
	Recoveries []pipeline.Recovery `json:"recoveries,omitempty"`
}

// Stage is one stage's wall time, its GPU time and the process's peak memory footprint during it.
type Stage struct {
	Stage         string  `json:"stage"`
	Seconds       float64 `json:"seconds"`
	DeviceSeconds float64 `json:"device_seconds,omitempty"`
	PeakBytes     int64   `json:"peak_bytes,omitempty"`
}

// JobFromResult summarises a finished run: model is the model file's path (only its base name is
// kept), notices the run's notice events.
func JobFromResult(res *pipeline.Result, backend, model string, notices []string) *LastJob {
	j := &LastJob{When: time.Now().UTC().Truncate(time.Second), Backend: backend, Width: res.Width, Height: res.Height,
		Steps: res.Steps, Notices: notices, Recoveries: res.Recoveries, Classes: map[string]float64{}, PeakMemoryMethod: res.PeakMemoryMethod}
	if model != "" {
		j.Model = ModelName(model)
	}
	for _, n := range notices {
		if strings.Contains(n, " declined ") {
			j.Declines = append(j.Declines, n)
		}
	}
	for s := pipeline.StageEncodingPrompt; s < pipeline.StageDone; s++ {
		if res.StageTimes[s] == 0 && res.StageDeviceTimes[s] == 0 {
			continue
		}
		j.Stages = append(j.Stages, Stage{Stage: s.String(), Seconds: res.StageTimes[s].Seconds(), DeviceSeconds: res.StageDeviceTimes[s].Seconds(),
			PeakBytes: res.StagePeakMemory[s]})
		j.PeakFootprint = max(j.PeakFootprint, res.StagePeakMemory[s])
	}
	if j.PeakFootprint == 0 {
		j.PeakFootprint = hostInfo().PeakFootprint
	}
	if g := res.GPUClasses; g.Total() > 0 {
		for c, t := range g.Time {
			if t > 0 {
				j.Classes[ml.Class(c).String()] = t.Seconds()
			}
		}
		j.ClassesAre = "GPU, " + g.Source()
		return j
	}
	for c, t := range res.Timings {
		if t.Time > 0 {
			j.Classes[ml.Class(c).String()] = t.Time.Seconds()
		}
	}
	j.ClassesAre = "CPU"
	return j
}

// RecordLastJob keeps a finished job's record in the app-support folder dir for `easel diagnose`
// (nothing personal). A record that cannot be written is left out quietly: the image is what the
// user asked for.
func RecordLastJob(dir string, res *pipeline.Result, backend, model string, notices []string) {
	if dir == "" || res == nil {
		return
	}
	_ = SaveLastJob(dir, JobFromResult(res, backend, model, notices))
}

func lastJobPath(dir string) string { return filepath.Join(dir, "diagnostics", "last-job.json") }

// SaveLastJob records j in the app-support folder dir (atomically).
func SaveLastJob(dir string, j *LastJob) error {
	p := lastJobPath(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(j, "", "  ")
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// LoadLastJob reads the last job's record, or nil.
func LoadLastJob(dir string) *LastJob {
	b, err := os.ReadFile(lastJobPath(dir))
	if err != nil {
		return nil
	}
	var j LastJob
	if json.Unmarshal(b, &j) != nil {
		return nil
	}
	return &j
}
