package pipeline

import (
	"encoding/json"
	"fmt"

	"easel/engine/sched"
)

// DefaultsTensor is the model file's blob of pipeline defaults (docs/reference/cmf.md §10.3).
const DefaultsTensor = "qi21.config_json"

// SchedulerTensor is the model file's blob holding the diffusers scheduler_config.json.
const SchedulerTensor = "qi21.scheduler_json"

// Defaults are a model's generation defaults, from qi21.config_json: what a request gets for the
// settings it leaves unset.
type Defaults struct {
	Steps            int     `json:"steps"`
	Width            int     `json:"width"`
	Height           int     `json:"height"`
	CFG              float64 `json:"cfg"`
	OutputResolution int     `json:"output_resolution"`
	// SampleSigmas is a distilled checkpoint's fixed grid (spec §5.5); nil for the base model.
	SampleSigmas []float64 `json:"-"`
}

// publishedDefaults are the diffusers pipeline's own defaults (spec §2), for keys a file leaves
// out.
func publishedDefaults() Defaults {
	return Defaults{Steps: 40, Width: 1024, Height: 1024, CFG: 1, OutputResolution: 1024}
}

// parseDefaults reads qi21.config_json; missing keys keep the published defaults.
func parseDefaults(js []byte) (Defaults, error) {
	d := publishedDefaults()
	if err := json.Unmarshal(js, &d); err != nil {
		return Defaults{}, fmt.Errorf("%s is not valid pipeline defaults: %v", DefaultsTensor, err)
	}
	if d.Steps <= 0 || d.Width <= 0 || d.Height <= 0 || d.OutputResolution <= 0 || d.CFG < 0 {
		return Defaults{}, fmt.Errorf("%s has impossible defaults (steps %d, %d×%d, output_resolution %d, cfg %g): the model file is damaged; convert it again",
			DefaultsTensor, d.Steps, d.Width, d.Height, d.OutputResolution, d.CFG)
	}
	sigmas, err := sched.SampleSigmas(js)
	if err != nil {
		return Defaults{}, fmt.Errorf("%s: %v", DefaultsTensor, err)
	}
	d.SampleSigmas = sigmas
	return d, nil
}

// ReadDefaults reads a model file's generation defaults without building a pipeline (a server
// answers with them before the model is loaded).
func ReadDefaults(m interface{ ConfigJSON(string) ([]byte, error) }) (Defaults, error) {
	js, err := m.ConfigJSON(DefaultsTensor)
	if err != nil {
		return Defaults{}, err
	}
	return parseDefaults(js)
}
