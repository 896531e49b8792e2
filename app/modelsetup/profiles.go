package modelsetup

import "easel/engine/convert"

// ProfileSummary is one line about a conversion profile, for people choosing one.
func ProfileSummary(p convert.Profile) string {
	switch p {
	case convert.ProfileQ8:
		return "8-bit denoiser: about twice the denoiser's size, a quarter of its rounding error; needs more memory."
	case convert.ProfileF16:
		return "Full precision, exactly as published: the largest file (about as big as the snapshot); for comparisons."
	}
	return "Recommended. 4-bit denoiser, 8-bit text encoder: the smallest file and the least memory (cortiq's own choice)."
}
