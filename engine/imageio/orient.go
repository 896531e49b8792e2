package imageio

import "image"

// orient returns img turned upright for an EXIF orientation (1–8): 1 as is, 2 mirrored left–right,
// 3 rotated 180°, 4 mirrored top–bottom, 5 transposed (mirrored about the main diagonal),
// 6 rotated 90° clockwise, 7 transversed (mirrored about the anti-diagonal), 8 rotated 90°
// counter-clockwise — what Pillow's ImageOps.exif_transpose and photo viewers do.
func orient(img *image.NRGBA, orientation int) *image.NRGBA {
	if orientation < 2 || orientation > 8 {
		return img
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	ow, oh := w, h
	if orientation >= 5 {
		ow, oh = h, w
	}
	// source maps an output pixel to the stored pixel shown there.
	source := map[int]func(x, y int) (int, int){
		2: func(x, y int) (int, int) { return w - 1 - x, y },
		3: func(x, y int) (int, int) { return w - 1 - x, h - 1 - y },
		4: func(x, y int) (int, int) { return x, h - 1 - y },
		5: func(x, y int) (int, int) { return y, x },
		6: func(x, y int) (int, int) { return y, h - 1 - x },
		7: func(x, y int) (int, int) { return w - 1 - y, h - 1 - x },
		8: func(x, y int) (int, int) { return w - 1 - y, x },
	}[orientation]
	out := image.NewNRGBA(image.Rect(0, 0, ow, oh))
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			sx, sy := source(x, y)
			copy(out.Pix[out.PixOffset(x, y):out.PixOffset(x, y)+4], img.Pix[img.PixOffset(sx, sy):])
		}
	}
	return out
}
