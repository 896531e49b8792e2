package diagnose

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/engine/pipeline"
)

// LastJob is what the report says about the most recent finished job: sizes and times, never the
// prompt or a path.
type LastJob struct {
	When          time.Time `json:"when"`
	Backend       string    `json:"backend"`
	Width         int       `json:"width"`
	Height        int       `json:"height"`
	Steps         int       `json:"steps"`
	Stages        []Stage   `json:"stages"`
	PeakFootprint int64     `json:"peak_footprint_bytes,omitempty"`
	// Classes is the time per kernel class in seconds; ClassesAre says whose ("GPU" when the
	// denoiser ran on Metal in profiling mode, else "CPU").
	Classes    map[string]float64 `json:"class_seconds,omitempty"`
	ClassesAre string             `json:"class_seconds_are,omitempty"`
	// Notices are the run's notices (declines, fallbacks); Retries the GPU errors recovered.
	Notices []string      `json:"notices,omitempty"`
	Retries []metal.Retry `json:"retries,omitempty"`
}

// Stage is one stage's wall time and its GPU time.
type Stage struct {
	Stage         string  `json:"stage"`
	Seconds       float64 `json:"seconds"`
	DeviceSeconds float64 `json:"device_seconds,omitempty"`
}

// JobFromResult summarises a finished run. classesOnGPU says the per-class times are the GPU's.
func JobFromResult(res *pipeline.Result, backend string, notices []string, retries []metal.Retry, classesOnGPU bool) *LastJob {
	j := &LastJob{When: time.Now().UTC().Truncate(time.Second), Backend: backend, Width: res.Width, Height: res.Height,
		Steps: res.Steps, Notices: notices, Retries: retries, PeakFootprint: hostInfo().PeakFootprint, Classes: map[string]float64{}}
	for s := pipeline.StageEncodingPrompt; s < pipeline.StageDone; s++ {
		if res.StageTimes[s] == 0 && res.StageDeviceTimes[s] == 0 {
			continue
		}
		j.Stages = append(j.Stages, Stage{Stage: s.String(), Seconds: res.StageTimes[s].Seconds(), DeviceSeconds: res.StageDeviceTimes[s].Seconds()})
	}
	for c, t := range res.Timings {
		if t.Time > 0 {
			j.Classes[ml.Class(c).String()] = t.Time.Seconds()
		}
	}
	j.ClassesAre = "CPU"
	if classesOnGPU {
		j.ClassesAre = "GPU"
	}
	return j
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
