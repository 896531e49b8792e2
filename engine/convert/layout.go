package convert

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// The tensors a Qwen-Image-2.1 snapshot holds, worked out from its configs alone: names and
// shapes as the diffusers and transformers constructors create them (qi21-spec.md §6.2, §10.5,
// Appendix A). The synthetic model is written from these lists; a test checks them against the
// tiny snapshot's real files. Tensors the converter drops anyway (the VAE's time_conv) are not listed;
// lm_head.weight is listed when the config unties it from the embedding.

// sourceTensor is one tensor of a snapshot: its name in its component and its shape.
type sourceTensor struct {
	name  string
	shape []int
}

// ditGeometry is transformer/config.json as the enumeration needs it.
type ditGeometry struct {
	Layers      int `json:"num_layers"`
	Heads       int `json:"num_attention_heads"`
	HeadDim     int `json:"attention_head_dim"`
	InChannels  int `json:"in_channels"`
	OutChannels int `json:"out_channels"`
	ContextDim  int `json:"context_in_dim"`
	MLPRatio    int `json:"mlp_ratio"`
}

// textGeometry is text_encoder/config.json as the enumeration needs it.
type textGeometry struct {
	Text struct {
		Hidden       int `json:"hidden_size"`
		Intermediate int `json:"intermediate_size"`
		Layers       int `json:"num_hidden_layers"`
		Heads        int `json:"num_attention_heads"`
		KVHeads      int `json:"num_key_value_heads"`
		HeadDim      int `json:"head_dim"`
		Vocab        int `json:"vocab_size"`
	} `json:"text_config"`
	// Tied is tie_word_embeddings: when false the snapshot has its own lm_head.weight.
	Tied   *bool `json:"tie_word_embeddings"`
	Vision *struct {
		Depth        int   `json:"depth"`
		Hidden       int   `json:"hidden_size"`
		Intermediate int   `json:"intermediate_size"`
		OutHidden    int   `json:"out_hidden_size"`
		InChannels   int   `json:"in_channels"`
		Patch        int   `json:"patch_size"`
		TemporalP    int   `json:"temporal_patch_size"`
		Merge        int   `json:"spatial_merge_size"`
		Positions    int   `json:"num_position_embeddings"`
		Deepstack    []int `json:"deepstack_visual_indexes"`
	} `json:"vision_config"`
}

// vaeGeometry is vae/config.json as the enumeration needs it.
type vaeGeometry struct {
	BaseDim        int   `json:"base_dim"`
	DecoderBaseDim int   `json:"decoder_base_dim"`
	ZDim           int   `json:"z_dim"`
	DimMult        []int `json:"dim_mult"`
	ResBlocks      int   `json:"num_res_blocks"`
	InChannels     int   `json:"in_channels"`
	OutChannels    int   `json:"out_channels"`
}

// parseGeometry decodes a config into g and checks that every listed count is positive.
func parseGeometry(name string, raw []byte, g any, counts ...*int) error {
	if err := json.Unmarshal(raw, g); err != nil {
		return fmt.Errorf("%s: %v", name, err)
	}
	for _, c := range counts {
		if *c <= 0 {
			return fmt.Errorf("%s lacks a size the model needs (a count is %d)", name, *c)
		}
	}
	return nil
}

// ditTensors lists transformer/ for its config (spec §6.2; no biases).
func ditTensors(raw []byte) ([]sourceTensor, error) {
	var g ditGeometry
	if err := parseGeometry("transformer/config.json", raw, &g, &g.Layers, &g.Heads, &g.HeadDim, &g.InChannels, &g.OutChannels, &g.ContextDim, &g.MLPRatio); err != nil {
		return nil, err
	}
	D := g.Heads * g.HeadDim
	F := D * g.MLPRatio
	ts := []sourceTensor{
		{"img_in.weight", []int{D, g.InChannels}},
		{"txt_in.text_norm.weight", []int{g.ContextDim}},
		{"txt_in.in_layer.weight", []int{D, g.ContextDim}},
		{"txt_in.out_layer.weight", []int{D, D}},
		{"time_text_embed.timestep_embedder.linear_1.weight", []int{D, 256}},
		{"time_text_embed.timestep_embedder.linear_2.weight", []int{D, D}},
		{"modulation.1.weight", []int{4 * D, D}},
		{"norm_out.linear.weight", []int{D, D}},
		{"proj_out.weight", []int{g.OutChannels, D}},
	}
	for l := range g.Layers {
		p := "transformer_blocks." + strconv.Itoa(l) + "."
		ts = append(ts,
			sourceTensor{p + "attn.to_q.weight", []int{D, D}},
			sourceTensor{p + "attn.to_k.weight", []int{D, D}},
			sourceTensor{p + "attn.to_v.weight", []int{D, D}},
			sourceTensor{p + "attn.to_out.0.weight", []int{D, D}},
			sourceTensor{p + "attn.norm_q.weight", []int{g.HeadDim}},
			sourceTensor{p + "attn.norm_k.weight", []int{g.HeadDim}},
			sourceTensor{p + "img_mlp.gate_layer.weight", []int{F, D}},
			sourceTensor{p + "img_mlp.proj.weight", []int{F, D}},
			sourceTensor{p + "img_mlp.out.weight", []int{D, F}},
		)
	}
	return ts, nil
}

// textEncoderTensors lists text_encoder/ for its config: the language model (spec §10.5) and,
// when the config has one, the vision tower (§10.4), under their transformers names.
func textEncoderTensors(raw []byte) ([]sourceTensor, error) {
	var g textGeometry
	t := &g.Text
	if err := parseGeometry("text_encoder/config.json", raw, &g, &t.Hidden, &t.Intermediate, &t.Layers, &t.Heads, &t.KVHeads, &t.HeadDim, &t.Vocab); err != nil {
		return nil, err
	}
	lm := "model.language_model."
	ts := []sourceTensor{{lm + "embed_tokens.weight", []int{t.Vocab, t.Hidden}}}
	for l := range t.Layers {
		p := lm + "layers." + strconv.Itoa(l) + "."
		ts = append(ts,
			sourceTensor{p + "input_layernorm.weight", []int{t.Hidden}},
			sourceTensor{p + "post_attention_layernorm.weight", []int{t.Hidden}},
			sourceTensor{p + "self_attn.q_proj.weight", []int{t.Heads * t.HeadDim, t.Hidden}},
			sourceTensor{p + "self_attn.k_proj.weight", []int{t.KVHeads * t.HeadDim, t.Hidden}},
			sourceTensor{p + "self_attn.v_proj.weight", []int{t.KVHeads * t.HeadDim, t.Hidden}},
			sourceTensor{p + "self_attn.o_proj.weight", []int{t.Hidden, t.Heads * t.HeadDim}},
			sourceTensor{p + "self_attn.q_norm.weight", []int{t.HeadDim}},
			sourceTensor{p + "self_attn.k_norm.weight", []int{t.HeadDim}},
			sourceTensor{p + "mlp.gate_proj.weight", []int{t.Intermediate, t.Hidden}},
			sourceTensor{p + "mlp.up_proj.weight", []int{t.Intermediate, t.Hidden}},
			sourceTensor{p + "mlp.down_proj.weight", []int{t.Hidden, t.Intermediate}},
		)
	}
	ts = append(ts, sourceTensor{lm + "norm.weight", []int{t.Hidden}})
	if g.Tied != nil && !*g.Tied {
		// An untied checkpoint (the published one) saves its own language head.
		ts = append(ts, sourceTensor{"lm_head.weight", []int{t.Vocab, t.Hidden}})
	}
	v := g.Vision
	if v == nil {
		return ts, nil
	}
	if err := parseGeometry("text_encoder/config.json vision_config", raw, &g, &v.Depth, &v.Hidden, &v.Intermediate, &v.OutHidden, &v.InChannels, &v.Patch, &v.TemporalP, &v.Merge, &v.Positions); err != nil {
		return nil, err
	}
	vis := "model.visual."
	H, merged := v.Hidden, v.Hidden*v.Merge*v.Merge
	linear := func(p string, out, in int) {
		ts = append(ts, sourceTensor{p + ".weight", []int{out, in}}, sourceTensor{p + ".bias", []int{out}})
	}
	norm := func(p string, n int) {
		ts = append(ts, sourceTensor{p + ".weight", []int{n}}, sourceTensor{p + ".bias", []int{n}})
	}
	ts = append(ts,
		sourceTensor{vis + "patch_embed.proj.weight", []int{H, v.InChannels, v.TemporalP, v.Patch, v.Patch}},
		sourceTensor{vis + "patch_embed.proj.bias", []int{H}},
		sourceTensor{vis + "pos_embed.weight", []int{v.Positions, H}},
	)
	for b := range v.Depth {
		p := vis + "blocks." + strconv.Itoa(b) + "."
		norm(p+"norm1", H)
		norm(p+"norm2", H)
		linear(p+"attn.qkv", 3*H, H)
		linear(p+"attn.proj", H, H)
		linear(p+"mlp.linear_fc1", v.Intermediate, H)
		linear(p+"mlp.linear_fc2", H, v.Intermediate)
	}
	norm(vis+"merger.norm", H)
	linear(vis+"merger.linear_fc1", merged, merged)
	linear(vis+"merger.linear_fc2", v.OutHidden, merged)
	for j := range v.Deepstack {
		p := vis + "deepstack_merger_list." + strconv.Itoa(j) + "."
		norm(p+"norm", merged)
		linear(p+"linear_fc1", merged, merged)
		linear(p+"linear_fc2", v.OutHidden, merged)
	}
	return ts, nil
}

// vaeTensors lists vae/ for its config (spec §8.3–8.5, Appendix A), time_conv left out.
func vaeTensors(raw []byte) ([]sourceTensor, error) {
	var g vaeGeometry
	if err := parseGeometry("vae/config.json", raw, &g, &g.BaseDim, &g.ZDim, &g.ResBlocks, &g.InChannels, &g.OutChannels); err != nil {
		return nil, err
	}
	if len(g.DimMult) == 0 {
		return nil, fmt.Errorf("vae/config.json has no dim_mult")
	}
	if g.DecoderBaseDim == 0 {
		g.DecoderBaseDim = g.BaseDim
	}
	var ts []sourceTensor
	conv := func(p string, out, in, k int) {
		ts = append(ts, sourceTensor{p + ".weight", []int{out, in, k, k}}, sourceTensor{p + ".bias", []int{out}})
	}
	resnet := func(p string, in, out int) {
		ts = append(ts, sourceTensor{p + ".norm1.gamma", []int{in, 1, 1, 1}})
		conv(p+".conv1", out, in, 3)
		ts = append(ts, sourceTensor{p + ".norm2.gamma", []int{out, 1, 1, 1}})
		conv(p+".conv2", out, out, 3)
		if in != out {
			conv(p+".conv_shortcut", out, in, 1)
		}
	}
	mid := func(p string, c int) {
		resnet(p+".resnets.0", c, c)
		ts = append(ts, sourceTensor{p + ".attentions.0.norm.gamma", []int{c, 1, 1}})
		conv(p+".attentions.0.to_qkv", 3*c, c, 1)
		conv(p+".attentions.0.proj", c, c, 1)
		resnet(p+".resnets.1", c, c)
	}
	stages := len(g.DimMult)
	enc := []int{g.BaseDim}
	for _, m := range g.DimMult {
		enc = append(enc, g.BaseDim*m)
	}
	conv("encoder.conv_in", enc[0], g.InChannels, 3)
	for i := range stages {
		in, out := enc[i], enc[i+1]
		p := "encoder.down_blocks." + strconv.Itoa(i)
		for j := range g.ResBlocks {
			resnet(p+".resnets."+strconv.Itoa(j), in, out)
			in = out
		}
		if i < stages-1 {
			conv(p+".downsampler.resample.1", out, out, 3)
		}
	}
	mid("encoder.mid_block", enc[stages])
	ts = append(ts, sourceTensor{"encoder.norm_out.gamma", []int{enc[stages], 1, 1, 1}})
	conv("encoder.conv_out", 2*g.ZDim, enc[stages], 3)
	conv("quant_conv", 2*g.ZDim, 2*g.ZDim, 1)
	conv("post_quant_conv", g.ZDim, g.ZDim, 1)

	dec := []int{g.DecoderBaseDim * g.DimMult[stages-1]}
	for i := stages - 1; i >= 0; i-- {
		dec = append(dec, g.DecoderBaseDim*g.DimMult[i])
	}
	conv("decoder.conv_in", dec[0], g.ZDim, 3)
	mid("decoder.mid_block", dec[0])
	for i := range stages {
		in, out := dec[i], dec[i+1]
		p := "decoder.up_blocks." + strconv.Itoa(i)
		for j := range g.ResBlocks + 1 {
			resnet(p+".resnets."+strconv.Itoa(j), in, out)
			in = out
		}
		if i < stages-1 {
			conv(p+".upsampler.resample.1", out, out, 3)
		}
	}
	ts = append(ts, sourceTensor{"decoder.norm_out.gamma", []int{dec[stages], 1, 1, 1}})
	conv("decoder.conv_out", g.OutChannels, dec[stages], 3)
	return ts, nil
}
