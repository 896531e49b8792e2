package condimage

import "image"

// CompositeOverWhite is the vision copy's alpha handling (spec §3.1 step 3): the RGBA image pasted
// onto a white RGB canvas through its own alpha, as Pillow's
// white.paste(img, mask=img.getchannel("A")) does it: per channel
// out = (255·(255 − a) + c·a) / 255, rounded with Pillow's integer DIV255. The result is opaque.
func CompositeOverWhite(img *image.NRGBA) *image.NRGBA {
	src := packedNRGBA(img)
	for i := 0; i < len(src.Pix); i += 4 {
		a := uint32(src.Pix[i+3])
		for c := 0; c < 3; c++ {
			src.Pix[i+c] = pillowDiv255(255*(255-a) + uint32(src.Pix[i+c])*a)
		}
		src.Pix[i+3] = 255
	}
	return src
}

// pillowDiv255 is Pillow's DIV255: v/255 rounded, for v ≤ 255·255.
func pillowDiv255(v uint32) uint8 {
	t := v + 128
	return uint8(((t >> 8) + t) >> 8)
}
