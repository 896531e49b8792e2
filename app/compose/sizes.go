package compose

import (
	"fmt"

	"easel/engine/condimage"
)

// Aspect is one official aspect preset (spec §2).
type Aspect struct {
	Name string // "16:9"
	W, H int    // the ratio
	// TwoK is the README's recommended native-2K size (W×H).
	TwoK [2]int
}

// Aspects are the official presets, in the README's order.
var Aspects = []Aspect{
	{"1:1", 1, 1, [2]int{2048, 2048}},
	{"4:3", 4, 3, [2]int{2400, 1792}},
	{"3:4", 3, 4, [2]int{1792, 2400}},
	{"3:2", 3, 2, [2]int{2528, 1696}},
	{"2:3", 2, 3, [2]int{1696, 2528}},
	{"16:9", 16, 9, [2]int{2752, 1536}},
	{"9:16", 9, 16, [2]int{1536, 2752}},
}

// Scale is 1K (about 1024² pixels, the code default) or 2K (the README's native sizes).
type Scale int

// The two preset scales.
const (
	Scale1K Scale = iota
	Scale2K
)

// SizeMode is how the output size is chosen.
type SizeMode int

// The size modes.
const (
	SizePreset    SizeMode = iota // an official aspect at 1K or 2K
	SizeCustom                    // width × height, snapped to multiples of 32
	SizeFromImage                 // the last condition image's aspect at about 1024² (the reference's default)
	// SizeExact is CustomW × CustomH as given, each side floored to a multiple of 32 by the
	// pipeline, which refuses what it cannot make (the CLI's --size, the API's width and height).
	SizeExact
	// SizeAuto leaves the size to the pipeline: Ratio when set, else the init image's size, else
	// the last condition image's aspect at about Resolution², else the model's default size.
	SizeAuto
)

// Size limits for custom sizes, in pixels.
const (
	SizeMultiple = 32
	MinSide      = 256
	MaxSide      = 4096
)

// PresetSize is an aspect's size at a scale: 2K is the README's table, 1K is
// calculate_dimensions(1024², ratio) as the pipeline computes sizes from an aspect.
func PresetSize(a Aspect, s Scale) (int, int) {
	if s == Scale2K {
		return a.TwoK[0], a.TwoK[1]
	}
	return condimage.CalculateDimensions(1024*1024, float64(a.W)/float64(a.H))
}

// Snap rounds a custom side to the nearest multiple of 32 within [MinSide, MaxSide].
func Snap(v int) int {
	v = (v + SizeMultiple/2) / SizeMultiple * SizeMultiple
	return min(max(v, MinSide), MaxSide)
}

// AspectByName finds a preset ("16:9").
func AspectByName(name string) (Aspect, error) {
	for _, a := range Aspects {
		if a.Name == name {
			return a, nil
		}
	}
	return Aspect{}, fmt.Errorf("no aspect preset %q", name)
}
