package metal

import (
	"fmt"
	"os"
	"strconv"
)

// Guards are the power-of-two guards of the half sites: a value x is stored as half(x·2^-s), so
// the largest activations stay below half's 65504. The defaults are the seed's.
type Guards struct {
	Attn int // attention input (the modulated LayerNorm before the qkv GEMM)
	QKV  int // the qkv panel
	AO   int // attention output (before the O GEMM)
	FFN  int // feed-forward input (the modulated LayerNorm before gate/up)
	Hid  int // the SwiGLU hidden layer (before the down GEMM)
}

// DefaultGuards are the seed's guards.
var DefaultGuards = Guards{Attn: 2, QKV: 4, AO: 4, FFN: 2, Hid: 8}

// maxShift is the largest guard: 2^14 still leaves half room above its smallest normals.
const maxShift = 14

// Knobs are the environment settings of the Metal path.
type Knobs struct {
	Guards Guards
	// Profile gives every op class its own command buffer so GPU time is known per class
	// (EASEL_METAL_PROF=1). Slower: use it to measure, not to generate.
	Profile bool
	// Amax records the largest stored |value| at each half site per pass (EASEL_METAL_AMAX=1).
	Amax bool
}

// KnobsFromEnv reads EASEL_METAL_PROF, EASEL_METAL_AMAX and EASEL_METAL_{ATTN,QKV,AO,FFN,HID}_SHIFT.
// A malformed value is an error that names the variable.
func KnobsFromEnv() (Knobs, error) {
	return knobsFrom(os.Getenv)
}

func knobsFrom(getenv func(string) string) (Knobs, error) {
	k := Knobs{Guards: DefaultGuards}
	var err error
	flag := func(name string) bool {
		switch v := getenv(name); v {
		case "", "0":
			return false
		case "1":
			return true
		default:
			if err == nil {
				err = fmt.Errorf("metal: %s=%q: use 1 to turn it on or 0 (or nothing) for off", name, v)
			}
			return false
		}
	}
	k.Profile = flag("EASEL_METAL_PROF")
	k.Amax = flag("EASEL_METAL_AMAX")
	for _, g := range []struct {
		name string
		dst  *int
	}{
		{"EASEL_METAL_ATTN_SHIFT", &k.Guards.Attn},
		{"EASEL_METAL_QKV_SHIFT", &k.Guards.QKV},
		{"EASEL_METAL_AO_SHIFT", &k.Guards.AO},
		{"EASEL_METAL_FFN_SHIFT", &k.Guards.FFN},
		{"EASEL_METAL_HID_SHIFT", &k.Guards.Hid},
	} {
		v := getenv(g.name)
		if v == "" {
			continue
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 || n > maxShift {
			if err == nil {
				err = fmt.Errorf("metal: %s=%q: a guard is a whole number of bits from 0 to %d", g.name, v, maxShift)
			}
			continue
		}
		*g.dst = n
	}
	return k, err
}
