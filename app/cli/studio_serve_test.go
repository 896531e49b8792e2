package cli

import (
	"bytes"
	"context"
	"image"
	"testing"
	"time"

	"easel/app/jobs"
	"easel/app/settings"
	"easel/app/studiogen"
	"easel/engine/pipeline"
)

// The generator behind `easel serve --studio`: a request of 3 images (as the A1111 API's
// batch_size makes) goes to two worker subprocesses; each image is bit-identical to the local
// generator's image of the same request, with its own seed; the workers' step previews come back.
func TestStudioServeGeneratorMatchesLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("renders tiny images in subprocesses")
	}
	model := tinyCMF(t)
	url, _ := startStudio(t, model, time.Minute, 2)
	m, f := openModel(model)
	if f != nil {
		t.Fatal(f.err)
	}
	fp := modelFingerprint(m)
	m.Close()
	sg, err := studiogen.New(url, studioTestToken, "", fp, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	req := pipeline.Request{Prompt: "a lighthouse", Width: 32, Height: 32, Steps: 2, Seed: 11, Count: 3,
		// asks for previews: the workers render their own (funcs do not travel)
		Preview: func([]float32, int, int) image.Image { return nil }}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	events := make(chan pipeline.Event, 64)
	previews := make(chan int, 1)
	go func() {
		n := 0
		for ev := range events { // the generator closes the channel after its last event
			if ev.Preview != nil && ev.Preview.Image != nil {
				n++
			}
		}
		previews <- n
	}()
	got, err := sg.Run(ctx, req, events)
	if err != nil {
		t.Fatal(err)
	}
	if n := <-previews; n == 0 {
		t.Error("no step preview came back from the workers")
	}
	req.Preview = nil
	local := &jobs.ModelGenerator{Path: model, Backend: settings.BackendCPU}
	defer local.Close()
	want, err := local.Run(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Batch) != 3 || len(want.Batch) != 3 {
		t.Fatalf("batch sizes %d (studio), %d (local)", len(got.Batch), len(want.Batch))
	}
	for i := range 3 {
		g, w := got.Batch[i], want.Batch[i]
		if g.Seed != w.Seed || g.Index != i || g.Steps != w.Steps || g.CFG != w.CFG || !bytes.Equal(g.Image.Pix, w.Image.Pix) {
			t.Errorf("image %d: studio seed %d steps %d cfg %g, local seed %d steps %d cfg %g; pixels equal %v",
				i, g.Seed, g.Steps, g.CFG, w.Seed, w.Steps, w.CFG, bytes.Equal(g.Image.Pix, w.Image.Pix))
		}
	}
}
