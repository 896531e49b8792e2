package hires

import (
	"image"
	"image/color"
	"strings"
	"testing"
	"time"

	"easel/app/memplan"
)

func TestSizeScalesSnapsAndCaps(t *testing.T) {
	for _, c := range []struct {
		w, h   int
		f      float64
		ww, wh int
	}{
		{256, 256, 2, 512, 512},
		{1024, 1024, 1.5, 1536, 1536},
		{1024, 1024, 2, 2048, 2048},
		{1664, 928, 2, 2048, 1142 / 32 * 32}, // capped at 2048 on the long side, aspect kept
		{1536, 1536, 2, 2048, 2048},
		{320, 224, 1.5, 480, 320}, // 336 floored to a multiple of 32
	} {
		w, h, err := Size(c.w, c.h, c.f)
		if err != nil || w != c.ww || h != c.wh {
			t.Errorf("%d×%d ×%g = %d×%d (%v), want %d×%d", c.w, c.h, c.f, w, h, err, c.ww, c.wh)
		}
	}
	if _, _, err := Size(2048, 2048, 2); err == nil {
		t.Error("a 2048² image was offered a larger pass")
	}
	if _, _, err := Size(512, 512, 1); err == nil {
		t.Error("factor 1 accepted")
	}
}

func TestStepsAreImg2imgsCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		s    float64
		want int
	}{{40, 0.35, 14}, {8, 0.35, 3}, {4, 0.5, 2}, {20, 1, 20}, {10, 0.05, 1}, {3, 0.1, 1}} {
		// n − int(n − n·s)
		if got := Steps(c.n, c.s); got != c.want {
			t.Errorf("Steps(%d, %g) = %d, want %d", c.n, c.s, got, c.want)
		}
	}
}

func TestResizeIsLanczosToTheSize(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 13)
	}
	img.SetNRGBA(0, 0, color.NRGBA{255, 0, 0, 255})
	out := Resize(img, 48, 64)
	if out.Rect.Dx() != 48 || out.Rect.Dy() != 64 {
		t.Fatalf("size %v", out.Rect)
	}
}

func TestPlanSaysFitTimeAndASmallerFactor(t *testing.T) {
	g := memplan.PublishedGeometry()
	base := memplan.Plan{Width: 1024, Height: 1024, PromptBytes: 40}
	// A budget where ×2 (2048²) does not fit and ×1.5 (1536²) does, each as the second pass runs:
	// starting from the finished image, which the VAE encodes at that size.
	var budget int64
	for b := int64(6e9); b < 40e9; b += 5e8 {
		if !memplan.Predict(g, memplan.Plan{Width: 2048, Height: 2048, PromptBytes: 40, Init: true}, b).Fits() &&
			memplan.Predict(g, memplan.Plan{Width: 1536, Height: 1536, PromptBytes: 40, Init: true}, b).Fits() {
			budget = b
			break
		}
	}
	if budget == 0 {
		t.Fatal("no budget separates 1536² from 2048²")
	}
	o, err := Plan(g, base, budget, 2, DefaultStrength, 40, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if o.Fits() || o.Smaller != 1.75 && o.Smaller != 1.5 || o.Width != 2048 || o.Steps != 14 {
		t.Fatalf("offer %+v", o)
	}
	if want := 4 * 10 * time.Second * 14; o.Expected != want {
		t.Errorf("expected %v, want %v (14 steps at four times the 1024² step)", o.Expected, want)
	}
	if d := o.Describe(); !strings.Contains(d, "does not fit") || !strings.Contains(d, "fits.") {
		t.Errorf("describe %q", d)
	}
	o, err = Plan(g, base, 0, 1.5, DefaultStrength, 40, 0)
	if err != nil || !o.Fits() || o.Expected != 0 || !strings.Contains(o.Describe(), "fits (peak") {
		t.Errorf("unknown budget: %+v, %v", o, err)
	}
	if _, err := Plan(g, base, 0, 2, 0, 40, 0); err == nil {
		t.Error("strength 0 accepted")
	}
}

// A ×2 pass over a 1024² image starts from a 2048² image, whose one-piece VAE encode (13.0 GB on
// the CPU with the heap's headroom) would set the pass's peak; the pipeline encodes it in tiles
// when that does not fit its quarter of the budget, and the planner counts it so: from the
// smallest budget where the pass fits, the encoder is not the stage that decides. The budgets go
// to docs/BENCHMARKS.md ("VAE"): go test ./app/hires -run TestTheStartImageEncodeDoesNotLimitTheSecondPass -v
func TestTheStartImageEncodeDoesNotLimitTheSecondPass(t *testing.T) {
	g := memplan.PublishedGeometry()
	for _, metal := range []bool{false, true} {
		base := memplan.Plan{Width: 1024, Height: 1024, PromptBytes: 40, Metal: metal}
		// the smallest budget (to 0.1 GB) where the pass fits, by bisection: each budget is new
		// dry runs of the VAE's tiling choices at 2048²
		lo, hi := int64(4e9), int64(40e9)
		if !predictAt(g, base, hi, 2048, 2048).Fits() {
			t.Fatalf("metal %v: ×2 fits no budget up to 40 GB", metal)
		}
		for hi-lo > 1e8 {
			if mid := (lo + hi) / 2; predictAt(g, base, mid, 2048, 2048).Fits() {
				hi = mid
			} else {
				lo = mid
			}
		}
		fits := hi
		o, err := Plan(g, base, fits, 2, DefaultStrength, 40, 0)
		if err != nil || !o.Fits() || o.Width != 2048 {
			t.Fatalf("metal %v: the ×2 offer at %d bytes: %+v, %v", metal, fits, o, err)
		}
		largest := o.Prediction.Largest()
		t.Logf("metal %v: ×2 (%d×%d) fits from a %.1f GB budget: peak %s, set by the %s stage", metal, o.Width, o.Height, float64(fits)/1e9, memplan.GB(o.Prediction.Peak), largest.Name)
		if largest.Name == "VAE encoder" {
			t.Errorf("metal %v: the VAE encoder (%s) sets the second pass's peak", metal, memplan.GB(largest.Total()))
		}
	}
}
