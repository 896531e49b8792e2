package sched

import (
	"encoding/json"
	"fmt"
)

// TurboSampleSigmas is the fixed 8-step grid the distilled Qwen/Qwen-Image-2.1-Turbo checkpoint
// stores as sample_sigmas in its model_index.json (qi21-spec §5.5), without the terminal 0 — for
// a Turbo file whose configuration lacks the list.
func TurboSampleSigmas() []float64 {
	return []float64{1.0, 0.978453, 0.954180, 0.926626, 0.895080, 0.845148, 0.704534, 0.414568}
}

// TurboConfig is the scheduler configuration a fixed-grid checkpoint runs with: no dynamic
// shifting, shift 1 and no terminal stretch, so the stored sigmas are used as they are.
func TurboConfig() Config {
	c := DefaultConfig()
	c.UseDynamicShifting = false
	c.Shift = 1.0
	c.ShiftTerminal = 0
	return c
}

// SampleSigmas reads the fixed sigma grid a pipeline configuration (a diffusers model_index.json,
// or the same keys in the .cmf pipeline config) stores under "sample_sigmas". It returns nil when
// the key is absent or null: the checkpoint then uses the step-count schedule.
func SampleSigmas(pipelineConfigJSON []byte) ([]float64, error) {
	var cfg struct {
		SampleSigmas []float64 `json:"sample_sigmas"`
	}
	if err := json.Unmarshal(pipelineConfigJSON, &cfg); err != nil {
		return nil, fmt.Errorf("pipeline config: cannot read sample_sigmas: %v", err)
	}
	for i, v := range cfg.SampleSigmas {
		if !(v > 0 && v <= 1) {
			return nil, fmt.Errorf("pipeline config: sample_sigmas[%d] is %g: sigmas must lie in (0, 1]", i, v)
		}
	}
	return cfg.SampleSigmas, nil
}
