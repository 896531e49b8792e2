package vae

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// publishedConfig is the real model's geometry with placeholder latent statistics.
func publishedConfig(t testing.TB) *Config {
	t.Helper()
	stats := "[" + strings.TrimSuffix(strings.Repeat("0.5,", 64), ",") + "]"
	cfg, err := ParseConfig([]byte(`{"latents_mean": ` + stats + `, "latents_std": ` + stats + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestConfigDefaultsAreThePublishedGeometry(t *testing.T) {
	cfg := publishedConfig(t)
	if got, want := cfg.EncoderDims(), []int{96, 96, 192, 384, 768, 768}; !slices.Equal(got, want) {
		t.Errorf("encoder dims %v, want %v", got, want)
	}
	if got, want := cfg.DecoderDims(), []int{1152, 1152, 1152, 576, 288, 144}; !slices.Equal(got, want) {
		t.Errorf("decoder dims %v, want %v", got, want)
	}
	if cfg.Scale() != 16 || cfg.ZDim != 64 || cfg.NumResBlocks != 2 {
		t.Errorf("scale %d, z_dim %d, num_res_blocks %d; want 16, 64, 2", cfg.Scale(), cfg.ZDim, cfg.NumResBlocks)
	}
	if got, want := cfg.temporalUpsample(), []bool{true, true, true, false}; !slices.Equal(got, want) {
		t.Errorf("temporal upsample %v, want %v", got, want)
	}
}

func TestConfigRejectsWhatItCannotRun(t *testing.T) {
	for _, js := range []string{
		`not json`,
		`{"is_residual": false}`,
		`{"latents_mean": [1, 2], "latents_std": [1, 2]}`,
		`{"patch_size": 2}`,
		`{"dim_mult": [1, 2], "temperal_downsample": [false, true, true]}`,
	} {
		if _, err := ParseConfig([]byte(js)); err == nil {
			t.Errorf("%s was accepted", js)
		}
	}
}

// TestPublishedConfigIsTheClassDefaults: the published config (engine/published) with neutral
// statistics is the class defaults' geometry, which plans made before a model is chosen use.
func TestPublishedConfigIsTheClassDefaults(t *testing.T) {
	stats := func(v string) string { return "[" + strings.TrimSuffix(strings.Repeat(v+",", 64), ",") + "]" }
	want, err := ParseConfig([]byte(`{"latents_mean": ` + stats("0") + `, "latents_std": ` + stats("1") + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := PublishedConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("published config %+v, want the class defaults %+v", got, want)
	}
}
