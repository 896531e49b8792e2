package cli

import (
	"fmt"

	"easel/app/compose"
	"easel/app/imagework"
)

// extendedCanvasSize enforces that an extended canvas sets the size (the README's rule): the
// start image grown by --extend is the image, so a --size or --aspect that would cover-crop the
// extension away is refused with both sizes named; a --size equal to the canvas (each side
// floored to a multiple of 32, as the size follows an image) is accepted.
func extendedCanvasSize(d *compose.Draft, st *compose.Start, extend string) *failure {
	b := st.Image.Rect
	cw, ch := b.Dx()+st.Extend.Left+st.Extend.Right, b.Dy()+st.Extend.Top+st.Extend.Bottom
	fw, fh := imagework.SizeFollowing(cw, ch, compose.SizeMultiple)
	if d.Ratio != 0 {
		return fail(ExitSize, "--aspect and --extend %s both given: the extended canvas (%d×%d, made %d×%d) sets the size: leave --aspect out", extend, cw, ch, fw, fh)
	}
	if d.Size != compose.SizeExact {
		return nil
	}
	gw, gh := d.CustomW/compose.SizeMultiple*compose.SizeMultiple, d.CustomH/compose.SizeMultiple*compose.SizeMultiple
	if gw != fw || gh != fh {
		return fail(ExitSize, "--size %dx%d and --extend %s disagree: the start image (%d×%d) extended is a %d×%d canvas (made %d×%d), which sets the size; leave --size out or give --size %dx%d",
			d.CustomW, d.CustomH, extend, b.Dx(), b.Dy(), cw, ch, fw, fh, fw, fh)
	}
	return nil
}

// sizeNotices say when the command line's size is not the one made: the CLI keeps its own rule
// (each side of --size floored to a multiple of 32; the API renders larger and crops instead),
// and says so.
func sizeNotices(d *compose.Draft) []string {
	if d.Size != compose.SizeExact {
		return nil
	}
	w, h := d.CustomW/compose.SizeMultiple*compose.SizeMultiple, d.CustomH/compose.SizeMultiple*compose.SizeMultiple
	if w == d.CustomW && h == d.CustomH {
		return nil
	}
	return []string{fmt.Sprintf("--size %dx%d is made %d×%d: each side is floored to a multiple of %d, the sizes the model makes", d.CustomW, d.CustomH, w, h, compose.SizeMultiple)}
}
