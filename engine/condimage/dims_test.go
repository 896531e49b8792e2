package condimage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCalculateDimensions against Python's own calculate_dimensions (testdata/pillow/cases.json),
// including exact ties that round half to even (80² → 64, 144² → 128).
func TestCalculateDimensions(t *testing.T) {
	for _, c := range loadPillowCases(t).CalculateDimensions {
		w, h := CalculateDimensions(c.Area, c.Ratio)
		if [2]int{w, h} != c.Want {
			t.Errorf("CalculateDimensions(%g, %g) = %d×%d, Python gives %v", c.Area, c.Ratio, w, h, c.Want)
		}
	}
}

func TestConditionSizeRefusals(t *testing.T) {
	for _, tc := range []struct {
		w, h, res int
		says      string
	}{
		{0, 10, 1024, "at least one pixel"},
		{10, 10, 0, "not positive"},
		{4000, 10, 64, "too extreme"}, // 64² pixels over a 400:1 strip: the height rounds to 0
	} {
		if _, _, err := ConditionSize(tc.w, tc.h, tc.res); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("ConditionSize(%d, %d, %d): error %v, want one saying %q", tc.w, tc.h, tc.res, err, tc.says)
		}
	}
}

// TestSmartResize: the Qwen2-VL rule worked by hand from its definition (spec §3.2).
func TestSmartResize(t *testing.T) {
	for _, tc := range []struct {
		h, w, minPx, maxPx int
		wantH, wantW       int
	}{
		{64, 128, 1024, 16777216, 64, 128},          // multiples of 32 inside the bounds: unchanged
		{50, 70, 1024, 16777216, 64, 64},            // round(50/32)=2 (1.5625), round(70/32)=2 (2.1875)
		{48, 80, 1024, 16777216, 64, 64},            // 1.5 → 2 and 2.5 → 2: half to even
		{32, 32, 65536, 16777216, 256, 256},         // too small: β = √(65536/1024) = 8, ceil(32·8/32)·32
		{10000, 10000, 65536, 16777216, 4096, 4096}, // too large: β = 10000/4096, floor(4096/32)·32
	} {
		h, w, err := SmartResize(tc.h, tc.w, 32, tc.minPx, tc.maxPx)
		if err != nil || h != tc.wantH || w != tc.wantW {
			t.Errorf("SmartResize(%d, %d) = %d, %d, %v; want %d, %d", tc.h, tc.w, h, w, err, tc.wantH, tc.wantW)
		}
	}
	if _, _, err := SmartResize(10, 2010, 32, 1024, 16777216); err == nil || !strings.Contains(err.Error(), "aspect ratio above 200") {
		t.Errorf("SmartResize of a 201:1 image: error %v, want the reference's refusal", err)
	}
}

func TestLoadImageProcessorConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A top-level preprocessor_config.json with the older min/max_pixels keys.
	cfg, err := LoadImageProcessorConfig(write("preprocessor_config.json",
		`{"patch_size": 14, "merge_size": 2, "min_pixels": 3136, "max_pixels": 12845056, "image_mean": [0.48, 0.45, 0.40]}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PatchSize != 14 || cfg.MinPixels != 3136 || cfg.MaxPixels != 12845056 || cfg.ImageMean[2] != 0.40 ||
		cfg.TemporalPatchSize != 2 || cfg.ImageStd[0] != 0.5 {
		t.Errorf("parsed %+v", cfg)
	}
	for body, says := range map[string]string{
		`{"image_processor": {"image_mean": [0.5, 0.5]}}`: "image_mean has 2 values",
		`{"image_processor": {"patch_size": 0}}`:          "must all be positive",
		`{"image_processor": `:                            "not valid JSON",
	} {
		p := write("processor_config.json", body)
		if _, err := LoadImageProcessorConfig(p); err == nil || !strings.Contains(err.Error(), says) || !strings.Contains(err.Error(), p) {
			t.Errorf("config %s: error %v, want one naming the file and saying %q", body, err, says)
		}
	}
}
