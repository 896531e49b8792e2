package condimage

import (
	"fmt"
	"image"
)

// PixelValues flattens an opaque RGB image (alpha ignored) into the vision tower's input rows
// (spec §3.2, §10.4), the Qwen2-VL processor's
//
//	patches[T, C, H, W].reshape(gt, T, C, gh/m, m, p, gw/m, m, p).transpose(0,3,6,4,7,2,1,5,8)
//
// with the single image repeated over the T = temporal_patch_size frames: one row per p×p patch,
// rows ordered by m×m merge window (row-major), then by patch within the window (row-major); each
// row holds C·T·p·p values ordered (channel, frame, y, x). Values are normalised per channel by
// the processor's lookup table. The grid is (t, h, w) = (1, H/p, W/p) in patches.
func PixelValues(img *image.NRGBA, p ImageProcessorConfig) (rows []float32, grid [3]int, err error) {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	ps, m, t := p.PatchSize, p.MergeSize, p.TemporalPatchSize
	if ps <= 0 || m <= 0 || t <= 0 {
		return nil, grid, fmt.Errorf("image processor has patch %d, merge %d, temporal patch %d: all must be positive", ps, m, t)
	}
	if w%(ps*m) != 0 || h%(ps*m) != 0 {
		return nil, grid, fmt.Errorf("image %d×%d is not a multiple of patch×merge = %d on both sides: resize it with SmartResize first", w, h, ps*m)
	}
	lut := p.normalizationTable()
	gh, gw := h/ps, w/ps
	rowLen := 3 * t * ps * ps
	rows = make([]float32, gh*gw*rowLen)
	r := 0
	for bh := 0; bh < gh/m; bh++ {
		for bw := 0; bw < gw/m; bw++ {
			for mh := 0; mh < m; mh++ {
				for mw := 0; mw < m; mw++ {
					y0, x0 := (bh*m+mh)*ps, (bw*m+mw)*ps
					row := rows[r*rowLen : (r+1)*rowLen]
					i := 0
					for c := 0; c < 3; c++ {
						for f := 0; f < t; f++ { // the same image in every frame
							for py := 0; py < ps; py++ {
								off := img.PixOffset(img.Rect.Min.X+x0, img.Rect.Min.Y+y0+py) + c
								for px := 0; px < ps; px++ {
									row[i] = lut[c][img.Pix[off+4*px]]
									i++
								}
							}
						}
					}
					r++
				}
			}
		}
	}
	return rows, [3]int{1, gh, gw}, nil
}
