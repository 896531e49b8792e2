package cli

import (
	"context"
	"os"
	"path/filepath"

	"easel/app/imagefile"
	"easel/app/studio"
	"easel/app/studiogen"
	"easel/engine/pipeline"
)

// renderPipeline renders a studiogen.PipelineRequest (the worker's side of serve --studio).
func (r *studioRenderer) renderPipeline(ctx context.Context, sr *studiogen.PipelineRequest, previews bool, inputs studio.Inputs, dir string, progress func(studio.Step)) ([]byte, error) {
	req, err := sr.Request(ctx, inputs, dir)
	if err != nil {
		return nil, err
	}
	p, backendName, err := r.pipeline(ctx)
	if err != nil {
		return nil, err
	}
	if previews {
		req.Preview = r.previewFunc()
	}
	res, err := studiogen.RunReporting(func(events chan<- pipeline.Event) (*pipeline.Result, error) { return p.Run(ctx, req, events) },
		previews, progress)
	if err != nil {
		return nil, err
	}
	s := sr.Settings(res, r.modelPath, r.fingerprint, backendName)
	path := filepath.Join(dir, "out.png")
	if err := imagefile.WriteFile(path, res.Image, s); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}
