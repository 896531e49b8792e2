package ui

import (
	"bytes"
	"context"
	"image"
	"net/http/httptest"
	"testing"

	"easel/app/jobs"
	"easel/app/maskpaint"
	"easel/app/serve"
	"easel/engine/imageio"
	"easel/engine/pipeline"
)

// echoGen makes a picture from everything a request carries that shapes an edit — the seed, the
// init image, its mask and strength — so a server that received any of them differently makes a
// different picture. It runs the same on this machine and on the server.
type echoGen struct{}

func (echoGen) Run(_ context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	close(events)
	w, h := req.Width, req.Height
	if w == 0 && req.Init != nil {
		w, h = req.Init.Image.Rect.Dx(), req.Init.Image.Rect.Dy()
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			i := img.PixOffset(x, y)
			v := uint8(req.Seed) + uint8(x*7+y*13)
			if in := req.Init; in != nil {
				v += in.Image.Pix[in.Image.PixOffset(x, y)] + uint8(in.Strength*100)
				if in.Mask != nil {
					v ^= in.Mask.GrayAt(x, y).Y
				}
			}
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = v, v/2+uint8(x), 255-v, 255
		}
	}
	return &pipeline.Result{Image: img, Width: w, Height: h, Steps: req.Steps, CFG: req.CFG, Seed: req.Seed}, nil
}

// TestRenderOnEditEqualsTheLocalEdit: a masked, feathered and extended edit rendered on another
// machine (Render on) is the picture this machine makes from the same draft, bit for bit (broken
// item 2: the server pasted the result back through the feathered mask and the window pasted it
// again, so the feather and the seam differed).
func TestRenderOnEditEqualsTheLocalEdit(t *testing.T) {
	model := tinyModelPath(t)
	remoteQ := jobs.New(echoGen{}, nil)
	t.Cleanup(remoteQ.Close)
	srv, err := serve.New(serve.Config{Queue: remoteQ, Model: model, Auth: serve.Auth{Token: "t0k"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator = echoGen{}
		d.Settings.RenderOn, d.Settings.RenderToken = hs.Listener.Addr().String(), "t0k"
	})
	s := h.s
	s.work.SetStart(mustCondition(t, h.writePNG("street.png", 256, 192)))
	s.doc().Start.Mask.Begin()
	s.doc().Start.Mask.Stroke(maskpaint.Point{X: 60, Y: 60}, maskpaint.Point{X: 180, Y: 120}, 24, false)
	s.doc().Start.Mask.End()
	s.work.MaskChanged()
	s.model.SetFeather(12)
	s.model.SetGrow(4)
	s.work.ExtendSide(sideRight)
	s.model.SetRandomSeed(false)
	s.model.SetSeed(41)
	s.prompt.Text.SetText("a bicycle leaning on the wall")

	render := func(where string) *image.NRGBA {
		t.Helper()
		n := len(s.history.Entries)
		s.generate()
		h.pump(where+" image saved", func() bool { return len(s.history.Entries) == n+1 })
		img, err := imageio.Load(s.history.Entries[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	remote := render("the remote")
	if js := remoteQ.Jobs(); len(js) != 1 || js[0].State != jobs.Done {
		t.Fatalf("the server ran %d jobs", len(js))
	}
	s.router.Set("", "")
	local := render("the local")
	if remote.Rect != local.Rect {
		t.Fatalf("remote %v, local %v", remote.Rect, local.Rect)
	}
	if !bytes.Equal(remote.Pix, local.Pix) {
		diff := 0
		for i := 0; i < len(local.Pix); i += 4 {
			if !bytes.Equal(local.Pix[i:i+4], remote.Pix[i:i+4]) {
				diff++
			}
		}
		t.Errorf("the edit rendered on the server differs from this machine's in %d of %d pixels", diff, len(local.Pix)/4)
	}
}
