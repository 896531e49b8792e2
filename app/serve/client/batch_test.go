package client_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"

	"easel/app/compose"
	"easel/app/jobs"
	"easel/app/preview"
	"easel/app/serve"
	"easel/app/serve/client"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/engine/sched"
	"easel/internal/tinymodel"
)

// loopback starts an `easel serve` over the tiny model on a loopback listener and returns the
// client for it, the model's path and the local generator to compare with.
func loopback(t *testing.T) (*client.Generator, string, *jobs.ModelGenerator) {
	t.Helper()
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	remoteGen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { remoteGen.Close() })
	q := jobs.New(remoteGen, nil)
	t.Cleanup(q.Close)
	srv, err := serve.New(serve.Config{Queue: q, Model: model, Preview: preview.Neutral})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	local := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { local.Close() })
	return &client.Generator{Addr: hs.Listener.Addr().String(), Poll: 1}, model, local
}

// TestRemoteBatchEqualsLocal: a window batch of 2 rendered on another machine's server returns
// every image, each bit for bit the local batch's, with its own seed (and variation seed), in
// Result.Batch and as a Finished event, as a local batch does — without and with a variation.
func TestRemoteBatchEqualsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	remote, model, local := loopback(t)
	for _, tc := range []struct {
		name     string
		varSeed  uint64
		strength float64
	}{{"seeds", 0, 0}, {"variations", 77, 0.4}} {
		t.Run(tc.name, func(t *testing.T) {
			d := compose.Draft{Prompt: "a red kite", CFG: 1, Steps: 3, Size: compose.SizeExact, CustomW: 64, CustomH: 64, Model: model,
				Count: 2, VariationSeed: tc.varSeed, VariationStrength: tc.strength}
			req, err := d.Request(21)
			if err != nil {
				t.Fatal(err)
			}
			got, events, err := drain(t, remote, context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			want, _, err := drain(t, local, context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Batch) != 2 || len(want.Batch) != 2 || got.Batch[0] != got {
				t.Fatalf("remote batch of %d images (local %d); want 2, the first the result", len(got.Batch), len(want.Batch))
			}
			for i := range 2 {
				g, w := got.Batch[i], want.Batch[i]
				if !bytes.Equal(g.Image.Pix, w.Image.Pix) || g.Image.Rect != w.Image.Rect {
					t.Errorf("image %d: the remote image differs from the local one", i)
				}
				if g.Index != i || g.Seed != w.Seed || g.VariationSeed != w.VariationSeed || g.VariationStrength != w.VariationStrength || g.Steps != w.Steps || g.CFG != w.CFG {
					t.Errorf("image %d: remote index %d seed %d variation %d@%g steps %d CFG %g; local seed %d variation %d@%g steps %d CFG %g",
						i, g.Index, g.Seed, g.VariationSeed, g.VariationStrength, g.Steps, g.CFG, w.Seed, w.VariationSeed, w.VariationStrength, w.Steps, w.CFG)
				}
			}
			if got.Batch[0].Seed == got.Batch[1].Seed && got.Batch[0].VariationSeed == got.Batch[1].VariationSeed {
				t.Error("both images have the same seeds")
			}
			finished := 0
			for _, ev := range events {
				if ev.Finished != nil {
					if ev.Images != 2 || ev.Finished != got.Batch[ev.Image] {
						t.Errorf("Finished event for image %d of %d is not that image's result", ev.Image, ev.Images)
					}
					finished++
				}
			}
			if finished != 2 || events[len(events)-1].Stage != pipeline.StageDone {
				t.Errorf("%d Finished events; last event %v", finished, events[len(events)-1].Stage)
			}
		})
	}
}

// TestRemotePresetGridEqualsLocal: a LoRA preset's fixed sigma grid and scheduler (a Turbo
// preset's) are carried to the server, so the remote image is the local one bit for bit — not
// the image of the grid's step count on the model's own schedule.
func TestRemotePresetGridEqualsLocal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	remote, model, local := loopback(t)
	d := compose.Draft{Prompt: "a lighthouse", CFG: 1, Size: compose.SizeExact, CustomW: 64, CustomH: 64, Model: model}
	req, err := d.Request(5)
	if err != nil {
		t.Fatal(err)
	}
	turbo := sched.TurboConfig()
	req.Sigmas, req.Scheduler, req.Steps = sched.TurboSampleSigmas(), &turbo, 0 // as a Turbo preset's draft makes it
	got, events, err := drain(t, remote, context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := drain(t, local, context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Image.Pix, want.Image.Pix) {
		t.Error("the remote image of the preset grid differs from the local one")
	}
	if len(got.Sigmas) != len(want.Sigmas) || got.Steps != len(req.Sigmas) {
		t.Errorf("remote sigmas %v (%d steps); local %v", got.Sigmas, got.Steps, want.Sigmas)
	}
	for _, ev := range events {
		if ev.Notice != "" && bytes.Contains([]byte(ev.Notice), []byte("sigma grid")) {
			t.Errorf("notice %q for a grid the server used", ev.Notice)
		}
	}
	plain := req
	plain.Sigmas, plain.Scheduler, plain.Steps = nil, nil, len(req.Sigmas)
	other, _, err := drain(t, local, context.Background(), plain)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other.Image.Pix, want.Image.Pix) {
		t.Error("the grid's step count on the model's schedule makes the same image: the test cannot tell the grid was carried")
	}
}
