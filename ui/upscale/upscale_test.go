package upscale

import (
	"context"
	"image"
	"path/filepath"
	"testing"
	"time"

	"easel/app/hires"
	"easel/app/history"
	"easel/app/imagefile"
	"easel/app/memplan"
	"easel/app/upscalers"
	"easel/engine/upscale"
)

// A Lanczos upscale from the gallery is hires.Resize's picture, saved in the history with the
// source's recipe and "Lanczos" as its upscaler at the asked factor.
func TestRunWithLanczosSavesTheResize(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 30, 20))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 13)
	}
	store := history.New(t.TempDir())
	set := &imagefile.Settings{Prompt: "a kingfisher", Seed: 11, Width: 30, Height: 20}
	res, err := Run(context.Background(), Job{Image: img, Set: set, Factor: 1.5}, store, time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := hires.Resize(img, 45, 30)
	if string(res.Image.Pix) != string(want.Pix) || res.Image.Rect != want.Rect {
		t.Fatal("the Lanczos upscale is not hires.Resize's picture")
	}
	md, err := imagefile.ReadFile(res.Entry.Path)
	if err != nil {
		t.Fatal(err)
	}
	if md.Settings == nil || md.Settings.Prompt != "a kingfisher" || md.Settings.Upscale == nil ||
		*md.Settings.Upscale != (imagefile.UpscaleSettings{Upscaler: "Lanczos", Factor: 1.5, Width: 45, Height: 30}) {
		t.Fatalf("the PNG records %+v", md.Settings)
	}
	if filepath.Dir(res.Entry.Path) != store.Folder || len(store.Session()) != 1 {
		t.Errorf("saved at %s; the session lists %d", res.Entry.Path, len(store.Session()))
	}
	if set.Upscale != nil {
		t.Error("the source's recipe was changed")
	}
}

// A cancelled upscale saves nothing.
func TestRunCancelledSavesNothing(t *testing.T) {
	r, err := upscalers.Open(filepath.Join("..", "..", "testdata", "golden", "upscale_rrdb_x2.pth"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	store := history.New(t.TempDir())
	if _, err := Run(ctx, Job{Image: img, Factor: 2, Runner: r}, store, time.Now()); err == nil {
		t.Fatal("a cancelled upscale succeeded")
	}
	if len(store.Session()) != 0 {
		t.Error("a cancelled upscale was saved")
	}
}

// The prediction is of the largest pass: a ×2 network asked for ×4 runs twice, the second pass
// over the picture at twice its size; asked for ×2 it runs once.
func TestPredictCountsTheLargestPass(t *testing.T) {
	cfg := &upscale.Config{Arch: upscale.RRDBNet, Scale: 2, Layout: "basicsr", Features: 64, Growth: 32, Blocks: 23, Unshuffle: 2, Ups: 2}
	at := func(w, h int) memplan.UpscalePrediction {
		return memplan.PredictUpscale(cfg, w, h, upscale.ChooseTiling(cfg, w, h, upscale.DefaultBudget), false, 16e9)
	}
	if got, want := Predict(cfg, 512, 256, 4, false, 16e9), at(1024, 512); got != want {
		t.Errorf("×4 with a ×2 network: predicted %+v, want the second pass's %+v", got, want)
	}
	if got, want := Predict(cfg, 512, 256, 2, false, 16e9), at(512, 256); got != want {
		t.Errorf("×2 with a ×2 network: predicted %+v, want the one pass's %+v", got, want)
	}
}
