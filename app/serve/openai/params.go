package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"easel/app/compose"
	"easel/app/serve/render"
)

// job is a generations or edits request as read: the render request and how to answer it.
type job struct {
	req         render.Request
	size        string // "WxH" as made ("auto" until then)
	quality     string
	transparent bool   // background "transparent": the model's alpha kept
	format      string // png, jpeg, webp
	compression int    // 0–100, for jpeg
	asURL       bool   // response_format "url"
	stream      bool
	partials    int // partial_images, 0–3
	event       string
	notes       []string // what was not done as asked (easel_warnings)
}

// paramError is a parameter the client must change.
type paramError struct{ param, code, msg string }

// source gives a request's parameters as text (absent: ok false).
type source func(name string) (string, bool)

// jsonSource reads a JSON object's members: strings as they are, numbers and booleans as
// written, null as absent.
func jsonSource(body []byte) (source, *paramError) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, &paramError{"", "invalid_json", "the body is not a JSON object: send the parameters as JSON (Content-Type: application/json)"}
	}
	return func(name string) (string, bool) {
		raw, ok := m[name]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			return "", false
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return string(bytes.TrimSpace(raw)), true
	}, nil
}

// quality names and the share of the model's steps each runs (quality.go's table, documented in
// docs/A1111-API.md): low a quarter, medium a half, anything higher the model's own.
var qualityShare = map[string]float64{"low": 0.25, "medium": 0.5, "high": 1, "xhigh": 1, "max": 1, "auto": 1, "standard": 1, "hd": 1}

// readJob reads the parameters generations and edits share. Easel's extensions: seed, steps,
// guidance_scale, negative_prompt.
func readJob(get source, model render.Model, event string) (*job, *paramError) {
	defaultSteps := model.Defaults.Steps
	j := &job{event: event, quality: "auto", format: "png", compression: 100, size: "auto"}
	prompt, ok := get("prompt")
	if !ok || strings.TrimSpace(prompt) == "" {
		return nil, &paramError{"prompt", "missing_required_parameter", "Missing required parameter: 'prompt'."}
	}
	j.req.Prompt = prompt
	j.req.Negative, _ = get("negative_prompt")
	j.req.RandomSeed = true
	if m, ok := get("model"); ok { // a model of the server's folder; any other name (gpt-image-1) the current one
		for _, n := range model.Names {
			if m == n || m == stem(n) {
				j.req.Model = n
			}
		}
		if j.req.Model == "" {
			j.notes = append(j.notes, fmt.Sprintf("model %q is not one of this server's (GET /v1/models lists them): %s was used", m, stem(model.Name)))
		}
	}
	n, perr := intParam(get, "n", 1, 1, 10)
	if perr != nil {
		return nil, perr
	}
	j.req.Count = n
	if s, ok := get("size"); ok && s != "auto" {
		w, h, err := parseSize(s)
		if err != nil {
			return nil, &paramError{"size", "invalid_value", err.Error()}
		}
		j.req.Width, j.req.Height, j.size = w, h, fmt.Sprintf("%dx%d", w, h)
	}
	if q, ok := get("quality"); ok {
		share, known := qualityShare[q]
		if !known {
			return nil, &paramError{"quality", "invalid_value", fmt.Sprintf("Invalid value for 'quality': %q. Supported values are: 'low', 'medium', 'high' and 'auto'.", q)}
		}
		j.quality = q
		if share < 1 && defaultSteps > 0 {
			j.req.Steps = max(1, int(math.Round(float64(defaultSteps)*share)))
		}
	}
	steps, perr := intParam(get, "steps", j.req.Steps, 1, 1000)
	if perr != nil {
		return nil, perr
	}
	j.req.Steps = steps
	if s, ok := get("seed"); ok {
		s = strings.TrimSpace(s)
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil && s != "-1" {
			return nil, &paramError{"seed", "invalid_value", fmt.Sprintf("Invalid value for 'seed': %q: give a whole number from 0 (or -1 for a random one).", s)}
		}
		j.req.Seed, j.req.RandomSeed = v, s == "-1"
	}
	if s, ok := get("guidance_scale"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
			return nil, &paramError{"guidance_scale", "invalid_value", fmt.Sprintf("Invalid value for 'guidance_scale': %q: give a number from 0 to 100 (above 1 uses the negative prompt).", s)}
		}
		j.req.CFG = v
	}
	if b, ok := get("background"); ok {
		switch b {
		case "transparent":
			j.transparent = true
		case "opaque", "auto":
		default:
			return nil, &paramError{"background", "invalid_value", fmt.Sprintf("Invalid value for 'background': %q. Supported values are: 'transparent', 'opaque' and 'auto'.", b)}
		}
	}
	if f, ok := get("output_format"); ok {
		switch f {
		case "png", "jpeg", "webp":
			j.format = f
		default:
			return nil, &paramError{"output_format", "invalid_value", fmt.Sprintf("Invalid value for 'output_format': %q. Supported values are: 'png', 'jpeg' and 'webp'.", f)}
		}
	}
	if j.transparent && j.format == "jpeg" {
		return nil, &paramError{"background", "invalid_value", "background 'transparent' needs an output_format that keeps alpha: 'png' or 'webp'."}
	}
	c, perr := intParam(get, "output_compression", 100, 0, 100)
	if perr != nil {
		return nil, perr
	}
	j.compression = c
	if rf, ok := get("response_format"); ok {
		switch rf {
		case "b64_json":
		case "url":
			j.asURL = true
		default:
			return nil, &paramError{"response_format", "invalid_value", fmt.Sprintf("Invalid value for 'response_format': %q. Supported values are: 'b64_json' and 'url'.", rf)}
		}
	}
	if s, ok := get("stream"); ok {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, &paramError{"stream", "invalid_value", fmt.Sprintf("Invalid value for 'stream': %q: true or false.", s)}
		}
		j.stream = b
	}
	p, perr := intParam(get, "partial_images", 0, 0, 3)
	if perr != nil {
		return nil, perr
	}
	j.partials = p
	return j, nil
}

// intParam reads a whole-number parameter in [lo, hi].
func intParam(get source, name string, def, lo, hi int) (int, *paramError) {
	s, ok := get(name)
	if !ok {
		return def, nil
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || v < lo || v > hi {
		return 0, &paramError{name, "invalid_value", fmt.Sprintf("Invalid value for '%s': %q: give a whole number from %d to %d.", name, s, lo, hi)}
	}
	return v, nil
}

// parseSize reads "WxH": each side from 32 to 4096 pixels (a side that is not a multiple of 32 is
// rendered at the next one and centre-cropped, as the A1111 routes do).
func parseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	w, err1 := strconv.Atoi(ws)
	h, err2 := strconv.Atoi(hs)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("Invalid value for 'size': %q: write it WIDTHxHEIGHT in pixels (like 1024x1024), or 'auto'.", s)
	}
	if w < compose.SizeMultiple || h < compose.SizeMultiple || w > compose.MaxSide || h > compose.MaxSide {
		return 0, 0, fmt.Errorf("Invalid value for 'size': %q: each side must be from %d to %d pixels.", s, compose.SizeMultiple, compose.MaxSide)
	}
	return w, h, nil
}
