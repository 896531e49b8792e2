package ui

import (
	"context"
	"slices"
	"sync"

	"easel/app/compose"
	"easel/app/imagework"
	"easel/app/jobs"
	"easel/engine/pipeline"
)

// jobDraft is the draft a run is made from: the window's, with the start image (when there is
// one) as compose.Start — the painted mask (none when nothing is painted: the whole image is
// reworked), the strength, the feather as the mask's blur, the grow, the extension — and the size
// following the image when the artist chose so or extends the canvas (compose's Job prepares it
// as the CLI's, and FileSettings records it).
func (s *window) jobDraft() compose.Draft {
	d := s.draft()
	if s.doc().Start == nil {
		return d
	}
	st := &compose.Start{Name: s.doc().Start.Image.Name, SHA256: s.doc().Start.Image.SHA256, Image: s.doc().Start.Image.Image, Strength: s.runStrength(),
		MaskBlur: float64(s.doc().Feather), MaskGrow: s.doc().Grow, MaskCrop: s.doc().Extras.MaskCrop, CropPadding: s.doc().Extras.CropPadding,
		DiscardOriginal: s.doc().Extras.DiscardOriginal, Extend: imagework.Margins{Left: s.doc().Extend[sideLeft], Top: s.doc().Extend[sideTop], Right: s.doc().Extend[sideRight], Bottom: s.doc().Extend[sideBottom]}}
	if !s.doc().Start.Mask.Empty() {
		st.Mask, st.MaskName = s.doc().Start.Mask.Clone(), "painted in the window"
	}
	d.Start = st
	if s.doc().FollowImage || s.doc().Extend != [4]int{} {
		d.Size = compose.SizeFromImage // with a start image: the size follows it
	}
	return d
}

// runStrength is the strength the next run starts from the image with: the slider's, or 1 when
// the canvas is extended (the new area starts from noise; the mask keeps the rest).
func (s *window) runStrength() float64 {
	if s.doc().Extend != [4]int{} {
		return 1
	}
	return s.doc().Strength
}

// finishing runs jobs on the window's generator and pastes a run that started from an image
// back into its canvas (compose.Job.Finish), so the image shown and saved keeps the
// original outside the mask, as the CLI's does.
type finishing struct {
	jobs.Generator
	mu       sync.Mutex
	prepared map[*pipeline.InitImage]*compose.Job
}

// expect records how to finish the run of a request with this init image.
func (f *finishing) expect(in *pipeline.InitImage, p *compose.Job) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prepared == nil {
		f.prepared = map[*pipeline.InitImage]*compose.Job{}
	}
	f.prepared[in] = p
}

// forget drops what expect recorded (a job that was never submitted).
func (f *finishing) forget(in *pipeline.InitImage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.prepared, in)
}

func (f *finishing) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
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
