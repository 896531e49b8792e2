package lora

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// peftConfig is the part of a diffusers lora_adapter_metadata (a PEFT LoraConfig as JSON in the
// safetensors __metadata__) that sets scales: alpha / r, per-module patterns, rsLoRA.
type peftConfig struct {
	R            int                `json:"r"`
	Alpha        float64            `json:"lora_alpha"`
	AlphaPattern map[string]float64 `json:"alpha_pattern"`
	UseRSLoRA    bool               `json:"use_rslora"`
	UseDoRA      bool               `json:"use_dora"`
}

// peftMetadataKey is where diffusers saves the LoraConfig (lora.md §2.1).
const peftMetadataKey = "lora_adapter_metadata"

func parsePEFTConfig(meta map[string]string) (*peftConfig, error) {
	s, ok := meta[peftMetadataKey]
	if !ok {
		return nil, nil
	}
	var c peftConfig
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return nil, fmt.Errorf("lora: the file's %s metadata is not a PEFT LoraConfig (%v): re-save the LoRA, or remove that metadata entry", peftMetadataKey, err)
	}
	if c.UseDoRA {
		return nil, fmt.Errorf("lora: the file is a DoRA adapter (use_dora in %s), which Easel does not apply", peftMetadataKey)
	}
	if c.Alpha == 0 {
		return nil, nil
	}
	return &c, nil
}

// scale is PEFT's scaling for one module: alpha (from alpha_pattern when a pattern names the
// module, else lora_alpha) over the rank, or over √rank with rsLoRA.
func (c *peftConfig) scale(module string, rank int) float32 {
	alpha, best := c.Alpha, -1
	for pat, a := range c.AlphaPattern {
		if (module == pat || strings.HasSuffix(module, "."+pat)) && len(pat) > best {
			alpha, best = a, len(pat)
		}
	}
	if c.UseRSLoRA {
		return float32(alpha / math.Sqrt(float64(rank)))
	}
	return float32(alpha / float64(rank))
}
