package comfy

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"strings"
	"testing"
)

// qwenTemplate is ComfyUI's Qwen-Image template in API format (its node ids and wiring), with a
// client's values.
const qwenTemplate = `{
 "3": {"class_type": "KSampler", "inputs": {"seed": 123456789012345, "steps": 20, "cfg": 2.5, "sampler_name": "euler", "scheduler": "simple",
       "denoise": 1, "model": ["66", 0], "positive": ["6", 0], "negative": ["7", 0], "latent_image": ["58", 0]}},
 "6": {"class_type": "CLIPTextEncode", "inputs": {"text": "a lighthouse", "clip": ["38", 0]}},
 "7": {"class_type": "CLIPTextEncode", "inputs": {"text": "", "clip": ["38", 0]}},
 "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["39", 0]}},
 "37": {"class_type": "UNETLoader", "inputs": {"unet_name": "qwen_image_fp8_e4m3fn.safetensors", "weight_dtype": "default"}},
 "38": {"class_type": "CLIPLoader", "inputs": {"clip_name": "qwen_2.5_vl_7b_fp8_scaled.safetensors", "type": "qwen_image", "device": "default"}},
 "39": {"class_type": "VAELoader", "inputs": {"vae_name": "qwen_image_vae.safetensors"}},
 "58": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1328, "height": 1328, "batch_size": 2}},
 "60": {"class_type": "SaveImage", "inputs": {"filename_prefix": "ComfyUI", "images": ["8", 0]}},
 "66": {"class_type": "ModelSamplingAuraFlow", "inputs": {"shift": 3.1, "model": ["37", 0]}}
}`

func none(string) ([]byte, bool) { return nil, false }

// TestQwenTemplate: the template's values (a seed above 2^53 kept exactly, steps, CFG, both
// prompts, the SD3 latent's size and batch) become the request; a loader name that is not one of
// the server's models is said, the current model used.
func TestQwenTemplate(t *testing.T) {
	outs, errs, msg := parseGraph(json.RawMessage(qwenTemplate), none, func(string) bool { return false })
	if msg != "" || len(outs) != 1 {
		t.Fatalf("%s %+v", msg, errs)
	}
	r := outs[0].req
	if r.Seed != 123456789012345 || r.Steps != 20 || r.CFG != 2.5 || r.Prompt != "a lighthouse" || r.Negative != "" ||
		r.Width != 1328 || r.Height != 1328 || r.Count != 2 || r.Model != "" || r.Start != nil {
		t.Errorf("request %+v", r)
	}
	if outs[0].id != "60" || len(outs[0].notes) != 1 || !strings.Contains(outs[0].notes[0], "qwen_image_fp8_e4m3fn") {
		t.Errorf("output %s notes %v", outs[0].id, outs[0].notes)
	}
	outs, _, _ = parseGraph(json.RawMessage(strings.Replace(qwenTemplate, "qwen_image_fp8_e4m3fn.safetensors", "tiny.cmf", 1)), none,
		func(n string) bool { return n == "tiny.cmf" })
	if outs[0].req.Model != "tiny.cmf" {
		t.Errorf("a loader naming the server's model: %q", outs[0].req.Model)
	}
}

// TestGraphLinksAndImages: a value linked to a primitive node is read through the link;
// KSamplerAdvanced's start_at_step is the strength of a LoadImage + VAEEncode start image;
// an unknown node type is refused naming it (every one, once).
func TestGraphLinksAndImages(t *testing.T) {
	var buf bytes.Buffer
	png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 64, 32)))
	input := func(n string) ([]byte, bool) { return buf.Bytes(), n == "in.png" }
	wf := `{
 "1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "x.safetensors"}},
 "2": {"class_type": "PrimitiveStringMultiline", "inputs": {"value": "from a primitive"}},
 "3": {"class_type": "CLIPTextEncode", "inputs": {"text": ["2", 0], "clip": ["1", 1]}},
 "4": {"class_type": "CLIPTextEncode", "inputs": {"text": "blurry", "clip": ["1", 1]}},
 "5": {"class_type": "LoadImage", "inputs": {"image": "in.png"}},
 "6": {"class_type": "VAEEncode", "inputs": {"pixels": ["5", 0], "vae": ["1", 2]}},
 "7": {"class_type": "PrimitiveInt", "inputs": {"value": 8}},
 "8": {"class_type": "KSamplerAdvanced", "inputs": {"add_noise": "enable", "noise_seed": 4, "steps": ["7", 0], "cfg": 1, "sampler_name": "dpmpp_2m",
       "scheduler": "karras", "positive": ["3", 0], "negative": ["4", 0], "latent_image": ["6", 0], "model": ["1", 0],
       "start_at_step": 2, "end_at_step": 10000, "return_with_leftover_noise": "disable"}},
 "9": {"class_type": "VAEDecode", "inputs": {"samples": ["8", 0], "vae": ["1", 2]}},
 "10": {"class_type": "PreviewImage", "inputs": {"images": ["9", 0]}}
}`
	outs, errs, msg := parseGraph(json.RawMessage(wf), input, func(string) bool { return false })
	if msg != "" {
		t.Fatalf("%s %+v", msg, errs)
	}
	o := outs[0]
	if r := o.req; r.Prompt != "from a primitive" || r.Negative != "blurry" || r.Steps != 8 || r.Seed != 4 || r.Start == nil ||
		r.Start.Strength != 0.75 || r.Start.Image.Rect.Dx() != 64 || !o.temp {
		t.Errorf("request %+v temp %v", r, o.temp)
	}
	if n := strings.Join(o.notes, "; "); !strings.Contains(n, "dpmpp_2m") || !strings.Contains(n, "karras") {
		t.Errorf("notes %q", n)
	}
	bad := strings.Replace(wf, `"class_type": "PreviewImage"`, `"class_type": "UpscaleModelLoader"`, 1)
	bad = strings.Replace(bad, `"class_type": "PrimitiveInt"`, `"class_type": "UpscaleModelLoader"`, 1)
	_, errs, msg = parseGraph(json.RawMessage(bad), input, func(string) bool { return false })
	if strings.Count(msg, "UpscaleModelLoader") != 1 || len(errs) != 2 {
		t.Errorf("unknown nodes: %q %+v", msg, errs)
	}
	missing := strings.Replace(wf, `"image": "in.png"`, `"image": "other.png"`, 1)
	if _, errs, _ := parseGraph(json.RawMessage(missing), input, func(string) bool { return false }); len(errs) != 1 || errs[0].id != "5" {
		t.Errorf("an image never uploaded: %+v", errs)
	}
}
