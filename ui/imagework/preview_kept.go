package imagework

import (
	"image"
	"sync"

	"github.com/disintegration/imaging"

	"easel/app/jobs"
	"easel/engine/pipeline"
)

// KeptArea makes a run's live previews show what its mask keeps as the original: the preview
// (the model's guess, or a sharp decode) is blended with the start image through the mask, so
// only the area being repainted changes step by step, as the saved image will. The start image
// and the mask are the run's own (at the output size); they are scaled to each preview's size
// once and kept. Its methods may run on any goroutine.
type KeptArea struct {
	init *image.NRGBA
	mask *image.Gray

	mu     sync.Mutex
	scaled map[image.Point]keptAt
}

// keptAt is the start image and the mask at one preview size.
type keptAt struct {
	init *image.NRGBA
	mask *image.Gray
}

// newKeptArea is the kept area of a request, or nil when it keeps nothing (no start image, or
// no mask: the whole picture is reworked).
func newKeptArea(r pipeline.Request) *KeptArea {
	if r.Init == nil || r.Init.Image == nil || r.Init.Mask == nil {
		return nil
	}
	return &KeptArea{init: r.Init.Image, mask: r.Init.Mask, scaled: map[image.Point]keptAt{}}
}

// at is the start image and the mask scaled to w×h (area-averaged, so a thin kept border does
// not vanish at preview scale).
func (k *KeptArea) at(w, h int) keptAt {
	k.mu.Lock()
	defer k.mu.Unlock()
	key := image.Pt(w, h)
	if s, ok := k.scaled[key]; ok {
		return s
	}
	s := keptAt{init: imaging.Resize(k.init, w, h, imaging.Box), mask: grayOfNRGBA(imaging.Resize(k.mask, w, h, imaging.Box))}
	k.scaled[key] = s
	return s
}

// Over is the preview with the kept area put back: each pixel is m·preview + (1 − m)·original,
// m the mask's value there (1 where the mask repaints).
func (k *KeptArea) Over(preview image.Image) *image.NRGBA {
	b := preview.Bounds()
	s := k.at(b.Dx(), b.Dy())
	out := imaging.Clone(preview) // NRGBA at the origin
	for y := range b.Dy() {
		for x := range b.Dx() {
			m := uint32(s.mask.Pix[s.mask.PixOffset(x, y)])
			i, j := out.PixOffset(x, y), s.init.PixOffset(x, y)
			for c := range 4 {
				out.Pix[i+c] = uint8((uint32(out.Pix[i+c])*m + uint32(s.init.Pix[j+c])*(255-m) + 127) / 255)
			}
		}
	}
	return out
}

// grayOfNRGBA takes the first channel of a resized grey picture (imaging returns NRGBA).
func grayOfNRGBA(img *image.NRGBA) *image.Gray {
	g := image.NewGray(img.Rect)
	for i := range g.Pix {
		g.Pix[i] = img.Pix[4*i]
	}
	return g
}

// PreviewAreas are the kept areas of the runs under way, by their start image (the request's
// Init, which every update of a job carries). Used from the queue's goroutine.
type PreviewAreas struct {
	mu    sync.Mutex
	areas map[*pipeline.InitImage]*KeptArea
}

// Of is the kept area of u's job (nil: none); it is forgotten once the job has finished.
func (k *PreviewAreas) Of(u jobs.Update) *KeptArea {
	in := u.Job.Request.Init
	if in == nil || in.Mask == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if u.Event == nil && u.Job.State.Finished() {
		delete(k.areas, in)
		return nil
	}
	a, ok := k.areas[in]
	if !ok {
		if k.areas == nil {
			k.areas = map[*pipeline.InitImage]*KeptArea{}
		}
		a = newKeptArea(u.Job.Request)
		k.areas[in] = a
	}
	return a
}
