package serve

import (
	"bytes"
	"encoding/json"
	"net/http"

	"easel/app/imagefile"
)

// pngInfo answers POST /sdapi/v1/png-info {image}: the image's A1111 `parameters` text as
// `info`, every text chunk in `items`, and the parameters parsed (Easel's own settings when the
// image is one of Easel's).
func (s *Server) pngInfo(w http.ResponseWriter, r *http.Request) {
	f := s.readRequest(w, r)
	if f == nil {
		return
	}
	img := f.Str("image", "")
	if len(f.errs) > 0 {
		unprocessable(w, f.errs)
		return
	}
	data, ok := requiredImage(w, img)
	if !ok {
		return
	}
	m, err := imagefile.Read(bytes.NewReader(data), "image")
	if err != nil {
		writeJSON(w, http.StatusOK, map[string]any{"info": "", "items": map[string]any{}, "parameters": map[string]any{}})
		return
	}
	items := map[string]any{}
	for k, v := range m.Text {
		items[k] = v
	}
	params := map[string]any{}
	if m.Settings != nil {
		b, _ := json.Marshal(m.Settings)
		json.Unmarshal(b, &params)
	}
	writeJSON(w, http.StatusOK, map[string]any{"info": m.Parameters, "items": items, "parameters": params})
}

// requiredImage decodes a request's required base64 "image" field (A1111's png-info and
// interrogate), answering 422 with the field named when it is missing or not base64.
func requiredImage(w http.ResponseWriter, img string) ([]byte, bool) {
	if img == "" {
		unprocessable(w, []detailItem{{Loc: []any{"body", "image"}, Msg: "field required", Type: "value_error.missing"}})
		return nil, false
	}
	data, err := decodeBase64(img)
	if err != nil {
		unprocessable(w, []detailItem{{Loc: []any{"body", "image"}, Msg: "image is " + err.Error(), Type: "value_error"}})
		return nil, false
	}
	return data, true
}
