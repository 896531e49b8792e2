package lora

import "strings"

// role is what one tensor of a LoRA file is for.
type role int

const (
	roleNone  role = iota
	roleDown       // A, [rank, in]
	roleUp         // B, [out, rank]
	roleAlpha      // scalar alpha
	roleDiff       // full weight delta [out, in]
	roleDiffB      // bias delta [out]
	roleUnsupported
)

// dottedPrefixes are the module-name prefixes trainers add (lora.md §1.1), longest first.
var dottedPrefixes = []string{"model.diffusion_model.", "base_model.model.", "diffusion_model.", "transformer.", "unet."}

// flatPrefixes introduce names with "_" in place of "." (kohya, SimpleTuner LyCORIS).
var flatPrefixes = []string{"lora_unet_", "lycoris_"}

// suffixes are the role suffixes ComfyUI recognises (lora.md §1.2), longest match first within
// each family so that ".lora_A.default.weight" is not read as ".weight".
var suffixes = []struct {
	s string
	r role
}{
	{".lora_A.default.weight", roleDown}, {".lora_B.default.weight", roleUp},
	{".lora_linear_layer.down.weight", roleDown}, {".lora_linear_layer.up.weight", roleUp},
	{".lora_down.weight", roleDown}, {".lora_up.weight", roleUp},
	{".lora_A.weight", roleDown}, {".lora_B.weight", roleUp},
	{".lora.down.weight", roleDown}, {".lora.up.weight", roleUp},
	{"_lora.down.weight", roleDown}, {"_lora.up.weight", roleUp},
	{".lora_A", roleDown}, {".lora_B", roleUp},
	{".alpha", roleAlpha},
	{".diff_b", roleDiffB}, {".diff", roleDiff},
}

// unsupportedSuffixes are adapter kinds Easel recognises but does not apply, with their names.
var unsupportedSuffixes = []struct{ s, kind string }{
	{".lora_mid.weight", "LoCon/Tucker (lora_mid)"},
	{".dora_scale", "DoRA (dora_scale)"},
	{".hada_w1_a", "LoHa"}, {".hada_w1_b", "LoHa"}, {".hada_w2_a", "LoHa"}, {".hada_w2_b", "LoHa"},
	{".hada_t1", "LoHa"}, {".hada_t2", "LoHa"},
	{".lokr_w1", "LoKr"}, {".lokr_w2", "LoKr"}, {".lokr_w1_a", "LoKr"}, {".lokr_w1_b", "LoKr"},
	{".lokr_w2_a", "LoKr"}, {".lokr_w2_b", "LoKr"}, {".lokr_t2", "LoKr"},
	{".a1.weight", "GLoRA"}, {".a2.weight", "GLoRA"}, {".b1.weight", "GLoRA"}, {".b2.weight", "GLoRA"},
	{".reshape_weight", "reshape_weight"},
}

// parsedKey is a tensor name split into its module (as written, prefix removed), whether the
// module is flattened ("_" for "."), and its role.
type parsedKey struct {
	module string
	flat   bool
	role   role
	kind   string // for roleUnsupported
}

// parseKey splits a tensor name. ok is false when no known suffix ends it.
func parseKey(name string) (parsedKey, bool) {
	var k parsedKey
	rest := name
	for changed := true; changed; {
		changed = false
		for _, p := range dottedPrefixes {
			if r, ok := strings.CutPrefix(rest, p); ok {
				rest, changed = r, true
			}
		}
	}
	for _, p := range flatPrefixes {
		if r, ok := strings.CutPrefix(rest, p); ok {
			rest, k.flat = r, true
			break
		}
	}
	for _, s := range suffixes {
		if m, ok := strings.CutSuffix(rest, s.s); ok && m != "" {
			k.module, k.role = m, s.r
			return k, true
		}
	}
	for _, s := range unsupportedSuffixes {
		if m, ok := strings.CutSuffix(rest, s.s); ok && m != "" {
			k.module, k.role, k.kind = m, roleUnsupported, s.kind
			return k, true
		}
	}
	return k, false
}
