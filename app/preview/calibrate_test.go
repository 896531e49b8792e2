package preview

import (
	"context"
	"image"
	"os"
	"path/filepath"
	"testing"

	"easel/assets/calibration"
	"easel/assets/calibration/calibimage"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/vae"
	"easel/internal/golden"
)

// heldOutSeeds draw pictures of the calibration kinds that are not in the calibration set.
var heldOutSeeds = []uint64{101, 102, 103, 104}

// The projection calibrated on the built-in pictures, through the golden tiny model's own VAE,
// predicts the decode of latents it never saw (other pictures' encodings) within 10 % of the best
// any affine map could do on those decodes (least squares fitted on them, in-sample).
func TestCalibrationIsNearTheHeldOutOptimum(t *testing.T) {
	ctx := context.Background()
	m, err := vae.Load(cpu.New(), openTinyVAE(t))
	if err != nil {
		t.Fatal(err)
	}
	pictures, err := calibration.Images()
	if err != nil {
		t.Fatal(err)
	}
	if want := len(calibimage.Seeds) * int(calibimage.NumKinds); len(pictures) != want {
		t.Fatalf("%d calibration pictures, want %d", len(pictures), want)
	}
	p, err := Calibrate(ctx, m, pictures)
	if err != nil {
		t.Fatal(err)
	}
	var held []*image.NRGBA
	for _, seed := range heldOutSeeds {
		for k := range calibimage.NumKinds {
			held = append(held, calibimage.Draw(k, seed, calibimage.Side, calibimage.Side))
		}
	}
	samples, err := CalibrationSamples(ctx, m, held)
	if err != nil {
		t.Fatal(err)
	}
	optimum, err := Fit(samples, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := p.PatchError(samples)
	best, _ := optimum.PatchError(samples)
	var constant Projection
	for k := range 4 {
		for _, s := range samples {
			constant.B[k] += s.RGBA[k] / float64(len(samples))
		}
	}
	flat, _ := constant.PatchError(samples)
	t.Logf("held-out RMS (8-bit levels, %d tokens): calibrated %.3f, least-squares optimum %.3f (ratio %.3f), best constant colour %.3f; calibration took %.1f s",
		len(samples), got, best, got/best, flat, p.Seconds)
	if got > 1.10*best {
		t.Errorf("calibrated projection's held-out RMS %.3f is more than 10%% above the optimum %.3f (ratio %.3f)", got, best, got/best)
	}
	if !p.Calibrated || p.Error.TrainRMS <= 0 {
		t.Errorf("calibrated %v, train RMS %g: the projection does not say how it was made", p.Calibrated, p.Error.TrainRMS)
	}
}

// The calibrator fits once per model: the second open finds the cached projection; a model file
// whose VAE changed is fitted again.
func TestCalibratorCachesPerModelFile(t *testing.T) {
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	model := filepath.Join(dir, "tiny.cmf")
	if _, err := convert.Convert(context.Background(), snap, model, convert.Options{Profile: convert.ProfileF16, NoVision: true}); err != nil {
		t.Fatal(err)
	}
	c := &Calibrator{Cache: Cache{Dir: filepath.Join(dir, "previews")}}
	open := func(what string, wantCached bool) *Projection {
		t.Helper()
		c.Start(model)
		if s, _, _, _ := c.State(); s != Calibrating {
			t.Fatalf("%s: status %v right after Start, want Calibrating", what, s)
		}
		c.Wait()
		s, p, cached, err := c.State()
		if s != Ready || err != nil || p == nil {
			t.Fatalf("%s: status %v, error %v", what, s, err)
		}
		if cached != wantCached {
			t.Fatalf("%s: from the cache %v, want %v", what, cached, wantCached)
		}
		if c.Note() != "" {
			t.Errorf("%s: note %q once ready", what, c.Note())
		}
		return p
	}
	first := open("first open", false)
	files, _ := filepath.Glob(filepath.Join(dir, "previews", "*.json"))
	if len(files) != 1 {
		t.Fatalf("cache holds %v, want one projection", files)
	}
	second := open("second open", true)
	if second.M != first.M {
		t.Error("the cached projection differs from the fitted one")
	}

	// The same path, rewritten with another VAE codec (cortiq stores it in f16).
	if err := os.Remove(model); err != nil {
		t.Fatal(err)
	}
	if _, err := convert.Convert(context.Background(), snap, model, convert.Options{Profile: convert.ProfileCortiq, NoVision: true}); err != nil {
		t.Fatal(err)
	}
	open("after the file changed", false)
	files, _ = filepath.Glob(filepath.Join(dir, "previews", "*.json"))
	if len(files) != 2 {
		t.Errorf("cache holds %v, want a projection per VAE", files)
	}

	// A file that is not a model fails with a message and previews stay grey.
	c.Start(filepath.Join(dir, "missing.cmf"))
	c.Wait()
	if s, p, _, err := c.State(); s != Failed || err == nil || p != nil {
		t.Errorf("missing file: status %v, projection %v, error %v", s, p, err)
	}
	if img := c.Render(make([]float32, 2*3*Channels), 2, 3); img == nil || img.Bounds().Dx() != 3 {
		t.Error("no neutral preview after a failed calibration")
	}
}
