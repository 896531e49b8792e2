package condimage

import (
	"encoding/json"
	"image"
	"os"
	"path/filepath"
	"testing"

	"easel/engine/imageio"
)

// pillowCases is testdata/pillow/cases.json: resizes and sizes computed by Pillow and Python
// themselves (see make_fixtures.py there), covering what the golden pipeline case does not:
// downscaling (support widened by the scale), one axis only, extreme reduction, and BICUBIC.
type pillowCases struct {
	Pillow string `json:"pillow"`
	Source string `json:"source"`
	Resize []struct {
		Size        [2]int `json:"size"`
		Lanczos     string `json:"lanczos"`
		White       string `json:"white"`
		BicubicSize [2]int `json:"bicubic_size"`
		Bicubic     string `json:"bicubic"`
	} `json:"resize"`
	CalculateDimensions []struct {
		Area  float64 `json:"area"`
		Ratio float64 `json:"ratio"`
		Want  [2]int  `json:"want"`
	} `json:"calculate_dimensions"`
}

func loadPillowCases(t *testing.T) pillowCases {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "pillow", "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c pillowCases
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func loadPillowImage(t *testing.T, name string) *image.NRGBA {
	t.Helper()
	img, err := imageio.Load(filepath.Join("testdata", "pillow", name))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// pillowByteDiffs is how many bytes differ between two images of the same size, and the largest gap.
func pillowByteDiffs(t *testing.T, got, want *image.NRGBA) (n, maxGap int) {
	t.Helper()
	if got.Rect.Size() != want.Rect.Size() {
		t.Fatalf("size %v, want %v", got.Rect.Size(), want.Rect.Size())
	}
	for i := range want.Pix {
		if d := int(got.Pix[i]) - int(want.Pix[i]); d != 0 {
			n++
			maxGap = max(maxGap, d, -d)
		}
	}
	return n, maxGap
}

// TestResizeMatchesPillow: ResizePillow (LANCZOS, RGBA), CompositeOverWhite and the RGB BICUBIC
// resize reproduce Pillow byte for byte, up and down, on one axis and both.
func TestResizeMatchesPillow(t *testing.T) {
	cases := loadPillowCases(t)
	src := loadPillowImage(t, cases.Source)
	for _, c := range cases.Resize {
		lanczos := ResizePillow(src, c.Size[0], c.Size[1], LanczosFilter)
		if n, gap := pillowByteDiffs(t, lanczos, loadPillowImage(t, c.Lanczos)); n != 0 {
			t.Errorf("%v LANCZOS: %d bytes differ from Pillow %s (largest gap %d)", c.Size, n, cases.Pillow, gap)
		}
		white := CompositeOverWhite(lanczos)
		if n, gap := pillowByteDiffs(t, white, loadPillowImage(t, c.White)); n != 0 {
			t.Errorf("%v over white: %d bytes differ from Pillow (largest gap %d)", c.Size, n, gap)
		}
		bicubic := resizePillow(white, c.BicubicSize[0], c.BicubicSize[1], BicubicFilter, false)
		if n, gap := pillowByteDiffs(t, bicubic, loadPillowImage(t, c.Bicubic)); n != 0 {
			t.Errorf("%v → %v BICUBIC (RGB): %d bytes differ from Pillow (largest gap %d)", c.Size, c.BicubicSize, n, gap)
		}
	}
}

// TestResizeSameSizeIsACopy: like Image.resize, an unchanged size returns the pixels untouched
// (no premultiplication round trip, which would lose colour under low alpha).
func TestResizeSameSizeIsACopy(t *testing.T) {
	src := loadPillowImage(t, loadPillowCases(t).Source)
	got := ResizePillow(src, src.Rect.Dx(), src.Rect.Dy(), LanczosFilter)
	if n, _ := pillowByteDiffs(t, got, src); n != 0 {
		t.Errorf("same-size resize changed %d bytes", n)
	}
	got.Pix[0]++
	if src.Pix[0] == got.Pix[0] {
		t.Error("same-size resize returned the source's pixels, not a copy")
	}
}
