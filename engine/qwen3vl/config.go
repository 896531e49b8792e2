package qwen3vl

import (
	"encoding/json"
	"fmt"
	"slices"
)

// TextConfig is the language model's geometry, read from te.config_json (Qwen3-VL's text_config).
type TextConfig struct {
	Hidden       int     // hidden_size (4096)
	Layers       int     // num_hidden_layers (36)
	Heads        int     // num_attention_heads (32)
	KVHeads      int     // num_key_value_heads (8)
	HeadDim      int     // head_dim (128)
	Intermediate int     // intermediate_size (12288)
	Vocab        int     // vocab_size (151936)
	RMSNormEps   float32 // rms_norm_eps (1e-6)
	RopeTheta    float64 // rope_theta (5e6)
	// MRopeSection is how many of the head's HeadDim/2 rotary frequencies each axis (t, h, w)
	// owns; Qwen3-VL interleaves them (slot j belongs to h when j%3 == 1, to w when j%3 == 2,
	// within 3·section; the rest to t).
	MRopeSection [3]int
}

// VisionConfig is the vision tower's geometry, read from vis.config_json (Qwen3-VL's vision_config).
type VisionConfig struct {
	Depth         int // depth (27)
	Hidden        int // hidden_size (1152)
	Heads         int // num_heads (16)
	Intermediate  int // intermediate_size (4304)
	OutHidden     int // out_hidden_size (4096): the language model's width
	PatchSize     int // patch_size (16)
	TemporalPatch int // temporal_patch_size (2)
	MergeSize     int // spatial_merge_size (2)
	InChannels    int // in_channels (3)
	// PositionEmbeddings is num_position_embeddings (2304), a square grid of learned embeddings.
	PositionEmbeddings int
	// DeepstackIndexes are the blocks whose output feeds a DeepStack merger, in merger order.
	DeepstackIndexes []int
	RopeTheta        float64 // the 2-D rotary's θ (10000)
	// GELUTanh is true for hidden_act gelu_pytorch_tanh (the block MLPs), false for exact gelu.
	GELUTanh bool
}

// HeadDim is the width of one vision attention head.
func (c VisionConfig) HeadDim() int { return c.Hidden / c.Heads }

// PatchValues is the width of one pixel_values row: channels · temporal patch · patch².
func (c VisionConfig) PatchValues() int {
	return c.InChannels * c.TemporalPatch * c.PatchSize * c.PatchSize
}

// GridSide is the side of the square grid of learned position embeddings (48).
func (c VisionConfig) GridSide() int {
	for s := 1; s*s <= c.PositionEmbeddings; s++ {
		if s*s == c.PositionEmbeddings {
			return s
		}
	}
	return 0
}

// ropeParameters is the rotary block of a Hugging Face config: "rope_parameters" in transformers
// 5, "rope_scaling" (plus a top-level rope_theta) before.
type ropeParameters struct {
	RopeTheta    *float64 `json:"rope_theta"`
	MRopeSection []int    `json:"mrope_section"`
}

type textConfigJSON struct {
	HiddenSize        int             `json:"hidden_size"`
	NumHiddenLayers   int             `json:"num_hidden_layers"`
	NumAttentionHeads int             `json:"num_attention_heads"`
	NumKeyValueHeads  int             `json:"num_key_value_heads"`
	HeadDim           int             `json:"head_dim"`
	IntermediateSize  int             `json:"intermediate_size"`
	VocabSize         int             `json:"vocab_size"`
	RMSNormEps        *float64        `json:"rms_norm_eps"`
	RopeTheta         *float64        `json:"rope_theta"`
	HiddenAct         string          `json:"hidden_act"`
	AttentionBias     bool            `json:"attention_bias"`
	RopeParameters    *ropeParameters `json:"rope_parameters"`
	RopeScaling       *ropeParameters `json:"rope_scaling"`
}

// ParseTextConfig reads te.config_json. Keys absent from the file take Qwen3-VL-8B's values where
// the reference has a default (head_dim = hidden/heads, eps 1e-6, θ 5e6, mrope [24, 20, 20]); the
// sizes must be present.
func ParseTextConfig(data []byte) (TextConfig, error) {
	var j textConfigJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return TextConfig{}, fmt.Errorf("te.config_json is not valid JSON (%v): the model file is damaged; convert it again", err)
	}
	c := TextConfig{
		Hidden: j.HiddenSize, Layers: j.NumHiddenLayers, Heads: j.NumAttentionHeads,
		KVHeads: j.NumKeyValueHeads, HeadDim: j.HeadDim, Intermediate: j.IntermediateSize,
		Vocab: j.VocabSize, RMSNormEps: 1e-6, RopeTheta: 5e6, MRopeSection: [3]int{24, 20, 20},
	}
	if c.KVHeads == 0 {
		c.KVHeads = c.Heads
	}
	if c.HeadDim == 0 && c.Heads > 0 {
		c.HeadDim = c.Hidden / c.Heads
	}
	if j.RMSNormEps != nil {
		c.RMSNormEps = float32(*j.RMSNormEps)
	}
	if j.RopeTheta != nil {
		c.RopeTheta = *j.RopeTheta
	}
	for _, rp := range []*ropeParameters{j.RopeScaling, j.RopeParameters} {
		if rp == nil {
			continue
		}
		if rp.RopeTheta != nil {
			c.RopeTheta = *rp.RopeTheta
		}
		if rp.MRopeSection != nil {
			if len(rp.MRopeSection) != 3 {
				return TextConfig{}, fmt.Errorf("te.config_json: mrope_section %v must have 3 entries (t, h, w)", rp.MRopeSection)
			}
			copy(c.MRopeSection[:], rp.MRopeSection)
		}
	}
	if j.HiddenAct != "" && j.HiddenAct != "silu" {
		return TextConfig{}, fmt.Errorf("te.config_json: hidden_act %q is not supported (Qwen3-VL uses silu)", j.HiddenAct)
	}
	if j.AttentionBias {
		return TextConfig{}, fmt.Errorf("te.config_json: attention_bias is true; Qwen3-VL's language model has no attention biases and Easel reads none")
	}
	return c, c.validate()
}

func (c TextConfig) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"hidden_size", c.Hidden}, {"num_hidden_layers", c.Layers}, {"num_attention_heads", c.Heads},
		{"num_key_value_heads", c.KVHeads}, {"head_dim", c.HeadDim}, {"intermediate_size", c.Intermediate},
		{"vocab_size", c.Vocab}} {
		if f.v <= 0 {
			return fmt.Errorf("te.config_json: %s is %d; it must be positive (is this a Qwen3-VL text config?)", f.name, f.v)
		}
	}
	if c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("te.config_json: %d attention heads are not a multiple of %d key/value heads", c.Heads, c.KVHeads)
	}
	if c.HeadDim%2 != 0 {
		return fmt.Errorf("te.config_json: head_dim %d must be even for the rotary embedding", c.HeadDim)
	}
	s := c.MRopeSection
	if s[0] < 0 || s[1] < 0 || s[2] < 0 || s[0]+s[1]+s[2] != c.HeadDim/2 {
		return fmt.Errorf("te.config_json: mrope_section %v must add up to head_dim/2 = %d", s, c.HeadDim/2)
	}
	return nil
}

type visionConfigJSON struct {
	Depth                  int             `json:"depth"`
	HiddenSize             int             `json:"hidden_size"`
	NumHeads               int             `json:"num_heads"`
	IntermediateSize       int             `json:"intermediate_size"`
	OutHiddenSize          int             `json:"out_hidden_size"`
	PatchSize              int             `json:"patch_size"`
	TemporalPatchSize      int             `json:"temporal_patch_size"`
	SpatialMergeSize       int             `json:"spatial_merge_size"`
	InChannels             int             `json:"in_channels"`
	NumPositionEmbeddings  int             `json:"num_position_embeddings"`
	DeepstackVisualIndexes []int           `json:"deepstack_visual_indexes"`
	HiddenAct              string          `json:"hidden_act"`
	RopeParameters         *ropeParameters `json:"rope_parameters"`
	RopeTheta              *float64        `json:"rope_theta"`
}

// ParseVisionConfig reads vis.config_json. Absent keys take Qwen3-VL's defaults where the
// reference has one (patch 16, temporal patch 2, merge 2, 3 channels, θ 10000, gelu_pytorch_tanh).
func ParseVisionConfig(data []byte) (VisionConfig, error) {
	var j visionConfigJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return VisionConfig{}, fmt.Errorf("vis.config_json is not valid JSON (%v): the model file is damaged; convert it again", err)
	}
	c := VisionConfig{
		Depth: j.Depth, Hidden: j.HiddenSize, Heads: j.NumHeads, Intermediate: j.IntermediateSize,
		OutHidden: j.OutHiddenSize, PatchSize: j.PatchSize, TemporalPatch: j.TemporalPatchSize,
		MergeSize: j.SpatialMergeSize, InChannels: j.InChannels, PositionEmbeddings: j.NumPositionEmbeddings,
		DeepstackIndexes: slices.Clone(j.DeepstackVisualIndexes), RopeTheta: 10000, GELUTanh: true,
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.PatchSize, 16)
	def(&c.TemporalPatch, 2)
	def(&c.MergeSize, 2)
	def(&c.InChannels, 3)
	if j.RopeTheta != nil {
		c.RopeTheta = *j.RopeTheta
	}
	if j.RopeParameters != nil && j.RopeParameters.RopeTheta != nil {
		c.RopeTheta = *j.RopeParameters.RopeTheta
	}
	switch j.HiddenAct {
	case "", "gelu_pytorch_tanh":
	case "gelu":
		c.GELUTanh = false
	default:
		return VisionConfig{}, fmt.Errorf("vis.config_json: hidden_act %q is not supported (gelu_pytorch_tanh or gelu)", j.HiddenAct)
	}
	return c, c.validate()
}

func (c VisionConfig) validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{{"depth", c.Depth}, {"hidden_size", c.Hidden}, {"num_heads", c.Heads}, {"intermediate_size", c.Intermediate},
		{"out_hidden_size", c.OutHidden}, {"num_position_embeddings", c.PositionEmbeddings}} {
		if f.v <= 0 {
			return fmt.Errorf("vis.config_json: %s is %d; it must be positive (is this a Qwen3-VL vision config?)", f.name, f.v)
		}
	}
	if c.Hidden%c.Heads != 0 || c.HeadDim()%4 != 0 {
		return fmt.Errorf("vis.config_json: hidden_size %d over %d heads must give a head width divisible by 4 (2-D rotary)", c.Hidden, c.Heads)
	}
	if c.GridSide() == 0 {
		return fmt.Errorf("vis.config_json: num_position_embeddings %d is not a square grid", c.PositionEmbeddings)
	}
	for _, d := range c.DeepstackIndexes {
		if d < 0 || d >= c.Depth {
			return fmt.Errorf("vis.config_json: deepstack index %d is outside the %d blocks", d, c.Depth)
		}
	}
	return nil
}

// imageTokenID reads an "image_token_id" key from a config blob, when a packer stored one there
// (it belongs to Qwen3-VL's top-level config, which te.config_json does not carry).
func imageTokenID(data []byte) (int32, bool) {
	var j struct {
		ImageTokenID *int32 `json:"image_token_id"`
	}
	if json.Unmarshal(data, &j) != nil || j.ImageTokenID == nil {
		return 0, false
	}
	return *j.ImageTokenID, true
}
