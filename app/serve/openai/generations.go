package openai

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"easel/app/serve/render"
)

// generations answers POST /v1/images/generations (JSON).
func (a *API) generations(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, a.opt.MaxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		tooLarge(w, a.opt.MaxBody)
		return
	}
	if err != nil {
		invalid(w, "", "invalid_body", "the request body could not be read: "+err.Error())
		return
	}
	get, perr := jsonSource(body)
	if perr != nil {
		invalid(w, perr.param, perr.code, perr.msg)
		return
	}
	j, perr := readJob(get, a.r.Model(), "image_generation")
	if perr != nil {
		invalid(w, perr.param, perr.code, perr.msg)
		return
	}
	a.answer(w, r, j)
}

func tooLarge(w http.ResponseWriter, max int64) {
	w.Header().Set("Connection", "close")
	WriteError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than this server's cap of %d MB: send smaller images", max>>20), "invalid_request_error", "", "request_too_large")
}

// answer renders j and answers it: one JSON response, or with stream server-sent events (the
// live previews as partial images, then each image completed).
func (a *API) answer(w http.ResponseWriter, r *http.Request, j *job) {
	j.req.Kind, j.req.Origin = "openai "+j.event, clientHost(r)
	if j.stream {
		a.stream(w, r, j)
		return
	}
	res, err := a.r.Render(r.Context(), j.req, nil)
	if err != nil {
		if !errors.Is(err, render.ErrGone) {
			renderError(w, err)
		}
		return
	}
	if len(res.Pictures) == 0 {
		WriteError(w, http.StatusInternalServerError, "no image was made (the request was interrupted or skipped)", "server_error", "", "interrupted")
		return
	}
	data := []map[string]any{}
	for _, p := range res.Pictures {
		enc, err := encode(p, j)
		if err != nil {
			WriteError(w, http.StatusInternalServerError, err.Error(), "server_error", "", "encode_failed")
			return
		}
		if j.asURL {
			data = append(data, map[string]any{"url": a.files.put(r, enc, j.format)})
		} else {
			data = append(data, map[string]any{"b64_json": b64(enc)})
		}
	}
	first := res.Pictures[0].Image.Rect
	resp := j.envelope(first.Dx(), first.Dy())
	resp["created"], resp["data"] = time.Now().Unix(), data
	if w := append(j.notes, res.Warnings...); len(w) > 0 {
		resp["easel_warnings"] = w
	}
	writeJSON(w, http.StatusOK, resp)
}

// envelope is the response's description of the images (OpenAI's fields around data).
func (j *job) envelope(w, h int) map[string]any {
	bg := "opaque"
	if j.transparent {
		bg = "transparent"
	}
	q := j.quality
	if q == "auto" || q == "standard" || q == "hd" {
		q = "high"
	}
	return map[string]any{"background": bg, "output_format": j.format, "quality": q,
		"size": fmt.Sprintf("%dx%d", w, h),
		"usage": map[string]any{"input_tokens": 0, "output_tokens": 0, "total_tokens": 0,
			"input_tokens_details": map[string]any{"image_tokens": 0, "text_tokens": 0}}}
}
