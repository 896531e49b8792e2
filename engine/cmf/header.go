package cmf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"easel/engine/cmf/serdejson"
)

// QuantTypes are the header quant_type strings cortiq accepts (informational: the per-tensor
// truth is in the directory). Any other string makes cortiq refuse the file.
var QuantTypes = []string{"Q8_ROW", "Q4_BLOCK", "Q8_2F", "VBIT", "BF16", "F16", "F32"}

// LayerTypes are the layer_types values every cortiq version accepts.
var LayerTypes = []string{"FullAttention", "SlidingAttention", "LinearAttention", "ShortConv", "Kda"}

// Header is the header JSON (cmf.md §3). The fields Easel uses are typed; every other key is kept
// verbatim in Extra, so rewriting a file preserves it.
type Header struct {
	Format          string          // "cmf"
	Version         uint32          // 2
	Arch            Arch            // for Qwen-Image-2.1: arch_name "qwen_image21" and the text encoder's geometry
	QuantType       string          // one of QuantTypes
	Provenance      json.RawMessage // free-form JSON; nil when absent
	TokenizerConfig json.RawMessage // nil when absent
	SectionHashes   *SectionHashes  // written by the writer from the sections it writes
	Extra           []Field         // skills, shard, calibration, routing, … verbatim, in file order
}

// Field is one key of a header JSON object with its value verbatim, as kept in Header.Extra and
// Arch.Extra.
type Field = serdejson.Field

// SectionHashes holds the Hash64 of the optional sections as 16 lowercase hex digits.
type SectionHashes struct {
	Masks string `json:"masks,omitempty"`
	Vocab string `json:"vocab,omitempty"`
	Index string `json:"index,omitempty"`
}

// Arch is the header's ModelArch. Qwen-Image-2.1 containers describe the text encoder here;
// the networks' real geometry is in the *.config_json tensors.
type Arch struct {
	Name                  string // arch_name
	HiddenSize            int
	IntermediateSize      int
	NumLayers             int
	NumAttentionHeads     int
	NumKVHeads            int
	HeadDim               int
	VocabSize             int
	LayerTypes            []string
	RMSNormEps            float64
	NormStyle             string  // "qwen" or "gemma"; "" writes the default, "qwen"
	RopeTheta             float64 // 0 writes the default, 10000
	TieWordEmbeddings     bool
	PartialRotaryFactor   float32 // 0 writes the default, 1
	MaxPositionEmbeddings int
	// cortiq always writes these three, as null or a number.
	LinearConvKernelDim, LinearNumKeyHeads, LinearNumValueHeads *int
	Extra                                                       []Field // other ModelArch keys, verbatim
}

// The serialization order of cortiq's CmfHeader and ModelArch (serde declaration order).
var (
	headerOrder = []string{"format", "version", "arch", "quant_type", "provenance", "tokenizer_config",
		"section_hashes", "skills", "shard", "calibration", "routing", "genome", "lineage", "router", "segments"}
	archOrder = []string{"arch_name", "hidden_size", "intermediate_size", "num_layers", "num_attention_heads",
		"num_kv_heads", "head_dim", "vocab_size", "layer_types", "rms_norm_eps", "norm_style", "rope_theta",
		"tie_word_embeddings", "partial_rotary_factor", "yarn", "attention_heads_per_layer", "hidden_act",
		"embed_multiplier", "query_pre_attn_scalar", "sliding_window", "sliding_window_pattern",
		"rope_local_base_freq", "local_partial_rotary_factor", "global_head_dim", "num_global_kv_heads",
		"global_partial_rotary_factor", "final_logit_softcapping", "mla", "activation_situ_beta",
		"activation_situ_linear_beta", "attn_logit_softcapping", "attn_v_norm", "qk_norm_after_rope", "mtp",
		"moe", "qwen4_exp", "deepseek_v41", "linear_core", "head_clusters", "max_position_embeddings",
		"linear_conv_kernel_dim", "linear_num_key_heads", "linear_num_value_heads", "linear_key_head_dim",
		"linear_value_head_dim", "rope_freq_factors", "logit_multiplier", "g3n", "kda_gate_lower_bound",
		"num_loops", "loop_final_norm", "prism_hadamard"}
)

// Get returns the verbatim value of an Extra key of the header, or nil.
func (h *Header) Get(key string) json.RawMessage { return lookup(h.Extra, key) }

func lookup(fields []Field, key string) json.RawMessage {
	for _, f := range fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// fieldReader decodes the fields of one JSON object into typed values, recording which keys it
// consumed and the first error, so that the caller can state every requirement in one place.
type fieldReader struct {
	where  string // "header" or "header arch"
	fields []Field
	used   map[string]bool
	err    error
}

func newFieldReader(where string, data []byte) (*fieldReader, error) {
	fields, err := serdejson.DecodeObject(data)
	if err != nil {
		return nil, fmt.Errorf("%s JSON: %v", where, err)
	}
	return &fieldReader{where: where, fields: fields, used: map[string]bool{}}, nil
}

// get decodes key into v; it reports whether the key was present (and not null).
func (r *fieldReader) get(key string, v any, required bool) bool {
	raw := lookup(r.fields, key)
	r.used[key] = true
	if raw == nil || bytes.Equal(raw, []byte("null")) {
		if required && r.err == nil {
			r.err = fmt.Errorf("%s lacks the required field %q", r.where, key)
		}
		return false
	}
	if err := json.Unmarshal(raw, v); err != nil && r.err == nil {
		r.err = fmt.Errorf("%s field %q: %v", r.where, key, err)
	}
	return true
}

func (r *fieldReader) getInt(key string, dst *int, required bool) {
	var u uint64
	if r.get(key, &u, required) {
		if u > math.MaxInt {
			if r.err == nil {
				r.err = fmt.Errorf("%s field %q: %d is too large", r.where, key, u)
			}
			return
		}
		*dst = int(u)
	}
}

func (r *fieldReader) getOptInt(key string) *int {
	var v int
	if lookup(r.fields, key) != nil && !bytes.Equal(lookup(r.fields, key), []byte("null")) {
		r.getInt(key, &v, false)
		return &v
	}
	r.used[key] = true
	return nil
}

// rest is every field not consumed, in order.
func (r *fieldReader) rest() []Field {
	var out []Field
	for _, f := range r.fields {
		if !r.used[f.Key] {
			out = append(out, f)
		}
	}
	return out
}

// parseHeader decodes the header JSON and checks what serde requires of it (cmf.md §3).
func parseHeader(data []byte) (Header, error) {
	var h Header
	r, err := newFieldReader("header", data)
	if err != nil {
		return h, err
	}
	h.Format = "cmf"
	r.get("format", &h.Format, false)
	r.get("version", &h.Version, true)
	var archRaw json.RawMessage
	r.get("arch", &archRaw, true)
	r.get("quant_type", &h.QuantType, true)
	if r.err == nil && !slices.Contains(QuantTypes, h.QuantType) {
		r.err = fmt.Errorf("header quant_type %q is not one of %v", h.QuantType, QuantTypes)
	}
	if r.get("provenance", &h.Provenance, false) {
		h.Provenance = slices.Clone(h.Provenance)
	}
	if r.get("tokenizer_config", &h.TokenizerConfig, false) {
		h.TokenizerConfig = slices.Clone(h.TokenizerConfig)
	}
	var sh SectionHashes
	if r.get("section_hashes", &sh, false) {
		h.SectionHashes = &sh
	}
	if r.err != nil {
		return h, r.err
	}
	if h.Arch, err = parseArch(archRaw); err != nil {
		return h, err
	}
	h.Extra = r.rest()
	return h, nil
}

func parseArch(data []byte) (Arch, error) {
	var a Arch
	r, err := newFieldReader("header arch", data)
	if err != nil {
		return a, err
	}
	r.get("arch_name", &a.Name, true)
	r.getInt("hidden_size", &a.HiddenSize, true)
	r.getInt("intermediate_size", &a.IntermediateSize, true)
	r.getInt("num_layers", &a.NumLayers, true)
	r.getInt("num_attention_heads", &a.NumAttentionHeads, true)
	r.getInt("num_kv_heads", &a.NumKVHeads, true)
	r.getInt("head_dim", &a.HeadDim, true)
	r.getInt("vocab_size", &a.VocabSize, true)
	r.get("layer_types", &a.LayerTypes, true)
	r.get("rms_norm_eps", &a.RMSNormEps, true)
	r.getInt("max_position_embeddings", &a.MaxPositionEmbeddings, true)
	a.NormStyle, a.RopeTheta, a.PartialRotaryFactor = "qwen", 10000, 1
	r.get("norm_style", &a.NormStyle, false)
	r.get("rope_theta", &a.RopeTheta, false)
	r.get("tie_word_embeddings", &a.TieWordEmbeddings, false)
	r.get("partial_rotary_factor", &a.PartialRotaryFactor, false)
	a.LinearConvKernelDim = r.getOptInt("linear_conv_kernel_dim")
	a.LinearNumKeyHeads = r.getOptInt("linear_num_key_heads")
	a.LinearNumValueHeads = r.getOptInt("linear_num_value_heads")
	if r.err == nil && a.NormStyle != "qwen" && a.NormStyle != "gemma" {
		r.err = fmt.Errorf("header arch norm_style %q is neither \"qwen\" nor \"gemma\"", a.NormStyle)
	}
	if r.err != nil {
		return a, r.err
	}
	a.Extra = r.rest()
	return a, nil
}

// check states what a writer must get right for cortiq to accept the header.
func (h *Header) check() error {
	if !slices.Contains(QuantTypes, h.QuantType) {
		return fmt.Errorf("header QuantType %q is not one of %v", h.QuantType, QuantTypes)
	}
	a := &h.Arch
	if a.Name == "" {
		return fmt.Errorf("header Arch.Name (arch_name) is empty; Qwen-Image-2.1 files use \"qwen_image21\"")
	}
	for _, lt := range a.LayerTypes {
		if !slices.Contains(LayerTypes, lt) {
			return fmt.Errorf("header Arch.LayerTypes holds %q, not one of %v", lt, LayerTypes)
		}
	}
	for _, n := range []int{a.HiddenSize, a.IntermediateSize, a.NumLayers, a.NumAttentionHeads, a.NumKVHeads, a.HeadDim, a.VocabSize, a.MaxPositionEmbeddings} {
		if n < 0 {
			return fmt.Errorf("header Arch has a negative size %d", n)
		}
	}
	if len(h.TokenizerConfig) > 0 {
		var tc struct {
			ChatTemplate *string  `json:"chat_template"`
			EOSTokenIDs  []uint32 `json:"eos_token_ids"`
			BOSTokenID   *uint32  `json:"bos_token_id"`
			PadTokenID   *uint32  `json:"pad_token_id"`
		}
		if err := json.Unmarshal(h.TokenizerConfig, &tc); err != nil {
			return fmt.Errorf("header TokenizerConfig does not fit cortiq's {chat_template, eos_token_ids, bos_token_id, pad_token_id}: %v", err)
		}
	}
	if a.NormStyle != "" && a.NormStyle != "qwen" && a.NormStyle != "gemma" {
		return fmt.Errorf("header Arch.NormStyle %q is neither \"qwen\" nor \"gemma\"", a.NormStyle)
	}
	return nil
}

// marshal writes the header as cortiq's serde_json would: compact, in declaration order.
func (h *Header) marshal() ([]byte, error) {
	arch, err := h.Arch.marshal()
	if err != nil {
		return nil, err
	}
	format := h.Format
	if format == "" {
		format = "cmf"
	}
	version := h.Version
	if version == 0 {
		version = Version
	}
	fields := []Field{
		{Key: "format", Value: mustJSON(format)},
		{Key: "version", Value: mustJSON(version)},
		{Key: "arch", Value: arch},
		{Key: "quant_type", Value: mustJSON(h.QuantType)},
	}
	if len(h.Provenance) > 0 {
		fields = append(fields, Field{Key: "provenance", Value: h.Provenance})
	}
	if len(h.TokenizerConfig) > 0 {
		fields = append(fields, Field{Key: "tokenizer_config", Value: h.TokenizerConfig})
	}
	if h.SectionHashes != nil {
		fields = append(fields, Field{Key: "section_hashes", Value: mustJSON(h.SectionHashes)})
	}
	for _, f := range h.Extra {
		if slices.ContainsFunc(fields, func(g Field) bool { return g.Key == f.Key }) {
			return nil, fmt.Errorf("header Extra repeats the typed field %q", f.Key)
		}
		fields = append(fields, f)
	}
	return serdejson.EncodeObject(fields, headerOrder)
}

func (a *Arch) marshal() ([]byte, error) {
	normStyle, ropeTheta, prf := a.NormStyle, a.RopeTheta, a.PartialRotaryFactor
	if normStyle == "" {
		normStyle = "qwen"
	}
	if ropeTheta == 0 {
		ropeTheta = 10000
	}
	if prf == 0 {
		prf = 1
	}
	eps, err := serdejson.FormatFloat(a.RMSNormEps, 64)
	if err != nil {
		return nil, fmt.Errorf("header Arch.RMSNormEps: %v", err)
	}
	theta, err := serdejson.FormatFloat(ropeTheta, 64)
	if err != nil {
		return nil, fmt.Errorf("header Arch.RopeTheta: %v", err)
	}
	prfText, err := serdejson.FormatFloat(float64(prf), 32)
	if err != nil {
		return nil, fmt.Errorf("header Arch.PartialRotaryFactor: %v", err)
	}
	layerTypes := a.LayerTypes
	if layerTypes == nil {
		layerTypes = []string{}
	}
	optInt := func(p *int) json.RawMessage {
		if p == nil {
			return json.RawMessage("null")
		}
		return mustJSON(*p)
	}
	fields := []Field{
		{Key: "arch_name", Value: mustJSON(a.Name)},
		{Key: "hidden_size", Value: mustJSON(a.HiddenSize)},
		{Key: "intermediate_size", Value: mustJSON(a.IntermediateSize)},
		{Key: "num_layers", Value: mustJSON(a.NumLayers)},
		{Key: "num_attention_heads", Value: mustJSON(a.NumAttentionHeads)},
		{Key: "num_kv_heads", Value: mustJSON(a.NumKVHeads)},
		{Key: "head_dim", Value: mustJSON(a.HeadDim)},
		{Key: "vocab_size", Value: mustJSON(a.VocabSize)},
		{Key: "layer_types", Value: mustJSON(layerTypes)},
		{Key: "rms_norm_eps", Value: json.RawMessage(eps)},
		{Key: "norm_style", Value: mustJSON(normStyle)},
		{Key: "rope_theta", Value: json.RawMessage(theta)},
		{Key: "tie_word_embeddings", Value: mustJSON(a.TieWordEmbeddings)},
		{Key: "partial_rotary_factor", Value: json.RawMessage(prfText)},
		{Key: "max_position_embeddings", Value: mustJSON(a.MaxPositionEmbeddings)},
		{Key: "linear_conv_kernel_dim", Value: optInt(a.LinearConvKernelDim)},
		{Key: "linear_num_key_heads", Value: optInt(a.LinearNumKeyHeads)},
		{Key: "linear_num_value_heads", Value: optInt(a.LinearNumValueHeads)},
	}
	for _, f := range a.Extra {
		if slices.ContainsFunc(fields, func(g Field) bool { return g.Key == f.Key }) {
			return nil, fmt.Errorf("header Arch.Extra repeats the typed field %q", f.Key)
		}
		fields = append(fields, f)
	}
	return serdejson.EncodeObject(fields, archOrder)
}

// mustJSON marshals values that cannot fail (strings, integers, bools, string slices, plain structs).
func mustJSON(v any) json.RawMessage {
	b, err := serdejson.MarshalStdlib(v)
	if err != nil {
		return json.RawMessage(strconv.Quote(err.Error()))
	}
	return b
}
