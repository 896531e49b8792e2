package vae

import "easel/engine/published"

// PlanDecodeFor is the cost of decoding an h×w latent grid in one piece with a model of geometry
// cfg on the CPU backend, without any weights: how the preview's sharp mode and calibration
// estimate the published model's work from its config.
func PlanDecodeFor(cfg *Config, h, w int) (Plan, error) { return planDecode(cfg, h, w, nil) }

// PlanEncodeFor is the cost of encoding an H×W image in one piece with a model of geometry cfg.
func PlanEncodeFor(cfg *Config, H, W int) (Plan, error) { return planEncode(cfg, H, W, nil) }

// PublishedConfig is the published model's geometry (engine/published's vae/config.json, spec
// §8.1) with neutral latent statistics (mean 0, std 1); only for plans.
func PublishedConfig() *Config {
	cfg, err := ParseConfig(published.File(published.VAEPath))
	if err != nil {
		panic("vae: the published config does not validate: " + err.Error())
	}
	cfg.LatentsMean = make([]float32, cfg.ZDim)
	cfg.LatentsStd = make([]float32, cfg.ZDim)
	for i := range cfg.LatentsStd {
		cfg.LatentsStd[i] = 1
	}
	return cfg
}
