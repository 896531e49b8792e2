package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"time"

	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
	"easel/engine/vae"
)

// previewReport is `easel bench preview --json`.
type previewReport struct {
	Model      string  `json:"model"`
	Size       int     `json:"size"`
	Steps      int     `json:"steps"`
	Runs       int     `json:"runs_each"`
	Cores      int     `json:"cores"`
	StepOffMS  float64 `json:"step_median_ms_previews_off"`
	StepOnMS   float64 `json:"step_median_ms_sharp_on"`
	Ratio      float64 `json:"step_ratio_on_to_off"`
	Decodes    int     `json:"sharp_decodes"`
	Superseded int     `json:"sharp_superseded"`
	DecodeMS   float64 `json:"sharp_decode_median_ms"`
	Every      int     `json:"sharp_every_k_steps"`
	Downsample int     `json:"sharp_downsample"`
	CostShare  float64 `json:"sharp_cost_share_of_step_time"`
	// RunMedians are each run's median step time in ms, in the order run (off, on, off, on, …):
	// the spread between runs of the same kind is the machine's noise.
	RunMedians []float64 `json:"run_median_ms"`
	DecodeGF   float64   `json:"sharp_decode_gflop_this_model"`
	PublishGF  float64   `json:"sharp_decode_gflop_published_vae"`
}

func init() { benchmarks["preview"] = benchPreview }

// benchPreview runs the same generation with the sharp preview off and on, alternately, and
// compares the step times; it reports the sharp decodes' own time, k and share of the step time.
func benchPreview(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench preview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print one JSON object")
	model := fs.String("model", "", "the .cmf model file (required)")
	size := fs.Int("size", 1024, "image side in pixels (a multiple of 32)")
	steps := fs.Int("steps", 8, "denoising steps per run")
	runs := fs.Int("runs", 3, "runs with the sharp preview off and as many on, alternated")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	if *model == "" || *size < 32 || *size%32 != 0 || *steps < 2 || *runs < 1 {
		fmt.Fprintln(stderr, "easel bench preview: give --model M.cmf; --size a multiple of 32, --steps at least 2, --runs at least 1")
		return ExitUsage
	}
	f, fl := openModel(*model)
	if fl != nil {
		fmt.Fprintln(stderr, "easel bench preview:", fl.err)
		return fl.code
	}
	defer f.Close()
	p, err := pipeline.New(f, cpu.New(), pipeline.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "easel bench preview: %s cannot be used: %v\n", *model, err)
		return ExitModelInvalid
	}
	defer p.Close()

	rep := previewReport{Model: *model, Size: *size, Steps: *steps, Runs: *runs, Cores: runtime.NumCPU()}
	var off, on, decodes []time.Duration
	med := func(d []time.Duration) float64 {
		if len(d) == 0 {
			return 0
		}
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[len(s)/2]) / 1e6
	}
	for i := range 2 * *runs {
		var this []time.Duration
		sharp := i%2 == 1
		req := pipeline.Request{Prompt: "a lighthouse on a cliff at dusk", Width: *size, Height: *size, Steps: *steps, Seed: uint64(i / 2), SharpPreview: sharp}
		events := make(chan pipeline.Event, 256)
		done := make(chan struct{})
		// The final decode is the same either way and not what is measured: stop there.
		ctx, stop := context.WithCancel(context.Background())
		var last *pipeline.SharpStats
		go func() {
			defer close(done)
			for ev := range events {
				if ev.Stage == pipeline.StageDecoding {
					stop()
				}
				if ev.Stage == pipeline.StageDenoising && ev.Step > 0 {
					this = append(this, ev.LastStepTime)
					if sharp {
						on = append(on, ev.LastStepTime)
						if ev.Sharp != nil {
							if ev.Sharp.Decodes > 0 && (last == nil || ev.Sharp.Decodes > last.Decodes) {
								decodes = append(decodes, ev.Sharp.Last)
							}
							last = ev.Sharp
						}
					} else {
						off = append(off, ev.LastStepTime)
					}
				}
			}
		}()
		_, err := p.Run(ctx, req, events)
		<-done
		if err != nil && ctx.Err() == nil {
			stop()
			fmt.Fprintf(stderr, "easel bench preview: %v\n", err)
			return ExitFailure
		}
		stop()
		rep.RunMedians = append(rep.RunMedians, med(this))
		if last != nil {
			rep.Decodes += last.Decodes
			rep.Superseded += last.Superseded
			rep.Every, rep.Downsample = last.Every, last.Downsample
		}
	}
	rep.StepOffMS, rep.StepOnMS, rep.DecodeMS = med(off), med(on), med(decodes)
	if rep.StepOffMS > 0 {
		rep.Ratio = rep.StepOnMS / rep.StepOffMS
		rep.CostShare = float64(rep.Decodes) * rep.DecodeMS / (float64(len(on)) * rep.StepOffMS)
	}
	lat := *size / 16
	hs := (lat + rep.Downsample - 1) / max(rep.Downsample, 1)
	if js, err := f.ConfigJSON(vae.ConfigTensor); err == nil {
		if cfg, err := vae.ParseConfig(js); err == nil {
			if pl, err := vae.PlanDecodeFor(cfg, hs, hs); err == nil {
				rep.DecodeGF = pl.ConvFLOPs / 1e9
			}
		}
	}
	if pl, err := vae.PlanDecodeFor(vae.PublishedConfig(), hs, hs); err == nil {
		rep.PublishGF = pl.ConvFLOPs / 1e9
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return ExitOK
	}
	fmt.Fprintf(stdout, "preview: %s, %d², %d steps, %d runs each way alternated, %d cores\n", *model, *size, *steps, *runs, rep.Cores)
	fmt.Fprintf(stdout, "step time (median): previews fast only %.1f ms, sharp on %.1f ms: ratio %.3f\n", rep.StepOffMS, rep.StepOnMS, rep.Ratio)
	fmt.Fprintf(stdout, "per-run medians, ms (off, on, off, on, …): %.1f\n", rep.RunMedians)
	fmt.Fprintf(stdout, "sharp: %d decodes (%d superseded) at 1/%d (%d×%d latents), %.1f ms each (median), every %d steps: %.1f %% of the step time\n",
		rep.Decodes, rep.Superseded, rep.Downsample, hs, hs, rep.DecodeMS, rep.Every, 100*rep.CostShare)
	fmt.Fprintf(stdout, "decode work: %.2f GFLOP with this model's VAE, %.0f GFLOP with the published VAE at the same size\n", rep.DecodeGF, rep.PublishGF)
	return ExitOK
}
