package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"

	"easel/engine/cmf"
	"easel/engine/cmf/serdejson"
	"easel/engine/sched"
)

// The JSON blobs stored as u8 tensors ahead of the weights (cmf.md §10.3), and the header's arch
// and provenance (§10.1). Geometry is read from the blobs, never from arch.

// archName is the header arch_name cortiq's engine requires of a Qwen-Image-2.1 file.
const archName = "qwen_image21"

// blob is one JSON config tensor.
type blob struct {
	name string
	data []byte
}

// snapshotConfigs are the snapshot's small files the container carries.
type snapshotConfigs struct {
	dit, vae, scheduler, tokenizer []byte
	processor                      []byte // processor/processor_config.json when the snapshot has one
	textConfig, visionConfig       map[string]any
	ditInChannels                  any
	// sampleSigmas is a distilled checkpoint's fixed grid (qi21-spec §5.5): model_index.json's
	// sample_sigmas, or the Turbo grid when the scheduler is configured for a fixed grid (no
	// dynamic shifting, shift 1, no terminal stretch) and the index lacks the list. nil for the
	// base model.
	sampleSigmas []float64
}

// readConfigs reads and checks model_index.json and the component configs.
func readConfigs(root string) (*snapshotConfigs, error) {
	var index struct {
		Class string `json:"_class_name"`
	}
	var files configFiles
	var err error
	if files.index, err = readJSON(root, "model_index.json", &index); err != nil {
		return nil, fmt.Errorf("%s is not a Hugging Face pipeline snapshot: %w", root, err)
	}
	if index.Class != pipelineClass {
		return nil, fmt.Errorf("%s is a %q snapshot, not Qwen-Image-2.1 (%s): choose the Qwen-Image-2.1 folder", root, index.Class, pipelineClass)
	}
	if files.dit, err = readJSON(root, filepath.Join("transformer", "config.json"), new(map[string]any)); err != nil {
		return nil, err
	}
	if files.textEncoder, err = readJSON(root, filepath.Join("text_encoder", "config.json"), nil); err != nil {
		return nil, err
	}
	if files.vae, err = readJSON(root, filepath.Join("vae", "config.json"), nil); err != nil {
		return nil, err
	}
	if files.scheduler, err = readJSON(root, filepath.Join("scheduler", "scheduler_config.json"), nil); err != nil {
		return nil, err
	}
	if files.tokenizer, err = readJSON(root, filepath.Join("processor", "tokenizer.json"), nil); err != nil {
		return nil, err
	}
	// The image-processor settings decide the size condition images are encoded at. Optional:
	// without them the stock Qwen3-VL settings apply.
	for _, name := range []string{"processor_config.json", "preprocessor_config.json"} {
		raw, err := readJSON(root, filepath.Join("processor", name), new(map[string]any))
		if err == nil {
			files.processor = raw
			break
		}
		if !errors.Is(err, errMissingFile) {
			return nil, err
		}
	}
	return files.parse()
}

// configFiles are the raw bytes of a snapshot's small files.
type configFiles struct {
	index, dit, textEncoder, vae, scheduler, tokenizer, processor []byte
}

// parse checks the component configs and keeps what the container carries.
func (f configFiles) parse() (*snapshotConfigs, error) {
	c := snapshotConfigs{dit: f.dit, vae: f.vae, scheduler: f.scheduler, tokenizer: f.tokenizer, processor: f.processor}
	var dit struct {
		Class      string      `json:"_class_name"`
		InChannels json.Number `json:"in_channels"`
	}
	if err := json.Unmarshal(f.dit, &dit); err != nil {
		return nil, fmt.Errorf("transformer/config.json is not valid JSON: %v; %s", err, redownload)
	}
	if dit.Class != "QwenImage21Transformer2DModel" {
		return nil, fmt.Errorf("transformer/config.json describes a %q, not QwenImage21Transformer2DModel", dit.Class)
	}
	if dit.InChannels != "" {
		c.ditInChannels = dit.InChannels
	}
	te, err := serdejson.Parse(f.textEncoder)
	if err != nil {
		return nil, fmt.Errorf("text_encoder/config.json: %v", err)
	}
	teObj, _ := te.(map[string]any)
	if c.textConfig, _ = teObj["text_config"].(map[string]any); c.textConfig == nil {
		return nil, fmt.Errorf("text_encoder/config.json has no text_config object: it is not a Qwen3-VL text encoder")
	}
	c.visionConfig, _ = teObj["vision_config"].(map[string]any)
	if c.sampleSigmas, err = fixedGrid(f.index, c.scheduler); err != nil {
		return nil, err
	}
	return &c, nil
}

// processorBlob holds processor/processor_config.json verbatim (an Easel addition to cortiq's
// layout; readers that do not know it ignore it). It must match condimage.ImageProcessorTensor.
const processorBlob = "qi21.processor_json"

// fixedGrid is a distilled checkpoint's sigma grid, or nil for the step-count schedule.
func fixedGrid(index, scheduler []byte) ([]float64, error) {
	sigmas, err := sched.SampleSigmas(index)
	if err != nil {
		return nil, fmt.Errorf("model_index.json: %v", err)
	}
	if sigmas != nil {
		return sigmas, nil
	}
	cfg, err := sched.ParseConfig(scheduler)
	if err != nil {
		return nil, fmt.Errorf("scheduler/scheduler_config.json: %v", err)
	}
	if t := sched.TurboConfig(); !cfg.UseDynamicShifting && cfg.Shift == t.Shift && cfg.ShiftTerminal == 0 {
		return sched.TurboSampleSigmas(), nil
	}
	return nil, nil
}

// defaults are the pipeline defaults stored as qi21.config_json: the published ones, or for a
// distilled checkpoint its grid's step count, CFG off and the grid itself.
func (c *snapshotConfigs) defaults() map[string]any {
	d := map[string]any{
		"steps": 40, "height": 1024, "width": 1024, "cfg": 1.0, "output_resolution": 1024,
		"system_prompt": "Comprehend and analyze the provided prompt.",
		"vae_scale":     16, "latent_channels": c.ditInChannels,
	}
	if c.sampleSigmas != nil {
		grid := make([]any, len(c.sampleSigmas))
		for i, v := range c.sampleSigmas {
			grid[i] = v
		}
		d["steps"], d["sample_sigmas"] = len(c.sampleSigmas), grid
	}
	return d
}

// blobs are the config tensors in cortiq's order; vis.config_json only with the vision tower.
func (c *snapshotConfigs) blobs(vision bool) ([]blob, error) {
	te := make(map[string]any, len(c.textConfig)+2)
	for k, v := range c.textConfig {
		te[k] = v
	}
	te["final_norm"] = false
	te["cortiq_tap"] = "hidden_states[-1] before the final norm"
	teJSON, err := serdejson.MarshalPretty(te)
	if err != nil {
		return nil, fmt.Errorf("text_config: %v", err)
	}
	defaults, err := serdejson.MarshalPretty(c.defaults())
	if err != nil {
		return nil, err
	}
	out := []blob{
		{"dit.config_json", c.dit},
		{"te.config_json", teJSON},
		{"vae.config_json", c.vae},
		{"qi21.config_json", defaults},
		{"qi21.scheduler_json", c.scheduler},
	}
	if vision {
		vis, err := serdejson.MarshalPretty(c.visionConfig)
		if err != nil {
			return nil, fmt.Errorf("vision_config: %v", err)
		}
		out = append(out, blob{"vis.config_json", vis})
		if c.processor != nil {
			out = append(out, blob{processorBlob, c.processor})
		}
	}
	return out, nil
}

// arch describes the text encoder in the header, as cortiq does.
func (c *snapshotConfigs) arch() (cmf.Arch, error) {
	tc := c.textConfig
	var missing []string
	num := func(key string) int {
		n, ok := tc[key].(json.Number)
		if !ok {
			missing = append(missing, key)
			return 0
		}
		i, err := n.Int64()
		if err != nil {
			missing = append(missing, key)
		}
		return int(i)
	}
	a := cmf.Arch{
		Name:                  archName,
		HiddenSize:            num("hidden_size"),
		IntermediateSize:      num("intermediate_size"),
		NumLayers:             num("num_hidden_layers"),
		NumAttentionHeads:     num("num_attention_heads"),
		NumKVHeads:            num("num_key_value_heads"),
		HeadDim:               num("head_dim"),
		VocabSize:             num("vocab_size"),
		MaxPositionEmbeddings: num("max_position_embeddings"),
	}
	if eps, ok := tc["rms_norm_eps"].(json.Number); ok {
		a.RMSNormEps, _ = eps.Float64()
	} else {
		missing = append(missing, "rms_norm_eps")
	}
	if len(missing) > 0 {
		return cmf.Arch{}, fmt.Errorf("text_encoder/config.json text_config lacks %v", missing)
	}
	a.LayerTypes = make([]string, a.NumLayers)
	for i := range a.LayerTypes {
		a.LayerTypes[i] = "FullAttention"
	}
	zero := 0
	a.LinearConvKernelDim, a.LinearNumKeyHeads, a.LinearNumValueHeads = &zero, &zero, &zero
	return a, nil
}

// provenance records how the file was made, with cortiq's keys.
func provenance(root string, p Profile, c *snapshotConfigs, vision bool) (json.RawMessage, error) {
	cd := p.codecs()
	visComponent := "omitted"
	if vision {
		visComponent = "qwen3-vl vision tower + deepstack mergers"
	}
	v := map[string]any{
		"tool":     "easel convert",
		"pipeline": "qwen-image-2.1",
		"profile":  string(p),
		"components": map[string]any{
			"te":  fmt.Sprintf("qwen3-vl language model (%v layers, pre-norm output)", c.textConfig["num_hidden_layers"]),
			"vis": visComponent,
			"dit": "QwenImage21Transformer2DModel",
			"vae": "AutoencoderKLQwenImage21 (2-D)",
		},
		"packed_from":        root,
		"dit_codec":          cd.dit.name(),
		"dit_keep_q8_2f":     []any{},
		"te_codec":           cd.te.name(),
		"te_keep_bf16":       []any{},
		"vis_codec":          cd.vis.name(),
		"vae_codec":          cd.vae.name(),
		"defaults":           c.defaults(),
		"source_sha256":      map[string]any{},
		"tensor_name_policy": "diffusers names under dit./vae., HF names under te./vis.",
	}
	b, err := serdejson.Marshal(v)
	return json.RawMessage(b), err
}
