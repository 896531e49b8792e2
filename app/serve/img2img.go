package serve

import (
	"fmt"
	"net/http"

	"easel/app/compose"
	"easel/app/imagework"
)

// img2img answers POST /sdapi/v1/img2img: txt2img's fields plus init_images, denoising_strength
// (A1111's default 0.75, which img2img clients rely on), mask, mask_blur, inpainting_mask_invert
// and inpaint_full_res(_padding).
func (s *Server) img2img(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	p := s.readParams(f)
	if f.Bool("enable_hr", false) {
		p.Warnings = append(p.Warnings, "enable_hr is a txt2img option (a second pass after the first); img2img ignores it")
	}
	s.readInit(f, p)
	if len(f.errs) > 0 {
		unprocessable(w, f.errs)
		return
	}
	if len(p.Init) == 0 {
		// A1111 needs an init image here; without one Easel makes the image from the prompt
		// (and any extra_images), as txt2img would, and says so.
		p.Warnings = append(p.Warnings, "no init_images: the image was made from the prompt alone, as txt2img makes it")
	}
	extra := map[string]any{"denoising_strength": p.Denoising, "mask_blur": p.MaskBlur, "inpainting_mask_invert": p.MaskInvert,
		"inpaint_full_res": p.InpaintFullRes, "inpaint_full_res_padding": p.InpaintFullResPadding}
	s.generate(w, r, "img2img", f, p, extra)
}

// readInit reads img2img's own fields.
func (s *Server) readInit(f *fields, p *params) {
	p.Denoising = f.Float("denoising_strength", 0.75)
	f.RangeF("denoising_strength", p.Denoising, 0, 1)
	mb := f.Int("mask_blur", 4)
	f.Range("mask_blur", mb, 0, 64)
	p.MaskBlur = int(mb)
	inv := f.Int("inpainting_mask_invert", 0)
	f.Range("inpainting_mask_invert", inv, 0, 1)
	p.MaskInvert = int(inv)
	p.InpaintFullRes = f.Bool("inpaint_full_res", true)
	// Easel's own field: false returns the model's picture without pasting it back over the
	// init image through the mask (an Easel window that pastes it itself sends it).
	p.NoPasteBack = !f.Bool("easel_paste_back", true)
	pad := f.Int("inpaint_full_res_padding", 0)
	f.Range("inpaint_full_res_padding", pad, 0, 4096)
	p.InpaintFullResPadding = int(pad)
	inits := f.StrList("init_images")
	if len(inits) > 1 {
		p.Warnings = append(p.Warnings, "Easel starts from one init image: only the first of init_images was used")
		inits = inits[:1]
	}
	p.Init = conditionImages(f, "init_images", inits)
	if m := f.Str("mask", ""); m != "" {
		ms := conditionImages(f, "mask", []string{m})
		if len(ms) == 1 {
			p.Mask = &ms[0]
		}
	}
	if p.Mask != nil && len(p.Init) == 0 {
		f.Invalid("mask", "a mask needs an init image to repaint: send init_images too")
	}
	if f.Has("denoising_strength") && p.Denoising == 0 {
		f.Invalid("denoising_strength", "denoising_strength 0 would change nothing: choose above 0 (1 repaints from pure noise)")
	}
	if fill := f.Int("inpainting_fill", 1); f.Has("inpainting_fill") && fill != 1 && p.Mask != nil {
		p.Warnings = append(p.Warnings, fmt.Sprintf("inpainting_fill %d is not available: the masked area starts from the original image (1, \"original\")", fill))
	}
}

// startOf is the draft's start image for img2img, as `easel generate --init` and the window make
// it (compose.Start: the mask feathered by mask_blur, inverted with inpainting_mask_invert, the
// masked area worked on alone with inpaint_full_res and its padding, the result pasted back
// through the mask so the kept area stays the original); nil for txt2img.
func (s *Server) startOf(p *params) (*compose.Start, []detailItem) {
	if p.Start != nil {
		return p.Start, nil
	}
	if len(p.Init) == 0 {
		return nil, nil
	}
	in := p.Init[0]
	st := &compose.Start{Name: in.Name, SHA256: in.SHA256, Image: in.Image, Strength: p.Denoising, MaskBlur: float64(p.MaskBlur)}
	if p.Mask != nil {
		m := imagework.MaskFromImage(p.Mask.Image)
		if p.MaskInvert == 1 {
			m = imagework.Invert(m)
		}
		st.Mask, st.MaskName, st.MaskSHA256 = m, p.Mask.Name, p.Mask.SHA256
		st.MaskCrop, st.CropPadding = p.InpaintFullRes, p.InpaintFullResPadding
		st.DiscardOriginal = p.NoPasteBack
	}
	return st, nil
}
