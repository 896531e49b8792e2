package convert

import (
	"fmt"

	"easel/engine/quant"
)

// Profile chooses the codec of each kind of tensor.
type Profile string

// The profiles. Whatever the profile, norms and biases are stored as f32 (exact from bf16), and
// the DiT's other 2-D tensors, the vision patch embedding and any tensor a rule keeps are stored
// in the source's own precision.
const (
	// ProfileCortiq is cortiq's imagine-pack default (cmf.md §10.4): DiT block projections q4tp,
	// text-encoder and vision projections q8_2f, the token embedding q8_row, VAE weights f16.
	ProfileCortiq Profile = "cortiq"
	// ProfileQ8 is ProfileCortiq with the DiT block projections at q8_2f: twice the DiT's size,
	// a quarter of its quantization error.
	ProfileQ8 Profile = "q8"
	// ProfileF16 keeps every weight at the source's precision (bf16 stays bf16, f32 stays f32), so
	// the file holds the checkpoint exactly; parity tests use it.
	ProfileF16 Profile = "f16"
)

// Profiles lists the profiles in the order the CLI shows them.
var Profiles = []Profile{ProfileCortiq, ProfileQ8, ProfileF16}

// ParseProfile checks a profile name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown profile %q: use cortiq (4-bit DiT, the default), q8 (8-bit DiT) or f16 (source precision)", s)
}

// codec is what a rule asks for: a CMF dtype, or the source's own precision.
type codec struct {
	dtype      quant.DType
	keepSource bool
}

var (
	keepSource = codec{keepSource: true}
	asF32      = codec{dtype: quant.F32}
	asF16      = codec{dtype: quant.F16}
	asQ8_2F    = codec{dtype: quant.Q8_2F}
	asQ8Row    = codec{dtype: quant.Q8Row}
	asQ4TP     = codec{dtype: quant.Q4TP}
)

// name is how provenance records the codec.
func (c codec) name() string {
	if c.keepSource {
		return "source"
	}
	return c.dtype.String()
}

// quantizes reports whether the codec is one of the int8/int4 quantizers.
func (c codec) quantizes() bool {
	return !c.keepSource && (c.dtype == quant.Q4TP || c.dtype == quant.Q8_2F || c.dtype == quant.Q8Row)
}

// codecs are a profile's choices per network.
type codecs struct {
	dit, te, vis, vae codec
}

func (p Profile) codecs() codecs {
	switch p {
	case ProfileQ8:
		return codecs{dit: asQ8_2F, te: asQ8_2F, vis: asQ8_2F, vae: asF16}
	case ProfileF16:
		return codecs{dit: keepSource, te: keepSource, vis: keepSource, vae: keepSource}
	}
	return codecs{dit: asQ4TP, te: asQ8_2F, vis: asQ8_2F, vae: asF16}
}

// quantType is the header's quant_type: "Q4_BLOCK" for a 4-bit DiT, "Q8_2F" for an 8-bit one,
// "F16" when the DiT is not quantized (cortiq's rule).
func (p Profile) quantType() string {
	switch p.codecs().dit {
	case asQ4TP:
		return "Q4_BLOCK"
	case asQ8_2F:
		return "Q8_2F"
	}
	return "F16"
}
