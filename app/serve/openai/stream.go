package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"easel/app/serve/render"
)

// stream answers a request with "stream": true as OpenAI streams images: server-sent events
// named image_generation.partial_image (image_edit.… for edits) carrying the live previews, up to
// partial_images of them per image at evenly spaced steps, then one …completed event per image.
// A refusal before the first event is an ordinary error response; after it, an "error" event.
func (a *API) stream(w http.ResponseWriter, r *http.Request, j *job) {
	progress := make(chan render.Progress, 64)
	type outcome struct {
		res *render.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := a.r.Render(r.Context(), j.req, func(p render.Progress) {
			select { // the queue's reporting must not wait: a preview that finds no room is dropped
			case progress <- p:
			default:
			}
		})
		done <- outcome{res, err}
	}()
	started := false
	start := func() {
		if !started {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			started = true
		}
	}
	sent := map[int]int{} // partial images sent per image
	partial := func(p render.Progress) {
		k := sent[p.Index]
		if p.Preview == nil || k >= j.partials || p.Steps <= 0 || p.Step*(j.partials+1) < (k+1)*p.Steps {
			return
		}
		enc, err := encodeImage(p.Preview, nil, j)
		if err != nil {
			return
		}
		start()
		ev := j.envelope(p.Preview.Bounds().Dx(), p.Preview.Bounds().Dy())
		ev["type"], ev["b64_json"], ev["created_at"], ev["partial_image_index"] = j.event+".partial_image", b64(enc), time.Now().Unix(), k
		delete(ev, "usage")
		writeEvent(w, j.event+".partial_image", ev)
		sent[p.Index] = k + 1
	}
	for {
		select {
		case p := <-progress:
			partial(p)
		case out := <-done:
			for drained := false; !drained; { // the previews reported before the end come first
				select {
				case p := <-progress:
					partial(p)
				default:
					drained = true
				}
			}
			if out.err != nil {
				if errors.Is(out.err, render.ErrGone) {
					return
				}
				if !started {
					renderError(w, out.err)
					return
				}
				typ, code := "server_error", ""
				if re, ok := out.err.(*render.Error); ok {
					_, typ, code = errorStatus(re)
				}
				writeEvent(w, "error", map[string]any{"type": "error", "error": apiError{Message: out.err.Error(), Type: typ, Code: &code}})
				return
			}
			if len(out.res.Pictures) == 0 && !started {
				WriteError(w, http.StatusInternalServerError, "no image was made (the request was interrupted or skipped)", "server_error", "", "interrupted")
				return
			}
			start()
			for _, p := range out.res.Pictures {
				enc, err := encode(p, j)
				if err != nil {
					writeEvent(w, "error", map[string]any{"type": "error", "error": apiError{Message: err.Error(), Type: "server_error"}})
					return
				}
				ev := j.envelope(p.Image.Rect.Dx(), p.Image.Rect.Dy())
				ev["type"], ev["b64_json"], ev["created_at"] = j.event+".completed", b64(enc), time.Now().Unix()
				writeEvent(w, j.event+".completed", ev)
			}
			return
		}
	}
}

// writeEvent writes one server-sent event and flushes it.
func writeEvent(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	http.NewResponseController(w).Flush()
}
