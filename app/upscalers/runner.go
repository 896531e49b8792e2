package upscalers

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"path/filepath"
	"sync"

	"github.com/disintegration/imaging"

	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/upscale"
	"easel/engine/upscale/upscalemetal"
	"easel/kernels/device"
)

// Runner is one upscaler loaded for use: on the CPU, and on a Metal device when one is given. It
// is safe for concurrent use (calls run one at a time).
type Runner struct {
	// Name is the upscaler's name (the file name without its extension).
	Name string
	Path string

	mu  sync.Mutex
	cfg *upscale.Config
	cpu *upscale.Model
	gpu *upscalemetal.Upscaler // nil without a device
	// Budget bounds a tile's activations when Request.Tile is 0 (0: upscale.DefaultBudget).
	Budget int64
}

// Open loads the upscaler file at path; with dev not nil the network also binds to that Metal
// device (a decline then runs it on the CPU).
func Open(path string, dev device.Device) (*Runner, error) {
	s, err := upscale.ReadState(path)
	if err != nil {
		return nil, err
	}
	cfg, canon, err := upscale.Detect(s)
	if err != nil {
		return nil, fmt.Errorf("upscaler %s: %w", filepath.Base(path), err)
	}
	r := &Runner{Name: nameOf(path), Path: path, cfg: cfg}
	if r.cpu, err = upscale.Load(cpu.New(), cfg, canon); err != nil {
		return nil, err
	}
	if dev != nil {
		gpu, err := upscalemetal.New(dev, cfg, canon)
		var d *metal.Declined
		switch {
		case errors.As(err, &d):
			// The CPU runs it; Upscale reports the decline as its notice.
		case err != nil:
			return nil, err
		default:
			r.gpu = gpu
		}
	}
	return r, nil
}

func nameOf(path string) string {
	b := filepath.Base(path)
	return b[:len(b)-len(filepath.Ext(b))]
}

// Config is the network's geometry.
func (r *Runner) Config() *upscale.Config { return r.cfg }

// Close frees the device memory.
func (r *Runner) Close() {
	if r.gpu != nil {
		r.gpu.Close()
	}
}

// Request is one upscale.
type Request struct {
	// Width and Height are the result's size; 0 for both: Scale times the picture's.
	Width, Height int
	// Scale is the result's size over the picture's when Width and Height are 0 (0: the network's).
	Scale float64
	// Tile is the input tile side (0: chosen so a tile's activations stay within the budget;
	// negative: the whole picture in one piece).
	Tile int
	// Progress hears each finished tile of each pass, or is nil.
	Progress func(Progress)
}

// Progress is where an upscale is: tile Done of Total in pass Pass of Passes.
type Progress struct {
	Pass, Passes int
	Done, Total  int
}

// Report says how an upscale ran.
type Report struct {
	Passes  int            // network passes (one, unless the asked size needs the scale more than once)
	Tiling  upscale.Tiling // of the first pass
	Device  string         // "CPU" or the Metal device's name
	Notice  string         // a Metal decline the CPU took over from, or ""
	Resized bool           // a Lanczos resize finished the size
}

// MaxPasses bounds the network passes of one upscale (A1111 runs up to three).
const MaxPasses = 3

// Upscale runs the network over img until the asked size is reached (at most MaxPasses times),
// then resizes with Lanczos to exactly that size when the network's scale does not land on it.
// Cancelling ctx stops between tiles.
func (r *Runner) Upscale(ctx context.Context, img image.Image, req Request) (*image.NRGBA, Report, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := img.Bounds()
	w, h, err := target(b.Dx(), b.Dy(), r.cfg.Scale, req)
	if err != nil {
		return nil, Report{}, err
	}
	passes := 1
	for cw := b.Dx() * r.cfg.Scale; cw < w && passes < MaxPasses && r.cfg.Scale > 1; cw *= r.cfg.Scale {
		passes++
	}
	rep := Report{Passes: passes, Device: "CPU"}
	cur := image.Image(img)
	for p := 1; p <= passes; p++ {
		cb := cur.Bounds()
		t := r.tiling(cb.Dx(), cb.Dy(), req.Tile)
		if p == 1 {
			rep.Tiling = t
		}
		opt := upscale.Options{Tiling: t}
		if req.Progress != nil {
			pass := p
			opt.Progress = func(done, total int) { req.Progress(Progress{Pass: pass, Passes: passes, Done: done, Total: total}) }
		}
		out, dev, notice, err := r.pass(ctx, cur, opt)
		if err != nil {
			return nil, rep, err
		}
		rep.Device = dev
		if notice != "" {
			rep.Notice = notice
		}
		cur = out
	}
	res := cur.(*image.NRGBA)
	if rb := res.Bounds(); rb.Dx() != w || rb.Dy() != h {
		res = imaging.Resize(res, w, h, imaging.Lanczos)
		rep.Resized = true
	}
	return res, rep, nil
}

// pass is one network pass: on the device when there is one and it does not decline.
func (r *Runner) pass(ctx context.Context, img image.Image, opt upscale.Options) (*image.NRGBA, string, string, error) {
	notice := ""
	if r.gpu != nil {
		out, err := r.gpu.Picture(ctx, img, opt)
		var d *metal.Declined
		if !errors.As(err, &d) {
			return out, r.gpu.DeviceName(), "", err
		}
		notice = "Metal declined the upscaler: " + d.Reason + "; the CPU runs it instead"
	}
	out, err := r.cpu.Picture(ctx, img, opt)
	return out, "CPU", notice, err
}

// tiling is the asked tile, or the largest whose activations fit the budget.
func (r *Runner) tiling(w, h, tile int) upscale.Tiling {
	switch {
	case tile < 0:
		return upscale.Tiling{}
	case tile > 0:
		return upscale.Tiling{Tile: tile, Pad: upscale.DefaultPad}
	}
	budget := r.Budget
	if budget <= 0 {
		budget = upscale.DefaultBudget
	}
	return upscale.ChooseTiling(r.cfg, w, h, budget)
}

// target is the result's size for a request.
func target(w, h, scale int, req Request) (int, int, error) {
	tw, th := req.Width, req.Height
	switch {
	case tw > 0 && th > 0:
	case tw != 0 || th != 0:
		return 0, 0, fmt.Errorf("an upscale to %d×%d: give both sides, or neither and a scale", tw, th)
	default:
		s := req.Scale
		if s == 0 {
			s = float64(scale)
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return 0, 0, fmt.Errorf("an upscale by %g: the scale must be a positive number", s)
		}
		tw, th = int(math.Round(float64(w)*s)), int(math.Round(float64(h)*s))
	}
	if tw < 1 || th < 1 {
		return 0, 0, fmt.Errorf("an upscale to %d×%d pixels: too small", tw, th)
	}
	if int64(tw)*int64(th) > 16384*16384 {
		return 0, 0, fmt.Errorf("an upscale to %d×%d: larger than Easel writes (16384² pixels); choose a smaller scale", tw, th)
	}
	return tw, th, nil
}
