package condimage

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"easel/engine/imageio"
	"easel/internal/golden"
)

// imageprocAbsDiff is the largest and the mean absolute difference between got and want.
func imageprocAbsDiff(got, want []float32) (maxAbs, meanAbs float64) {
	for i := range want {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if d > maxAbs || math.IsNaN(d) {
			maxAbs = d
		}
		meanAbs += d
	}
	return maxAbs, meanAbs / float64(len(want))
}

// conditionShapes reads the first batch entry of a case's img_shapes metadata, or nil.
func conditionShapes(meta map[string]any) [][3]int {
	batches, _ := meta["img_shapes"].([]any)
	if len(batches) == 0 {
		return nil
	}
	entries, _ := batches[0].([]any)
	var shapes [][3]int
	for _, e := range entries {
		dims, _ := e.([]any)
		var s [3]int
		for i := 0; i < len(dims) && i < 3; i++ {
			v, _ := dims[i].(float64)
			s[i] = int(v)
		}
		shapes = append(shapes, s)
	}
	return shapes
}

// TestGoldenImageProcessor prepares every condition image of every pipeline case from its PNG and
// compares with what the reference fed its encoders. The resize is a port of Pillow's, so the
// measured difference is zero and the test asserts equality: any difference is a bug.
func TestGoldenImageProcessor(t *testing.T) {
	paths, err := golden.Cases("pipeline")
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	proc, err := LoadImageProcessorConfig(filepath.Join(snapshot, "processor", "processor_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := c.Meta["cond_images"].([]any)
		if len(names) == 0 {
			c.Close()
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			defer c.Close()
			tested++
			res, ok := c.Meta["res"].(float64)
			if !ok {
				t.Fatalf("case %s has no numeric \"res\" in its metadata", c.Name)
			}
			shapes := conditionShapes(c.Meta)
			var rows []float32
			var grids []int64
			for k, name := range names {
				fileName, _ := name.(string)
				file, err := golden.Path(fileName)
				if err != nil {
					t.Fatal(err)
				}
				img, err := imageio.Load(file)
				if err != nil {
					t.Fatal(err)
				}
				ci, err := PrepareConditionImage(img, int(res), proc)
				if err != nil {
					t.Fatal(err)
				}
				// img_shapes lists each condition image as (1, Hc/16, Wc/16), then the target.
				if got := [3]int{1, ci.Height / 16, ci.Width / 16}; k >= len(shapes) || got != shapes[k] {
					t.Errorf("condition %d: latent shape %v, reference img_shapes %v", k, got, shapes)
				}
				want, shape, err := c.Float32s(fmt.Sprintf("vae_encode_input_%d", k))
				if err != nil {
					t.Fatal(err)
				}
				if shape[3] != ci.Height || shape[4] != ci.Width {
					t.Fatalf("condition %d: VAE input %d×%d, reference %v", k, ci.Width, ci.Height, shape)
				}
				maxAbs, meanAbs := imageprocAbsDiff(ci.VAEInput, want)
				t.Logf("condition %d (%s): %d×%d → %d×%d; VAE input max |Δ| %g, mean %g",
					k, name, img.Rect.Dx(), img.Rect.Dy(), ci.Width, ci.Height, maxAbs, meanAbs)
				if maxAbs != 0 {
					t.Errorf("condition %d: VAE input differs from the reference: max |Δ| %g, mean %g", k, maxAbs, meanAbs)
				}
				rows = append(rows, ci.PixelValues...)
				for _, g := range ci.GridTHW {
					grids = append(grids, int64(g))
				}
			}
			for _, prefix := range []string{"te0_", "te1_"} {
				if !c.Has(prefix + "pixel_values") {
					continue
				}
				wantGrid, _, err := c.Int64s(prefix + "image_grid_thw")
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(grids) != fmt.Sprint(wantGrid) {
					t.Errorf("%simage_grid_thw %v, reference %v", prefix, grids, wantGrid)
				}
				want, shape, err := c.Float32s(prefix + "pixel_values")
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != len(want) || shape[1] != proc.PatchRowLength() {
					t.Fatalf("%spixel_values: %d values in rows of %d, reference %v", prefix, len(rows), proc.PatchRowLength(), shape)
				}
				maxAbs, meanAbs := imageprocAbsDiff(rows, want)
				t.Logf("%spixel_values %v: max |Δ| %g, mean %g", prefix, shape, maxAbs, meanAbs)
				if maxAbs != 0 {
					t.Errorf("%spixel_values differ from the reference: max |Δ| %g, mean %g", prefix, maxAbs, meanAbs)
				}
			}
		})
	}
	if tested == 0 {
		t.Skip("no pipeline case with condition images in the golden directory")
	}
}
