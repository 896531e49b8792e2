package serve

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"strings"

	"github.com/disintegration/imaging"

	"easel/app/compose"
	"easel/app/upscalers"
)

// upscaler is one of /sdapi/v1/upscalers: A1111's built-in resamplers, done with imaging, or a
// learned upscaler of the upscalers folder (learned.go).
type upscaler struct {
	Name    string
	Filter  *imaging.ResampleFilter // nil: None (the image unchanged), unless Learned
	Learned *upscalers.Entry
}

// none says the upscaler leaves the image as it is.
func (u upscaler) none() bool { return u.Filter == nil && u.Learned == nil }

var upscalerList = []upscaler{{Name: "None"}, {Name: "Lanczos", Filter: &imaging.Lanczos}, {Name: "Nearest", Filter: &imaging.NearestNeighbor}}

// The largest side extras makes, and its pixel count.
const (
	extrasMaxSide   = 8192
	extrasMaxPixels = 64 << 20
)

// upscalers answers GET /sdapi/v1/upscalers in A1111's UpscalerItem shape: the built-in
// resamplers (A1111's scale, 4), then one entry per learned upscaler of the upscalers folder (its
// file name without the extension, its network family, its file, its own scale).
func (s *Server) upscalers(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, u := range upscalerList {
		var model any
		if u.Filter != nil {
			model = strings.ToLower(u.Name)
		}
		out = append(out, map[string]any{"name": u.Name, "model_name": model, "model_path": nil, "model_url": nil, "scale": 4})
	}
	for _, e := range s.learnedEntries() {
		out = append(out, map[string]any{"name": e.Name, "model_name": string(e.Config.Arch), "model_path": e.Path, "model_url": nil, "scale": e.Scale()})
	}
	writeJSON(w, http.StatusOK, out)
}

// extrasParams are A1111's ExtrasBaseRequest fields (modules/api/models.py).
type extrasParams struct {
	mode          int64 // 0: by upscaling_resize; 1: to upscaling_resize_w × _h
	by            float64
	toW, toH      int
	crop          bool
	first, second upscaler
	secondVis     float64
	show          bool
	notes         []string
	server        *Server
}

// findUpscaler reads an upscaler field: a name of GET /sdapi/v1/upscalers, or one A1111 lists by
// default (its substitute is said in notes); any other name is invalid.
func (s *Server) findUpscaler(f *fields, name string, notes *[]string) upscaler {
	v := f.Str(name, "None")
	u, warning, ok := s.resolveUpscaler(v)
	if !ok {
		names := []string{}
		for _, b := range upscalerList {
			names = append(names, b.Name)
		}
		for _, e := range s.learnedEntries() {
			names = append(names, e.Name)
		}
		f.Invalid(name, fmt.Sprintf("upscaler %q is not available: choose one of %s (GET /sdapi/v1/upscalers)", v, strings.Join(names, ", ")))
		return upscaler{Name: "None"}
	}
	if warning != "" {
		*notes = append(*notes, name+": "+warning)
	}
	return u
}

func (s *Server) readExtras(f *fields) *extrasParams {
	p := &extrasParams{}
	p.mode = f.Int("resize_mode", 0)
	f.Range("resize_mode", p.mode, 0, 1)
	p.show = f.Bool("show_extras_results", true)
	p.by = f.Float("upscaling_resize", 2)
	f.RangeF("upscaling_resize", p.by, 1, 8)
	w, h := f.Int("upscaling_resize_w", 512), f.Int("upscaling_resize_h", 512)
	f.Range("upscaling_resize_w", w, 1, extrasMaxSide)
	f.Range("upscaling_resize_h", h, 1, extrasMaxSide)
	p.toW, p.toH = int(w), int(h)
	p.crop = f.Bool("upscaling_crop", true)
	p.first, p.second = s.findUpscaler(f, "upscaler_1", &p.notes), s.findUpscaler(f, "upscaler_2", &p.notes)
	p.server = s
	p.secondVis = f.Float("extras_upscaler_2_visibility", 0)
	f.RangeF("extras_upscaler_2_visibility", p.secondVis, 0, 1)
	for _, name := range []string{"gfpgan_visibility", "codeformer_visibility", "codeformer_weight"} {
		v := f.Float(name, 0)
		f.RangeF(name, v, 0, 1)
		if v > 0 && name != "codeformer_weight" {
			p.notes = append(p.notes, fmt.Sprintf("%s: face restoration is not available in Easel; it was not applied", name))
		}
	}
	f.Bool("upscale_first", false)
	return p
}

// scale is one upscaler's result for img, as A1111's postprocessing_upscale: by a factor (mode
// 0) or by the factor that covers upscaling_resize_w × _h (mode 1), then, with upscaling_crop,
// centre-cropped to exactly that size.
func (p *extrasParams) scale(ctx context.Context, img *image.NRGBA, u upscaler) (*image.NRGBA, error) {
	if u.none() {
		return img, nil
	}
	b := img.Bounds()
	by := p.by
	if p.mode == 1 {
		by = math.Max(float64(p.toW)/float64(b.Dx()), float64(p.toH)/float64(b.Dy()))
	}
	w, h := int(math.Round(float64(b.Dx())*by)), int(math.Round(float64(b.Dy())*by))
	if w > extrasMaxSide || h > extrasMaxSide || w*h > extrasMaxPixels {
		return nil, &sizeError{fmt.Sprintf("%d×%d pixels is more than this server makes (%d a side, %d megapixels): choose a smaller upscaling_resize", w, h, extrasMaxSide, extrasMaxPixels>>20)}
	}
	var out *image.NRGBA
	if u.Learned != nil {
		r, err := p.server.learnedRunner(*u.Learned)
		if err != nil {
			return nil, err
		}
		var rep upscalers.Report
		if out, rep, err = r.Upscale(ctx, img, upscalers.Request{Width: max(w, 1), Height: max(h, 1)}); err != nil {
			return nil, err
		}
		if rep.Notice != "" {
			p.notes = append(p.notes, rep.Notice)
		}
	} else {
		out = imaging.Resize(img, max(w, 1), max(h, 1), *u.Filter)
	}
	if p.mode == 1 && p.crop {
		out = imaging.CropCenter(out, min(p.toW, out.Rect.Dx()), min(p.toH, out.Rect.Dy()))
	}
	return out, nil
}

// run is the extras of one image: upscaler_1, blended with upscaler_2 at its visibility.
func (p *extrasParams) run(ctx context.Context, img *image.NRGBA) (*image.NRGBA, error) {
	a, err := p.scale(ctx, img, p.first)
	if err != nil || p.second.none() || p.secondVis == 0 {
		return a, err
	}
	b, err := p.scale(ctx, img, p.second)
	if err != nil {
		return nil, err
	}
	if p.first.none() || a.Rect.Size() != b.Rect.Size() {
		return b, nil
	}
	return imaging.Overlay(a, b, image.Point{}, p.secondVis), nil
}

// failed answers an upscale that could not be made: a size past the limits (422), a learned
// upscaler's file that went bad (a 500 naming it), or a client that went away.
func (p *extrasParams) failed(w http.ResponseWriter, err error) {
	var size *sizeError
	switch {
	case errors.As(err, &size):
		unprocessable(w, []detailItem{{Loc: []any{"body", "upscaling_resize"}, Msg: err.Error(), Type: "value_error"}})
	case errors.Is(err, context.Canceled):
		serverError(w, "Interrupted", err)
	default:
		serverError(w, "UpscaleError", err)
	}
}

// sizeError is a result past the server's limits.
type sizeError struct{ msg string }

func (e *sizeError) Error() string { return e.msg }

// htmlInfo is A1111's html_info: what was done, and what could not be.
func (p *extrasParams) htmlInfo(in, out image.Rectangle) string {
	lines := []string{fmt.Sprintf("Upscaler: %s, %d×%d → %d×%d", p.first.Name, in.Dx(), in.Dy(), out.Dx(), out.Dy())}
	if p.first.none() {
		lines[0] = "Upscaler: None (the image unchanged)"
	}
	if !p.second.none() && p.secondVis > 0 {
		lines = append(lines, fmt.Sprintf("Upscaler 2: %s, visibility %g", p.second.Name, p.secondVis))
	}
	lines = append(lines, p.notes...)
	return "<p>" + strings.Join(lines, "<br>") + "</p>"
}

// pngBase64 encodes an extras result (no generation settings to carry).
func plainPNG(img image.Image) (string, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// extraSingleImage answers POST /sdapi/v1/extra-single-image {image, upscaler_1, …}:
// {html_info, image}.
func (s *Server) extraSingleImage(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	p := s.readExtras(f)
	src := f.Str("image", "")
	if src == "" && len(f.errs) == 0 {
		f.fail("image", "field required: send the image as base64", "value_error.missing", nil)
	}
	var imgs []compose.Condition
	if src != "" {
		imgs = conditionImages(f, "image", []string{src})
	}
	if len(f.errs) > 0 {
		unprocessable(w, f.errs)
		return
	}
	out, err := p.run(r.Context(), imgs[0].Image)
	if err != nil {
		p.failed(w, err)
		return
	}
	enc := ""
	if p.show {
		if enc, err = plainPNG(out); err != nil {
			serverError(w, "EncodeError", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"html_info": p.htmlInfo(imgs[0].Image.Rect, out.Rect), "image": enc})
}

// extraBatchImages answers POST /sdapi/v1/extra-batch-images {imageList: [{data, name}], …}:
// {html_info, images}.
func (s *Server) extraBatchImages(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	p := s.readExtras(f)
	var list []struct {
		Data string `json:"data"`
		Name string `json:"name"`
	}
	if raw, ok := f.raw("imageList"); ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			f.fail("imageList", "value is not a valid list of {data, name}", "type_error.list", nil)
		}
	} else {
		f.fail("imageList", "field required: send imageList as [{data: base64, name}]", "value_error.missing", nil)
	}
	if len(list) > compose.MaxConditions*10 {
		f.Invalid("imageList", fmt.Sprintf("%d images: this server upscales at most %d per request", len(list), compose.MaxConditions*10))
		list = nil
	}
	datas := make([]string, len(list))
	for i, it := range list {
		datas[i] = it.Data
	}
	imgs := conditionImages(f, "imageList", datas)
	if len(f.errs) > 0 {
		unprocessable(w, f.errs)
		return
	}
	images := []string{}
	var info []string
	for _, c := range imgs {
		out, err := p.run(r.Context(), c.Image)
		if err != nil {
			p.failed(w, err)
			return
		}
		info = append(info, p.htmlInfo(c.Image.Rect, out.Rect))
		if p.show {
			enc, err := plainPNG(out)
			if err != nil {
				serverError(w, "EncodeError", err)
				return
			}
			images = append(images, enc)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"html_info": strings.Join(info, ""), "images": images})
}
