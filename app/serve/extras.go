package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"net/http"
	"strings"

	"github.com/disintegration/imaging"

	"easel/app/compose"
)

// upscaler is one of /sdapi/v1/upscalers: A1111's built-in resamplers, done with imaging.
type upscaler struct {
	Name   string
	Filter *imaging.ResampleFilter // nil: None (the image unchanged)
}

var upscalerList = []upscaler{{Name: "None"}, {Name: "Lanczos", Filter: &imaging.Lanczos}, {Name: "Nearest", Filter: &imaging.NearestNeighbor}}

// The largest side extras makes, and its pixel count.
const (
	extrasMaxSide   = 8192
	extrasMaxPixels = 64 << 20
)

// upscalers answers GET /sdapi/v1/upscalers in A1111's UpscalerItem shape (no model files: no
// paths); the scale is A1111's for its built-in ones.
func (s *Server) upscalers(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, u := range upscalerList {
		var model any
		if u.Filter != nil {
			model = strings.ToLower(u.Name)
		}
		out = append(out, map[string]any{"name": u.Name, "model_name": model, "model_path": nil, "model_url": nil, "scale": 4})
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
}

func findUpscaler(f *fields, name string) upscaler {
	v := f.Str(name, "None")
	for _, u := range upscalerList {
		if strings.EqualFold(u.Name, strings.TrimSpace(v)) {
			return u
		}
	}
	f.Invalid(name, fmt.Sprintf("upscaler %q is not available: choose None, Lanczos or Nearest (GET /sdapi/v1/upscalers)", v))
	return upscaler{Name: "None"}
}

func readExtras(f *fields) *extrasParams {
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
	p.first, p.second = findUpscaler(f, "upscaler_1"), findUpscaler(f, "upscaler_2")
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
func (p *extrasParams) scale(img *image.NRGBA, u upscaler) (*image.NRGBA, error) {
	if u.Filter == nil {
		return img, nil
	}
	b := img.Bounds()
	by := p.by
	if p.mode == 1 {
		by = math.Max(float64(p.toW)/float64(b.Dx()), float64(p.toH)/float64(b.Dy()))
	}
	w, h := int(math.Round(float64(b.Dx())*by)), int(math.Round(float64(b.Dy())*by))
	if w > extrasMaxSide || h > extrasMaxSide || w*h > extrasMaxPixels {
		return nil, fmt.Errorf("%d×%d pixels is more than this server makes (%d a side, %d megapixels): choose a smaller upscaling_resize", w, h, extrasMaxSide, extrasMaxPixels>>20)
	}
	out := imaging.Resize(img, max(w, 1), max(h, 1), *u.Filter)
	if p.mode == 1 && p.crop {
		out = imaging.CropCenter(out, min(p.toW, out.Rect.Dx()), min(p.toH, out.Rect.Dy()))
	}
	return out, nil
}

// run is the extras of one image: upscaler_1, blended with upscaler_2 at its visibility.
func (p *extrasParams) run(img *image.NRGBA) (*image.NRGBA, error) {
	a, err := p.scale(img, p.first)
	if err != nil || p.second.Filter == nil || p.secondVis == 0 {
		return a, err
	}
	b, err := p.scale(img, p.second)
	if err != nil {
		return nil, err
	}
	if p.first.Filter == nil || a.Rect.Size() != b.Rect.Size() {
		return b, nil
	}
	return imaging.Overlay(a, b, image.Point{}, p.secondVis), nil
}

// htmlInfo is A1111's html_info: what was done, and what could not be.
func (p *extrasParams) htmlInfo(in, out image.Rectangle) string {
	lines := []string{fmt.Sprintf("Upscaler: %s, %d×%d → %d×%d", p.first.Name, in.Dx(), in.Dy(), out.Dx(), out.Dy())}
	if p.first.Filter == nil {
		lines[0] = "Upscaler: None (the image unchanged)"
	}
	if p.second.Filter != nil && p.secondVis > 0 {
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
	p := readExtras(f)
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
	out, err := p.run(imgs[0].Image)
	if err != nil {
		unprocessable(w, []detailItem{{Loc: []any{"body", "upscaling_resize"}, Msg: err.Error(), Type: "value_error"}})
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
	p := readExtras(f)
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
		out, err := p.run(c.Image)
		if err != nil {
			unprocessable(w, []detailItem{{Loc: []any{"body", "upscaling_resize"}, Msg: err.Error(), Type: "value_error"}})
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
