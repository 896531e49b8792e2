package pipeline

import (
	"context"
	"image"
	"image/color"
	"slices"
	"testing"

	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/vae"
	"easel/internal/golden"
)

// The pipeline encodes a start image (and a condition image) in one piece when the planned
// activations fit a quarter of the device budget — bit for bit the untiled encoder — and in the
// tiles vae.ChooseEncodeTiling picks against that quarter when they do not.
func TestEncodeChoosesTilingFromTheBudget(t *testing.T) {
	path := tinyModel(t)
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	be := cpu.New()
	ref, err := vae.Load(be, f)
	if err != nil {
		t.Fatal(err)
	}
	const H, W = 192, 256 // 12×16 latents
	pic := image.NewNRGBA(image.Rect(0, 0, W, H))
	for y := range H {
		for x := range W {
			pic.SetNRGBA(x, y, color.NRGBA{uint8(x), uint8(y), uint8((x * y) % 251), 255})
		}
	}
	img := vae.FromNRGBA(pic)
	whole, err := ref.PlanEncode(H, W)
	if err != nil {
		t.Fatal(err)
	}
	_, exact, err := ref.Encode(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		budget int64
		tiled  bool
	}{
		{"fits", 4 * whole.PeakActivationBytes, false},
		{"tight", 4 * (whole.PeakActivationBytes - 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(f, budgetBackend{be, tc.budget}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := exact
			if tc.tiled {
				tiling, _, err := ref.ChooseEncodeTiling(H, W, tc.budget/4)
				if err != nil || tiling == nil {
					t.Fatalf("the reference chose tiling %v (%v) for a budget below the one-piece plan", tiling, err)
				}
				if _, want, err = ref.EncodeTiled(context.Background(), img, *tiling); err != nil {
					t.Fatal(err)
				}
				if golden.MaxAbsErr(want.Data, exact.Data) == 0 {
					t.Fatal("the tiled reference is the one-piece encode: the test cannot tell them apart")
				}
			}
			start, err := p.encodeInit(context.Background(), pic, H/16, W/16)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(start, want.Tokens()) {
				t.Errorf("start image: differs from the expected encode (tiled %v) by up to %g", tc.tiled, golden.MaxAbsErr(start, want.Tokens()))
			}
			cond, shapes, err := p.EncodeConditionImages(context.Background(), []*vae.Image{img})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cond, want.Tokens()) || len(shapes) != 1 || shapes[0] != [2]int{H / 16, W / 16} {
				t.Errorf("condition image: shapes %v, differs from the expected encode (tiled %v) by up to %g", shapes, tc.tiled, golden.MaxAbsErr(cond, want.Tokens()))
			}
		})
	}
}
