// Package condimage prepares condition images the way the reference pipeline does (spec §2, §3.1–3.2,
// docs/reference/qi21-spec.md): the output and condition sizes (calculate_dimensions, smart_resize),
// a Pillow-exact Lanczos resize of the RGBA image, the VAE encoder's RGBA copy in [−1, 1], and the
// vision tower's patch rows of the image composited over white. It is arithmetic on pixels only:
// the pipeline, app/compose and the CLI size and prepare images with it without importing a
// network. The resampling is a hand-written port of Pillow's (not a general image library's),
// because reference parity needs its exact rounding.
package condimage
