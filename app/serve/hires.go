package serve

import (
	"context"
	"fmt"
	"image"
	"math"
	"net/http"
	"strings"

	"github.com/disintegration/imaging"

	"easel/app/compose"
	"easel/app/hires"
	"easel/app/imagefile"
	"easel/app/upscalers"
	"easel/engine/pipeline"
)

// hiresParams are txt2img's second pass (A1111's enable_hr): the first pass's picture upscaled by
// hr_upscaler to hr_scale × its size (or hr_resize_x × hr_resize_y), then run again as
// image-to-image at denoising_strength for hr_second_pass_steps (0: the first pass's steps).
type hiresParams struct {
	scale            float64
	resizeX, resizeY int
	steps            int
	strength         float64
	upscaler         upscaler
}

// readHires reads txt2img's enable_hr fields into p.Hires (nil without enable_hr).
func (s *Server) readHires(f *fields, p *params) {
	if !f.Bool("enable_hr", false) {
		return
	}
	h := &hiresParams{}
	h.scale = f.Float("hr_scale", 2)
	f.RangeF("hr_scale", h.scale, 1, 4)
	x, y := f.Int("hr_resize_x", 0), f.Int("hr_resize_y", 0)
	f.Range("hr_resize_x", x, 0, compose.MaxSide)
	f.Range("hr_resize_y", y, 0, compose.MaxSide)
	h.resizeX, h.resizeY = int(x), int(y)
	steps := f.Int("hr_second_pass_steps", 0)
	f.Range("hr_second_pass_steps", steps, 0, 1000)
	h.steps = int(steps)
	h.strength = f.Float("denoising_strength", hires.DefaultStrength)
	f.RangeF("denoising_strength", h.strength, 0, 1)
	if f.Has("denoising_strength") && h.strength == 0 {
		f.Invalid("denoising_strength", "denoising_strength 0 makes the second pass change nothing: choose above 0 (Easel's default is 0.35)")
	}
	h.upscaler = upscalerList[1] // Lanczos, for A1111's default "Latent" when the field is absent
	if f.Has("hr_upscaler") {
		name := f.Str("hr_upscaler", "")
		u, warning, ok := s.resolveUpscaler(name)
		switch {
		case !ok:
			f.Invalid("hr_upscaler", fmt.Sprintf("upscaler %q is not available: choose one of GET /sdapi/v1/upscalers", name))
		case u.none():
			p.Warnings = append(p.Warnings, "hr_upscaler None: the second pass needs a larger picture; Lanczos was used")
		default:
			h.upscaler = u
		}
		if warning != "" {
			p.Warnings = append(p.Warnings, "hr_upscaler: "+warning)
		}
	}
	for _, name := range []string{"hr_checkpoint_name", "hr_sampler_name", "hr_scheduler"} {
		if v := f.Str(name, ""); v != "" && !strings.EqualFold(v, "Use same checkpoint") && !strings.EqualFold(v, "Use same sampler") && !strings.EqualFold(v, "Use same scheduler") {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s %q is not available: the second pass uses the first pass's", name, v))
		}
	}
	for _, name := range []string{"hr_prompt", "hr_negative_prompt"} {
		if v := f.Str(name, ""); v != "" {
			p.Warnings = append(p.Warnings, name+" is not available: the second pass uses the first pass's prompts")
		}
	}
	p.Hires = h
}

// size is the second pass's size for a first-pass picture of w×h: hr_resize_x × hr_resize_y (one
// of them 0: by the aspect), else hr_scale times it.
func (h *hiresParams) size(w, h0 int) (int, int) {
	switch {
	case h.resizeX > 0 && h.resizeY > 0:
		return h.resizeX, h.resizeY
	case h.resizeX > 0:
		return h.resizeX, int(math.Round(float64(h.resizeX) * float64(h0) / float64(w)))
	case h.resizeY > 0:
		return int(math.Round(float64(h.resizeY) * float64(w) / float64(h0))), h.resizeY
	}
	return int(math.Round(float64(w) * h.scale)), int(math.Round(float64(h0) * h.scale))
}

// firstStage is the picture the second pass starts from at w×h: upscaled by the upscaler to cover
// it (the learned network, then Lanczos; or the resampler), centre-cropped when the aspect differs.
func (s *Server) firstStage(ctx context.Context, img *image.NRGBA, w, h int, u upscaler) (*image.NRGBA, string, error) {
	b := img.Bounds()
	by := math.Max(float64(w)/float64(b.Dx()), float64(h)/float64(b.Dy()))
	cw, ch := max(w, int(math.Round(float64(b.Dx())*by))), max(h, int(math.Round(float64(b.Dy())*by)))
	var out *image.NRGBA
	notice := ""
	if u.Learned != nil {
		r, err := s.learnedRunner(*u.Learned)
		if err != nil {
			return nil, "", err
		}
		var rep upscalers.Report
		if out, rep, err = hires.FirstStage(ctx, img, cw, ch, r, nil); err != nil {
			return nil, "", err
		}
		notice = rep.Notice
	} else {
		out = imaging.Resize(img, cw, ch, *u.Filter)
	}
	if cw != w || ch != h {
		out = imaging.CropCenter(out, w, h)
	}
	return out, notice, nil
}

// hiresRecord is what a second pass's PNG records: the first pass's size, steps and schedule, and
// the second pass (imagefile.HiresSettings).
type hiresRecord struct {
	first    imagefile.Settings
	factor   float64
	strength float64
	upscaler string
}

// record turns the settings of a second pass's picture into a hi-res image's: the first pass's
// size and schedule, the second pass in Hires (A1111's convention), no start image.
func (hr *hiresRecord) record(set *imagefile.Settings, res *pipeline.Result) {
	h := &imagefile.HiresSettings{Factor: hr.factor, Width: set.Width, Height: set.Height, Strength: hr.strength,
		Steps: set.Steps, StepsRun: res.StepsRun, Upscaler: hr.upscaler, Sigmas: set.Sigmas}
	set.Hires, set.Init, set.InitImage, set.MaskImage = h, nil, nil, nil
	set.Width, set.Height, set.Steps, set.Sigmas = hr.first.Width, hr.first.Height, hr.first.Steps, hr.first.Sigmas
}

// hiresPass runs the second pass over a first pass's results: each picture upscaled, then one
// image-to-image job per picture with the same prompt, seed and variation. It returns the second
// pass's plans and outcome in place of the first's; false when it has answered already.
func (s *Server) hiresPass(w http.ResponseWriter, r *http.Request, kind string, p *params, plans []plan, out outcome) ([]plan, outcome, bool) {
	h := p.Hires
	var next []plan
	for i, res := range out.results {
		if res == nil {
			continue
		}
		img, set, err := out.b.jobs[i].Picture(res)
		if err != nil {
			serverError(w, "PasteBackError", err)
			return nil, outcome{}, false
		}
		tw, th := h.size(img.Rect.Dx(), img.Rect.Dy())
		if tw < 1 || th < 1 || tw > compose.MaxSide || th > compose.MaxSide {
			unprocessable(w, []detailItem{{Loc: []any{"body", "hr_scale"}, Msg: fmt.Sprintf("the second pass would be %d×%d: Easel makes at most %d pixels a side; choose a smaller hr_scale or hr_resize_x/y", tw, th, compose.MaxSide), Type: "value_error"}})
			return nil, outcome{}, false
		}
		start, notice, err := s.firstStage(r.Context(), img, tw, th, h.upscaler)
		if err != nil {
			if r.Context().Err() != nil {
				return nil, outcome{}, false
			}
			serverError(w, "UpscaleError", err)
			return nil, outcome{}, false
		}
		if notice != "" {
			p.Warnings = append(p.Warnings, notice)
		}
		q := *p
		q.Hires, q.Warnings = nil, nil
		q.Init = []compose.Condition{{Name: "first pass", Image: start}}
		q.Denoising, q.Width, q.Height, q.SizeGiven = h.strength, tw, th, true
		q.BatchSize, q.NIter = 1, 1
		if h.steps > 0 {
			q.Steps, q.EaselSigmas = h.steps, nil
		}
		pl := plans[i]
		if p.SubseedStrength != 0 {
			q.Seed, q.Subseed = p.Seed, int64(pl.Subseed)
		} else {
			q.Seed = int64(pl.Seed)
		}
		second, bad := s.drafts(&q)
		if bad != nil {
			unprocessable(w, bad)
			return nil, outcome{}, false
		}
		second[0].Hires = &hiresRecord{first: *set, factor: float64(tw) / float64(img.Rect.Dx()), strength: h.strength, upscaler: h.upscaler.Name}
		next = append(next, second[0])
	}
	if len(next) == 0 {
		return plans, out, true
	}
	out2, ok := s.run(w, r, next, kind+" (second pass)")
	return next, out2, ok
}
