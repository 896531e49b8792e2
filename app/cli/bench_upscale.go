package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"io"
	"math/rand/v2"
	"runtime"
	"time"

	"easel/app/memplan"
	"easel/engine/ml/cpu"
	"easel/engine/procmem"
	"easel/engine/upscale"
)

func init() { benchmarks["upscale"] = benchUpscale }

// upscaleBenchReport is `easel bench upscale --json`.
type upscaleBenchReport struct {
	Backend        string  `json:"backend"`
	Cores          int     `json:"cores"`
	Network        string  `json:"network"`
	Input          string  `json:"input"`
	Output         string  `json:"output"`
	Tile           int     `json:"tile"`
	Tiles          int     `json:"tiles"`
	Seconds        float64 `json:"seconds"`
	PeakBytes      int64   `json:"peak_bytes"`
	PeakMethod     string  `json:"peak_method"`
	PredictedBytes int64   `json:"predicted_bytes"`
	TFLOP          float64 `json:"tflop"`
	GFLOPs         float64 `json:"gflop_per_s"`
}

// benchUpscale times a learned upscaler of the published full size (random weights) on the CPU
// backend over a random picture, and sets its measured peak memory against app/memplan's
// prediction.
func benchUpscale(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench upscale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	size := fs.Int("size", 1024, "the input picture's side")
	blocks := fs.Int("blocks", 23, "RRDB blocks")
	features := fs.Int("features", 64, "features")
	tile := fs.Int("tile", 0, "input tile side (0: chosen from the default budget; -1: one piece)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := fs.Parse(args); err != nil {
		return ExitUsage
	}
	cfg := upscale.FullSizeRRDBNet()
	cfg.Blocks, cfg.Features = *blocks, *features
	cfg.Growth = max(1, *features/2)
	st, err := upscale.SyntheticState(cfg, 1)
	if err != nil {
		fmt.Fprintf(stderr, "easel bench upscale: %v\n", err)
		return ExitFailure
	}
	be := cpu.New()
	m, err := upscale.Load(be, cfg, st)
	if err != nil {
		fmt.Fprintf(stderr, "easel bench upscale: %v\n", err)
		return ExitFailure
	}
	st = nil
	img := image.NewNRGBA(image.Rect(0, 0, *size, *size))
	rng := rand.New(rand.NewPCG(2, 3))
	for i := range img.Pix {
		img.Pix[i] = uint8(rng.UintN(256))
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	t := upscale.ChooseTiling(cfg, *size, *size, upscale.DefaultBudget)
	switch {
	case *tile < 0:
		t = upscale.Tiling{}
	case *tile > 0:
		t = upscale.Tiling{Tile: *tile, Pad: upscale.DefaultPad}
	}
	pred := memplan.PredictUpscale(cfg, *size, *size, t, false, 0)
	runtime.GC()
	iv := procmem.Begin()
	start := time.Now()
	tiles := t.Tiles(*size, *size)
	out, err := m.Picture(context.Background(), img, upscale.Options{Tiling: t, Progress: func(done, total int) {
		fmt.Fprintf(stderr, "\rtile %d of %d, %.0f s", done, total, time.Since(start).Seconds())
	}})
	secs := time.Since(start).Seconds()
	peak := iv.End()
	fmt.Fprintln(stderr)
	if err != nil {
		fmt.Fprintf(stderr, "easel bench upscale: %v\n", err)
		return ExitFailure
	}
	flops := upscaleFLOPs(cfg, *size, *size, t)
	rep := upscaleBenchReport{Backend: be.Name(), Cores: runtime.NumCPU(), Network: cfg.String(), Input: fmt.Sprintf("%d×%d", *size, *size),
		Output: fmt.Sprintf("%d×%d", out.Rect.Dx(), out.Rect.Dy()), Tile: t.Tile, Tiles: tiles, Seconds: secs, PeakBytes: peak,
		PeakMethod: procmem.Method(iv.Exact()), PredictedBytes: pred.Peak, TFLOP: flops / 1e12, GFLOPs: flops / secs / 1e9}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(rep)
		return ExitOK
	}
	how := "in one piece"
	if t.Tile > 0 {
		how = fmt.Sprintf("in %d tiles of %d² (pad %d)", tiles, t.Tile, t.Pad)
	}
	fmt.Fprintf(stdout, "%s on %s (%d cores): %s → %s %s: %.1f s, %.2f TFLOP, %.0f GFLOP/s\n",
		rep.Network, rep.Backend, rep.Cores, rep.Input, rep.Output, how, secs, rep.TFLOP, rep.GFLOPs)
	fmt.Fprintf(stdout, "peak memory %s (%s), predicted %s\n", memplan.GB(peak), rep.PeakMethod, memplan.GB(pred.Peak))
	return ExitOK
}

// upscaleFLOPs counts the convolutions' multiply-adds ×2 over every padded tile.
func upscaleFLOPs(cfg *upscale.Config, W, H int, t upscale.Tiling) float64 {
	conv := func(in, out int, px float64) float64 { return 2 * 9 * float64(in*out) * px }
	perPixel := func(px float64) float64 {
		nf, gc := cfg.Features, cfg.Growth
		f := conv(3, nf, px)
		for j := 0; j < 4; j++ {
			f += 3 * float64(cfg.Blocks) * conv(nf+j*gc, gc, px)
		}
		f += 3*float64(cfg.Blocks)*conv(nf+4*gc, nf, px) + conv(nf, nf, px)
		up := px
		for u := 0; u < cfg.Ups; u++ {
			up *= 4
			f += conv(nf, nf, up)
		}
		return f + conv(nf, nf, up) + conv(nf, 3, up)
	}
	if t.Tile <= 0 {
		return perPixel(float64(W * H))
	}
	var total float64
	for y := 0; y < H; y += t.Tile {
		for x := 0; x < W; x += t.Tile {
			w := min(W, x+t.Tile+t.Pad) - max(0, x-t.Pad)
			h := min(H, y+t.Tile+t.Pad) - max(0, y-t.Pad)
			total += perPixel(float64(w * h))
		}
	}
	return total
}
