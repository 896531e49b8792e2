package comfy

import "net/http"

// objectInfo answers GET /object_info (and /object_info/{class}): the node types Easel
// understands in ComfyUI's shape, the server's models listed where a loader asks for a name (a
// client fills its model menu from CheckpointLoaderSimple's ckpt_name).
func (a *API) objectInfo(w http.ResponseWriter, r *http.Request) {
	all := a.nodeInfo()
	if c := r.PathValue("class"); c != "" {
		out := map[string]any{}
		if info, ok := all[c]; ok {
			out[c] = info
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	writeJSON(w, http.StatusOK, all)
}

// spec is one input's ComfyUI type spec.
type spec []any

func intSpec(def, lo, hi int) spec {
	return spec{"INT", map[string]any{"default": def, "min": lo, "max": hi}}
}
func floatSpec(def, lo, hi, step float64) spec {
	return spec{"FLOAT", map[string]any{"default": def, "min": lo, "max": hi, "step": step}}
}
func textSpec(multiline bool) spec {
	return spec{"STRING", map[string]any{"multiline": multiline, "dynamicPrompts": multiline}}
}
func linkSpec(typ string) spec { return spec{typ} }

// nodeDef describes a node type.
type nodeDef struct {
	inputs   [][2]any // name, spec, in order
	outputs  []string
	category string
	output   bool
}

func (a *API) nodeInfo() map[string]any {
	m := a.r.Model()
	models := m.Names
	d := m.Defaults
	samplers := spec{[]string{"euler"}}
	schedulers := spec{[]string{"simple", "normal"}}
	sampler := func(advanced bool) [][2]any {
		in := [][2]any{{"model", linkSpec("MODEL")}}
		if advanced {
			in = append(in, [2]any{"add_noise", spec{[]string{"enable", "disable"}}}, [2]any{"noise_seed", intSpec(0, 0, 1<<63-1)})
		} else {
			in = append(in, [2]any{"seed", intSpec(0, 0, 1<<63-1)})
		}
		in = append(in, [2]any{"steps", intSpec(max(d.Steps, 1), 1, 1000)}, [2]any{"cfg", floatSpec(max(d.CFG, 1), 0, 100, 0.1)},
			[2]any{"sampler_name", samplers}, [2]any{"scheduler", schedulers},
			[2]any{"positive", linkSpec("CONDITIONING")}, [2]any{"negative", linkSpec("CONDITIONING")}, [2]any{"latent_image", linkSpec("LATENT")})
		if advanced {
			in = append(in, [2]any{"start_at_step", intSpec(0, 0, 10000)}, [2]any{"end_at_step", intSpec(10000, 0, 10000)},
				[2]any{"return_with_leftover_noise", spec{[]string{"disable", "enable"}}})
		} else {
			in = append(in, [2]any{"denoise", floatSpec(1, 0, 1, 0.01)})
		}
		return in
	}
	latent := [][2]any{{"width", intSpec(max(d.Width, 512), 32, 4096)}, {"height", intSpec(max(d.Height, 512), 32, 4096)}, {"batch_size", intSpec(1, 1, 64)}}
	defs := map[string]nodeDef{
		"CheckpointLoaderSimple":   {inputs: [][2]any{{"ckpt_name", spec{models}}}, outputs: []string{"MODEL", "CLIP", "VAE"}, category: "loaders"},
		"UNETLoader":               {inputs: [][2]any{{"unet_name", spec{models}}, {"weight_dtype", spec{[]string{"default"}}}}, outputs: []string{"MODEL"}, category: "advanced/loaders"},
		"CLIPLoader":               {inputs: [][2]any{{"clip_name", spec{models}}, {"type", spec{[]string{"qwen_image"}}}}, outputs: []string{"CLIP"}, category: "advanced/loaders"},
		"VAELoader":                {inputs: [][2]any{{"vae_name", spec{models}}}, outputs: []string{"VAE"}, category: "loaders"},
		"ModelSamplingAuraFlow":    {inputs: [][2]any{{"model", linkSpec("MODEL")}, {"shift", floatSpec(3.1, 0, 100, 0.01)}}, outputs: []string{"MODEL"}, category: "advanced/model"},
		"CLIPTextEncode":           {inputs: [][2]any{{"text", textSpec(true)}, {"clip", linkSpec("CLIP")}}, outputs: []string{"CONDITIONING"}, category: "conditioning"},
		"KSampler":                 {inputs: sampler(false), outputs: []string{"LATENT"}, category: "sampling"},
		"KSamplerAdvanced":         {inputs: sampler(true), outputs: []string{"LATENT"}, category: "sampling"},
		"EmptyLatentImage":         {inputs: latent, outputs: []string{"LATENT"}, category: "latent"},
		"EmptySD3LatentImage":      {inputs: latent, outputs: []string{"LATENT"}, category: "latent/sd3"},
		"LoadImage":                {inputs: [][2]any{{"image", spec{a.uploadNames(), map[string]any{"image_upload": true}}}}, outputs: []string{"IMAGE", "MASK"}, category: "image"},
		"VAEEncode":                {inputs: [][2]any{{"pixels", linkSpec("IMAGE")}, {"vae", linkSpec("VAE")}}, outputs: []string{"LATENT"}, category: "latent"},
		"VAEDecode":                {inputs: [][2]any{{"samples", linkSpec("LATENT")}, {"vae", linkSpec("VAE")}}, outputs: []string{"IMAGE"}, category: "latent"},
		"SaveImage":                {inputs: [][2]any{{"images", linkSpec("IMAGE")}, {"filename_prefix", spec{"STRING", map[string]any{"default": "ComfyUI"}}}}, category: "image", output: true},
		"PreviewImage":             {inputs: [][2]any{{"images", linkSpec("IMAGE")}}, category: "image", output: true},
		"PrimitiveInt":             {inputs: [][2]any{{"value", intSpec(0, -1<<63, 1<<63-1)}}, outputs: []string{"INT"}, category: "utils/primitive"},
		"PrimitiveFloat":           {inputs: [][2]any{{"value", floatSpec(0, -1e300, 1e300, 0.01)}}, outputs: []string{"FLOAT"}, category: "utils/primitive"},
		"PrimitiveString":          {inputs: [][2]any{{"value", textSpec(false)}}, outputs: []string{"STRING"}, category: "utils/primitive"},
		"PrimitiveStringMultiline": {inputs: [][2]any{{"value", textSpec(true)}}, outputs: []string{"STRING"}, category: "utils/primitive"},
		"PrimitiveBoolean":         {inputs: [][2]any{{"value", spec{"BOOLEAN", map[string]any{"default": false}}}}, outputs: []string{"BOOLEAN"}, category: "utils/primitive"},
	}
	out := map[string]any{}
	for name, def := range defs {
		req, order := map[string]any{}, []string{}
		for _, in := range def.inputs {
			req[in[0].(string)] = in[1]
			order = append(order, in[0].(string))
		}
		outs := def.outputs
		if outs == nil {
			outs = []string{}
		}
		isList := make([]bool, len(outs))
		out[name] = map[string]any{"input": map[string]any{"required": req}, "input_order": map[string]any{"required": order},
			"output": outs, "output_is_list": isList, "output_name": outs, "name": name, "display_name": name,
			"description": "", "python_module": "nodes", "category": def.category, "output_node": def.output}
	}
	return out
}

// uploadNames are the uploaded images' names (LoadImage's choices).
func (a *API) uploadNames() []string {
	a.upMu.Lock()
	defer a.upMu.Unlock()
	return append([]string{}, a.upOrder...)
}
