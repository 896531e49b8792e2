package ui

import (
	"context"
	"sync"

	"easel/app/imagework"
	"easel/app/jobs"
	"easel/engine/pipeline"
)

// startOptions are how the start image is prepared for the next run: fitted to the chosen size
// (cover-crop) or setting the size itself, the painted mask (none when nothing is painted: the
// whole image is reworked) feathered by the Feather setting, the canvas extended as the arrows
// say, and the result pasted back through the mask so the kept area stays the original.
func (s *studio) startOptions(w, h int) imagework.Options {
	o := imagework.Options{Multiple: 32, MaskBlur: float64(s.feather), KeepOriginal: true,
		Extend: imagework.Margins{Left: s.extend[sideLeft], Top: s.extend[sideTop], Right: s.extend[sideRight], Bottom: s.extend[sideBottom]}}
	if !s.followImage && o.Extend.IsZero() {
		o.Width, o.Height = w, h
	}
	if !s.start.mask.Empty() {
		o.Mask = s.start.mask.Clone()
	}
	return o
}

// runStrength is the strength the next run starts from the image with: the slider's, or 1 when
// the canvas is extended (the new area starts from noise; the mask keeps the rest).
func (s *studio) runStrength() float64 {
	if s.extend != [4]int{} {
		return 1
	}
	return s.strength
}

// applyStart makes req start from the start image (when there is one): the prepared image and
// mask at the size the run makes, and what pastes the result back.
func (s *studio) applyStart(req *pipeline.Request) (*imagework.Prepared, error) {
	if s.start == nil {
		return nil, nil
	}
	p, err := imagework.Prepare(s.start.c.Image, s.startOptions(req.Width, req.Height))
	if err != nil {
		return nil, err
	}
	req.Width, req.Height = p.Width, p.Height
	req.Init = &pipeline.InitImage{Image: p.Init, Strength: s.runStrength(), Mask: p.Mask}
	return p, nil
}

// finishing runs jobs on the window's generator and pastes a run that started from an image
// back into its canvas (imagework.Prepared.Finish), so the image shown and saved keeps the
// original outside the mask, as the CLI's does.
type finishing struct {
	jobs.Generator
	mu       sync.Mutex
	prepared map[*pipeline.InitImage]*imagework.Prepared
}

// expect records how to finish the run of a request with this init image.
func (f *finishing) expect(in *pipeline.InitImage, p *imagework.Prepared) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prepared == nil {
		f.prepared = map[*pipeline.InitImage]*imagework.Prepared{}
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
	var p *imagework.Prepared
	if req.Init != nil {
		f.mu.Lock()
		p = f.prepared[req.Init]
		delete(f.prepared, req.Init)
		f.mu.Unlock()
	}
	res, err := f.Generator.Run(ctx, req, events)
	if err != nil || p == nil || res == nil || res.Image == nil {
		return res, err
	}
	img, err := p.Finish(res.Image)
	if err != nil {
		return nil, err
	}
	res.Image, res.Width, res.Height = img, img.Rect.Dx(), img.Rect.Dy()
	return res, nil
}
