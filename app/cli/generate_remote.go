package cli

import (
	"errors"
	"time"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/serve/client"
	"easel/engine/pipeline"
)

// ExitRemote is --render-on's failure: the server could not be reached, refused the job, or
// stopped answering.
const ExitRemote = 14

// remoteArgs are --render-on HOST:PORT and --token T: the run goes to another Easel's server
// through the window's client (app/serve/client), and the answer is pasted back and saved here
// exactly as a local run is, so both make the same picture.
type remoteArgs struct {
	addr, token string
}

// checkRemote refuses what --render-on cannot send: the server loads its own LoRAs and makes its
// own second pass.
func (g *generateArgs) checkRemote() error {
	if g.remote.addr == "" {
		if g.remote.token != "" {
			return errors.New("--token goes with --render-on HOST:PORT")
		}
		return nil
	}
	switch {
	case len(g.loras) > 0:
		return errors.New("--lora is not sent with --render-on: the server applies its own LoRAs; render here to use one")
	case g.batch.hires > 0:
		return errors.New("--hires is not sent with --render-on: render here, or upscale the image afterwards")
	}
	return nil
}

// generateRemote runs job on the server and saves its images at outPaths.
func generateRemote(g *generateArgs, d *compose.Draft, job compose.Job, outPaths []string, out *generateOutput) ([]*savedImage, *failure) {
	ctx, stop := interruptContext()
	defer stop()
	gen := &client.Generator{Addr: g.remote.addr, Token: g.remote.token}
	start := time.Now()
	events := make(chan pipeline.Event)
	drained := make(chan struct{})
	go func() {
		for ev := range events {
			out.progressPass(ev, 1)
		}
		close(drained)
	}()
	res, err := gen.Run(ctx, job.Request, events)
	<-drained
	out.endProgress()
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, fail(ExitCancelled, "cancelled; the server was asked to stop and %s was not written", outPaths[0])
	case errors.Is(err, client.ErrServerGone):
		return nil, fail(ExitRemote, "%v; %s was not written: check that Easel serves on %s (Settings → Share) and try again, or leave out --render-on to render here", err, outPaths[0], g.remote.addr)
	case err != nil:
		return nil, fail(ExitRemote, "%s did not make the image: %v; %s was not written", g.remote.addr, err, outPaths[0])
	}
	results := res.Batch
	if results == nil {
		results = []*pipeline.Result{res}
	}
	if len(results) != len(outPaths) {
		return nil, fail(ExitRemote, "%s answered with %d image(s) for %d asked", g.remote.addr, len(results), len(outPaths))
	}
	var saved []*savedImage
	batchID := imagefile.NewBatchID(time.Now(), 0, job.Request.Seed)
	for i, r := range results {
		img, err := job.Finish(r)
		if err != nil {
			return saved, &failure{ExitFailure, err}
		}
		set := d.FileSettings(r)
		set.Width, set.Height = img.Rect.Dx(), img.Rect.Dy()
		set.NegativePrompt = negativeUsed(job.Request.NegativePrompt, r.CFG)
		set.Backend = "remote " + g.remote.addr
		set.InBatch(batchID, r.Index, len(results))
		saveStart := time.Now()
		if err := imagefile.WriteFile(outPaths[i], img, set); err != nil {
			return saved, &failure{ExitWrite, err}
		}
		s := newSavedImage(outPaths[i], r, 0, time.Since(saveStart), time.Since(start))
		s.Index, s.Images = i, len(results)
		s.VariationSeed = r.VariationSeed
		saved = append(saved, s)
	}
	return saved, nil
}
