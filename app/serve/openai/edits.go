package openai

import (
	"errors"
	"fmt"
	"image"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"easel/app/compose"
)

// The mask's growth and feather: `easel generate`'s defaults, so an edit with a mask equals
// `easel generate --init IMAGE --mask MASK --strength 1`.
const (
	maskGrow = 8
	maskBlur = 4
)

// maxFormMemory is how much of a multipart body is held in memory (the rest goes to temporary
// files, removed when the request ends).
const maxFormMemory = 32 << 20

// edits answers POST /v1/images/edits (multipart/form-data, as the SDKs send it): image (or
// image[] for several) are the condition images Qwen-Image edits from; a mask (OpenAI's
// convention: fully transparent pixels are the ones to change) makes the first image the start
// image, repainted where the mask is transparent at strength 1, the others staying conditions.
func (a *API) edits(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		invalid(w, "", "invalid_content_type", "send /v1/images/edits as multipart/form-data, with the images as files")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, a.opt.MaxBody)
	if err := r.ParseMultipartForm(maxFormMemory); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge(w, a.opt.MaxBody)
			return
		}
		invalid(w, "", "invalid_body", "the multipart body could not be read: "+err.Error())
		return
	}
	defer r.MultipartForm.RemoveAll()
	get := func(name string) (string, bool) {
		v, ok := r.MultipartForm.Value[name]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	j, perr := readJob(get, a.r.Model(), "image_edit")
	if perr != nil {
		invalid(w, perr.param, perr.code, perr.msg)
		return
	}
	files := append(append([]*multipart.FileHeader{}, r.MultipartForm.File["image"]...), r.MultipartForm.File["image[]"]...)
	if len(files) == 0 {
		invalid(w, "image", "missing_required_parameter", "Missing required parameter: 'image': send one or more image files (image, or image[] for several).")
		return
	}
	if len(files) > compose.MaxConditions {
		invalid(w, "image", "invalid_value", fmt.Sprintf("%d images: the model takes at most %d", len(files), compose.MaxConditions))
		return
	}
	var images []compose.Condition
	for i, fh := range files {
		c, err := readCondition(fh)
		if err != nil {
			invalid(w, "image", "invalid_image", fmt.Sprintf("image %d (%s): %v", i+1, fh.Filename, err))
			return
		}
		images = append(images, c)
	}
	if masks := r.MultipartForm.File["mask"]; len(masks) > 0 {
		m, err := readCondition(masks[0])
		if err != nil {
			invalid(w, "mask", "invalid_image", "mask: "+err.Error())
			return
		}
		first := images[0]
		if m.Image.Rect.Size() != first.Image.Rect.Size() {
			invalid(w, "mask", "invalid_value", fmt.Sprintf("the mask is %dx%d and the first image %dx%d: they must be the same size", m.Image.Rect.Dx(), m.Image.Rect.Dy(), first.Image.Rect.Dx(), first.Image.Rect.Dy()))
			return
		}
		j.req.Start = &compose.Start{Name: first.Name, SHA256: first.SHA256, Image: first.Image, Strength: 1,
			Mask: transparentMask(m.Image), MaskName: m.Name, MaskSHA256: m.SHA256, MaskGrow: maskGrow, MaskBlur: maskBlur}
		images = images[1:]
	}
	j.req.Conditions = images
	a.answer(w, r, j)
}

// readCondition reads an uploaded image with the app's limits.
func readCondition(fh *multipart.FileHeader) (compose.Condition, error) {
	f, err := fh.Open()
	if err != nil {
		return compose.Condition{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return compose.Condition{}, err
	}
	name := fh.Filename
	if name == "" {
		name = "upload"
	}
	return compose.NewCondition(name, data)
}

// transparentMask is an OpenAI mask as Easel's: white (repaint) where the mask is fully
// transparent, black (keep) elsewhere.
func transparentMask(m *image.NRGBA) *image.Gray {
	b := m.Rect
	g := image.NewGray(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			if m.Pix[(y)*m.Stride+x*4+3] == 0 {
				g.Pix[y*g.Stride+x] = 255
			}
		}
	}
	return g
}
