package vae

import "strings"

// PlanDecodeFor is the cost of decoding an h×w latent grid in one piece with a model of geometry
// cfg on the CPU backend, without any weights: how the preview's sharp mode and calibration
// estimate the published model's work from its config.
func PlanDecodeFor(cfg *Config, h, w int) (Plan, error) { return planDecode(cfg, true, h, w, nil) }

// PlanEncodeFor is the cost of encoding an H×W image with a model of geometry cfg.
func PlanEncodeFor(cfg *Config, H, W int) (Plan, error) { return planEncode(cfg, true, H, W) }

// PublishedConfig is the published model's geometry (the class defaults, spec §8.1) with neutral
// latent statistics (mean 0, std 1); only for plans.
func PublishedConfig() *Config {
	stats := func(v string) string { return "[" + strings.TrimSuffix(strings.Repeat(v+",", 64), ",") + "]" }
	cfg, err := ParseConfig([]byte(`{"latents_mean": ` + stats("0") + `, "latents_std": ` + stats("1") + `}`))
	if err != nil {
		panic("vae: the published defaults do not validate: " + err.Error())
	}
	return cfg
}
