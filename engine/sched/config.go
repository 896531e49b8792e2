package sched

import (
	"encoding/json"
	"fmt"
)

// Config holds the keys of a diffusers FlowMatchEulerDiscreteScheduler configuration
// (scheduler/scheduler_config.json) that shape the sigma schedule.
type Config struct {
	NumTrainTimesteps  int     `json:"num_train_timesteps"`
	Shift              float64 `json:"shift"`
	UseDynamicShifting bool    `json:"use_dynamic_shifting"`
	BaseShift          float64 `json:"base_shift"`
	MaxShift           float64 `json:"max_shift"`
	BaseImageSeqLen    int     `json:"base_image_seq_len"`
	MaxImageSeqLen     int     `json:"max_image_seq_len"`
	// ShiftTerminal is the value the last non-zero sigma is stretched to; 0 (or JSON null)
	// means no stretch.
	ShiftTerminal float64 `json:"shift_terminal"`
	// TimeShiftType is "exponential" or "linear".
	TimeShiftType string `json:"time_shift_type"`

	InvertSigmas         bool `json:"invert_sigmas"`
	StochasticSampling   bool `json:"stochastic_sampling"`
	UseKarrasSigmas      bool `json:"use_karras_sigmas"`
	UseExponentialSigmas bool `json:"use_exponential_sigmas"`
	UseBetaSigmas        bool `json:"use_beta_sigmas"`
}

// DefaultConfig is the published Qwen-Image-2.1 scheduler configuration (qi21-spec §5.1); its
// values are also the defaults ParseConfig uses for keys a file leaves out.
func DefaultConfig() Config {
	return Config{
		NumTrainTimesteps:  1000,
		Shift:              1.0,
		UseDynamicShifting: true,
		BaseShift:          0.5,
		MaxShift:           0.9,
		BaseImageSeqLen:    256,
		MaxImageSeqLen:     8192,
		ShiftTerminal:      0.02,
		TimeShiftType:      "exponential",
	}
}

// ParseConfig reads the bytes of a diffusers scheduler_config.json (from a Hugging Face snapshot
// or the qi21.scheduler_json tensor of a .cmf). Keys that are absent keep DefaultConfig's value;
// an explicit null shift_terminal turns the terminal stretch off, as in diffusers.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return Config{}, fmt.Errorf("scheduler config is not a JSON object: %v", err)
	}
	// A JSON null leaves a Go field untouched, so absent and null keys both keep the default;
	// shift_terminal is the one key whose null has a meaning of its own (no stretch).
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("scheduler config has a key of the wrong type: %v", err)
	}
	if v, ok := raw["shift_terminal"]; ok && string(v) == "null" {
		cfg.ShiftTerminal = 0
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Validate reports settings this package does not implement or that cannot make a schedule.
func (c Config) Validate() error {
	switch {
	case c.UseKarrasSigmas, c.UseExponentialSigmas, c.UseBetaSigmas:
		return fmt.Errorf("scheduler config asks for Karras/exponential/beta sigmas, which Qwen-Image-2.1 does not use and Easel does not implement: set use_karras_sigmas, use_exponential_sigmas and use_beta_sigmas to false")
	case c.InvertSigmas:
		return fmt.Errorf("scheduler config sets invert_sigmas, which Easel does not implement: set it to false")
	case c.StochasticSampling:
		return fmt.Errorf("scheduler config sets stochastic_sampling, which Easel does not implement: set it to false")
	case c.TimeShiftType != "exponential" && c.TimeShiftType != "linear":
		return fmt.Errorf("scheduler config has time_shift_type %q: want \"exponential\" or \"linear\"", c.TimeShiftType)
	case c.NumTrainTimesteps <= 0:
		return fmt.Errorf("scheduler config has num_train_timesteps %d: want a positive count", c.NumTrainTimesteps)
	case c.UseDynamicShifting && c.MaxImageSeqLen == c.BaseImageSeqLen:
		return fmt.Errorf("scheduler config has base_image_seq_len = max_image_seq_len = %d: the dynamic shift needs two different lengths", c.BaseImageSeqLen)
	case c.ShiftTerminal < 0 || c.ShiftTerminal >= 1:
		return fmt.Errorf("scheduler config has shift_terminal %g: want a value in [0, 1)", c.ShiftTerminal)
	}
	return nil
}
