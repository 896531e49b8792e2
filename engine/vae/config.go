package vae

import (
	"encoding/json"
	"fmt"
)

// Config is the geometry of the autoencoder, read from the diffusers vae/config.json (the
// vae.config_json tensor of a .cmf). Missing keys take the class defaults, which are the
// published values (spec §8.1; decoder_base_dim 144, as diffusers would, not base_dim).
type Config struct {
	BaseDim            int       `json:"base_dim"`
	DecoderBaseDim     int       `json:"decoder_base_dim"`
	ZDim               int       `json:"z_dim"`
	DimMult            []int     `json:"dim_mult"`
	NumResBlocks       int       `json:"num_res_blocks"`
	TemporalDownsample []bool    `json:"temperal_downsample"` // diffusers' spelling
	InChannels         int       `json:"in_channels"`
	OutChannels        int       `json:"out_channels"`
	IsResidual         bool      `json:"is_residual"`
	PatchSize          *int      `json:"patch_size"`
	LatentsMean        []float32 `json:"latents_mean"`
	LatentsStd         []float32 `json:"latents_std"`
}

// ParseConfig reads a vae config.json and checks that it describes a model this package runs.
func ParseConfig(js []byte) (*Config, error) {
	c := &Config{
		BaseDim:            96,
		DecoderBaseDim:     144,
		ZDim:               64,
		DimMult:            []int{1, 2, 4, 8, 8},
		NumResBlocks:       2,
		TemporalDownsample: []bool{false, true, true, true},
		InChannels:         4,
		OutChannels:        4,
		IsResidual:         true,
	}
	if err := json.Unmarshal(js, c); err != nil {
		return nil, fmt.Errorf("vae config: not valid JSON: %v", err)
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("vae config: %v", err)
	}
	return c, nil
}

func (c *Config) validate() error {
	switch {
	case c.BaseDim <= 0 || c.DecoderBaseDim <= 0 || c.ZDim <= 0 || c.InChannels <= 0 || c.OutChannels <= 0:
		return fmt.Errorf("base_dim %d, decoder_base_dim %d, z_dim %d, in_channels %d and out_channels %d must be positive",
			c.BaseDim, c.DecoderBaseDim, c.ZDim, c.InChannels, c.OutChannels)
	case len(c.DimMult) < 1:
		return fmt.Errorf("dim_mult is empty")
	case c.NumResBlocks < 1:
		return fmt.Errorf("num_res_blocks is %d; it must be at least 1", c.NumResBlocks)
	case len(c.TemporalDownsample) != len(c.DimMult)-1:
		return fmt.Errorf("temperal_downsample has %d entries; dim_mult %v needs %d", len(c.TemporalDownsample), c.DimMult, len(c.DimMult)-1)
	case !c.IsResidual:
		return fmt.Errorf("is_residual is false: only the residual (Wan 2.2-style) autoencoder of Qwen-Image-2.1 is supported")
	case c.PatchSize != nil && *c.PatchSize > 1:
		return fmt.Errorf("patch_size is %d: patchified autoencoders are not supported", *c.PatchSize)
	case len(c.LatentsMean) != c.ZDim || len(c.LatentsStd) != c.ZDim:
		return fmt.Errorf("latents_mean has %d and latents_std %d entries; both need z_dim = %d", len(c.LatentsMean), len(c.LatentsStd), c.ZDim)
	}
	for _, m := range c.DimMult {
		if m <= 0 {
			return fmt.Errorf("dim_mult %v has a non-positive entry", c.DimMult)
		}
	}
	for i, s := range c.LatentsStd {
		if s == 0 {
			return fmt.Errorf("latents_std[%d] is 0", i)
		}
	}
	return nil
}

// Scale is the spatial compression: an image is Scale× the latent grid on each side (16).
func (c *Config) Scale() int { return 1 << (len(c.DimMult) - 1) }

// EncoderDims are the encoder's stage widths, base_dim·[1, dim_mult...] ([96, 96, 192, 384, 768, 768]).
func (c *Config) EncoderDims() []int {
	dims := []int{c.BaseDim}
	for _, m := range c.DimMult {
		dims = append(dims, c.BaseDim*m)
	}
	return dims
}

// DecoderDims are the decoder's stage widths, decoder_base_dim·[dim_mult[-1], reversed dim_mult...]
// ([1152, 1152, 1152, 576, 288, 144]).
func (c *Config) DecoderDims() []int {
	n := len(c.DimMult)
	dims := []int{c.DecoderBaseDim * c.DimMult[n-1]}
	for i := n - 1; i >= 0; i-- {
		dims = append(dims, c.DecoderBaseDim*c.DimMult[i])
	}
	return dims
}

// temporalUpsample is the decoder's per-stage temporal flag: temperal_downsample reversed.
func (c *Config) temporalUpsample() []bool {
	n := len(c.TemporalDownsample)
	up := make([]bool, n)
	for i, t := range c.TemporalDownsample {
		up[n-1-i] = t
	}
	return up
}
