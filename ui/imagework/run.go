package imagework

import (
	"context"
	"slices"
	"sync"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/jobs"
	"easel/engine/pipeline"

	"easel/ui/model"
)

// JobDraft is the draft a run is made from: the recipe d, with the canvas document's start image
// (when there is one) as compose.Start — the painted mask (none when nothing is painted: the whole
// image is reworked), the strength, the feather as the mask's blur, the grow, the extension, the
// crop's place when the size does not follow the image — and the size following the image when
// the artist chose so or extends the canvas (compose's Job prepares it as the CLI's, and
// FileSettings records it).
func JobDraft(d compose.Draft, doc model.Canvas) compose.Draft {
	if doc.Start == nil {
		return d
	}
	e := doc.Extend
	st := &compose.Start{Name: doc.Start.Image.Name, SHA256: doc.Start.Image.SHA256, Image: doc.Start.Image.Image, Strength: doc.RunStrength(),
		MaskBlur: float64(doc.Feather), MaskGrow: doc.Grow, MaskCrop: doc.Extras.MaskCrop, CropPadding: doc.Extras.CropPadding,
		DiscardOriginal: doc.Extras.DiscardOriginal, Extend: imagework.Margins{Left: e[model.SideLeft], Top: e[model.SideTop], Right: e[model.SideRight], Bottom: e[model.SideBottom]}}
	if !doc.Start.Mask.Empty() {
		st.Mask, st.MaskName = doc.Start.Mask.Clone(), "painted in the window"
	}
	d.Start = st
	if doc.Follows() {
		d.Size = compose.SizeFromImage // with a start image: the size follows it
	} else {
		st.CropOffset = doc.CropOffset // where the frame put the crop
	}
	return d
}

// Finishing runs jobs on the window's generator and pastes a run that started from an image
// back into its canvas (compose.Job.Finish), so the image shown and saved keeps the
// original outside the mask, as the CLI's does.
type Finishing struct {
	jobs.Generator
	mu       sync.Mutex
	prepared map[*pipeline.InitImage]*compose.Job
}

// Expect records how to finish the run of a request with this init image.
func (f *Finishing) Expect(in *pipeline.InitImage, p *compose.Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prepared == nil {
		f.prepared = map[*pipeline.InitImage]*compose.Job{}
	}
	f.prepared[in] = p
}

// Expected reports whether a run with this init image is waiting to be finished.
func (f *Finishing) Expected(in *pipeline.InitImage) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.prepared[in]
	return ok
}

// Forget drops what Expect recorded (a job that was never submitted).
func (f *Finishing) Forget(in *pipeline.InitImage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.prepared, in)
}

// Run runs req on the generator and, when Expect recorded its init image, pastes its images
// back into the start image.
func (f *Finishing) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	var p *compose.Job
	if req.Init != nil {
		f.mu.Lock()
		p = f.prepared[req.Init]
		delete(f.prepared, req.Init)
		f.mu.Unlock()
	}
	res, err := f.Generator.Run(ctx, req, events)
	if err != nil || p == nil || res == nil {
		return res, err
	}
	// A batch's images all came from the same start image: each is pasted back.
	all := res.Batch
	if !slices.Contains(all, res) {
		all = append([]*pipeline.Result{res}, all...)
	}
	for _, r := range all {
		if r == nil || r.Image == nil {
			continue
		}
		img, err := p.Finish(r)
		if err != nil {
			return nil, err
		}
		r.Image, r.Width, r.Height = img, img.Rect.Dx(), img.Rect.Dy()
	}
	return res, nil
}
