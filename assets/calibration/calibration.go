// Package calibration holds the pictures the live preview is calibrated on: one per kind of
// assets/calibration/calibimage for each of its Seeds, Side×Side pixels, drawn by tools/mkcalib (generated
// procedurally by Easel's own tool — no third-party images, no licence question). app/preview
// encodes them with the opened model's VAE to fit its latent → RGBA projection.
package calibration

import (
	"embed"
	"fmt"
	"image"
	"image/draw"
	"image/png"

	"easel/assets/calibration/calibimage"
)

//go:embed *.png
var files embed.FS

// Images decodes the committed set, in kind order for each seed.
func Images() ([]*image.NRGBA, error) {
	var out []*image.NRGBA
	for _, seed := range calibimage.Seeds {
		for k := range calibimage.NumKinds {
			name := calibimage.FileName(k, seed)
			f, err := files.Open(name)
			if err != nil {
				return nil, fmt.Errorf("calibration picture %s is missing (run go run ./tools/mkcalib): %w", name, err)
			}
			img, err := png.Decode(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("calibration picture %s: %w", name, err)
			}
			n, ok := img.(*image.NRGBA)
			if !ok {
				n = image.NewNRGBA(img.Bounds())
				draw.Draw(n, n.Rect, img, img.Bounds().Min, draw.Src)
			}
			out = append(out, n)
		}
	}
	return out, nil
}
