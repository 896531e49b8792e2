package qi21

import (
	"encoding/json"
	"fmt"
)

// Config is the transformer's geometry, read from the diffusers transformer/config.json (stored
// in a .cmf as the u8 tensor dit.config_json). Nothing about the geometry is a constant here.
type Config struct {
	Heads           int     `json:"num_attention_heads"`
	HeadDim         int     `json:"attention_head_dim"`
	Layers          int     `json:"num_layers"`
	InChannels      int     `json:"in_channels"`
	OutChannels     int     `json:"out_channels"`
	ContextDim      int     `json:"context_in_dim"`
	MLPRatio        float64 `json:"mlp_ratio"`
	AxesDims        []int   `json:"axes_dims_rope"`
	Eps             float32 `json:"eps"`
	CausalCondition *bool   `json:"causal_condition"`
	PatchSize       int     `json:"patch_size"`
}

// ConfigTensor is the name of the config blob in a model file.
const ConfigTensor = "dit.config_json"

// ropeTheta is the RoPE base; the reference hard-codes it (spec §6.1).
const ropeTheta = 10000

// timestepChannels is the width of the sinusoidal timestep embedding (spec §6.5).
const timestepChannels = 256

// ParseConfig reads and checks a transformer config.
func ParseConfig(js []byte) (Config, error) {
	var c Config
	if err := json.Unmarshal(js, &c); err != nil {
		return c, fmt.Errorf("qi21: the transformer config is not valid JSON: %v", err)
	}
	if c.OutChannels == 0 {
		c.OutChannels = c.InChannels
	}
	if c.PatchSize == 0 {
		c.PatchSize = 1
	}
	if c.Eps == 0 {
		c.Eps = 1e-6
	}
	return c, c.check()
}

func (c Config) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("qi21: transformer config: "+format+" — this is not a Qwen-Image-2.1 transformer Easel can run", args...)
	}
	if c.Heads <= 0 || c.HeadDim <= 0 || c.HeadDim%2 != 0 {
		return bad("%d heads of %d (need positive heads and an even head dim)", c.Heads, c.HeadDim)
	}
	if c.Layers <= 0 || c.InChannels <= 0 || c.OutChannels <= 0 || c.ContextDim <= 0 {
		return bad("layers %d, in %d, out %d, context %d must be positive", c.Layers, c.InChannels, c.OutChannels, c.ContextDim)
	}
	if c.MLPHidden() <= 0 || float64(c.MLPHidden()) != float64(c.Hidden())*c.MLPRatio {
		return bad("mlp_ratio %v does not give a whole hidden width", c.MLPRatio)
	}
	sum := 0
	for _, d := range c.AxesDims {
		if d <= 0 || d%2 != 0 {
			return bad("rope axes %v must be positive and even", c.AxesDims)
		}
		sum += d
	}
	if len(c.AxesDims) != 3 || sum != c.HeadDim {
		return bad("rope axes %v must be three widths summing to the head dim %d", c.AxesDims, c.HeadDim)
	}
	if c.PatchSize != 1 {
		return bad("patch_size %d (only 1 exists)", c.PatchSize)
	}
	if c.CausalCondition != nil && !*c.CausalCondition {
		return bad("causal_condition false (the prefix cache needs t = 0 conditioning)")
	}
	return nil
}

// Hidden is the model width, heads × head dim.
func (c Config) Hidden() int { return c.Heads * c.HeadDim }

// MLPHidden is the SwiGLU width, hidden × mlp_ratio.
func (c Config) MLPHidden() int { return int(float64(c.Hidden()) * c.MLPRatio) }
