package grid

import (
	"fmt"
	"strings"
)

// Setup is what a cell sets: the settings of one generation that axes vary. Zero values are left
// to the base request (Steps 0: the model's default).
type Setup struct {
	Prompt            string
	Seed              uint64
	Steps             int
	CFG               float64
	Strength          float64
	VariationStrength float64
	// LoRAs are the weights of the LoRAs by name, in the order they were given.
	LoRAs         []LoRAWeight
	Width, Height int
	// Hires is the second pass's factor (0 or 1: none).
	Hires float64
}

// LoRAWeight is one LoRA's name and weight.
type LoRAWeight struct {
	Name   string
	Weight float64
}

// Apply is base with the cell's values set; the prompt's {a|b} groups resolved (each group takes
// its axis's value, or its first alternative where no axis varies it).
func (g *Grid) Apply(c Cell, base Setup) Setup {
	s := base
	s.LoRAs = append([]LoRAWeight(nil), base.LoRAs...)
	prompt := g.Prompt
	chosen := map[int]string{}
	for i, a := range g.Axes {
		if a == nil {
			continue
		}
		v := a.Values[c.Pos[i]]
		switch a.Kind {
		case Seed:
			s.Seed = uint64(v.Int)
		case Steps:
			s.Steps = int(v.Int)
		case CFG:
			s.CFG = v.Num
		case Strength:
			s.Strength = v.Num
		case VariationStrength:
			s.VariationStrength = v.Num
		case LoRA:
			for j := range s.LoRAs {
				if strings.EqualFold(s.LoRAs[j].Name, a.LoRA) {
					s.LoRAs[j].Weight = v.Num
				}
			}
		case PromptSR:
			prompt = strings.ReplaceAll(prompt, a.Search, v.Text)
		case Size:
			s.Width, s.Height = v.W, v.H
		case Hires:
			s.Hires = v.Num
		case Prompt:
			chosen[a.Group] = v.Text
		}
	}
	gi := 0
	s.Prompt = altGroup.ReplaceAllStringFunc(prompt, func(m string) string {
		defer func() { gi++ }()
		if t, ok := chosen[gi]; ok {
			return t
		}
		return strings.TrimSpace(strings.Split(m[1:len(m)-1], "|")[0])
	})
	return s
}

// PrefillKey is what cells must share to share a prefill: the prompt, the LoRA weights (they
// change the denoiser's layers) and the size (the joint layout). Everything else — seed, steps,
// CFG, strengths, the second pass — runs per cell over the same prefilled programs.
func PrefillKey(s Setup) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q|%dx%d", s.Prompt, s.Width, s.Height)
	for _, l := range s.LoRAs {
		fmt.Fprintf(&b, "|%s=%g", l.Name, l.Weight)
	}
	return b.String()
}

// Group is cells that share one prefill, in the order they run.
type Group struct {
	Setup Setup  // the first cell's setup (its prompt, LoRAs and size are the group's)
	Cells []Cell // in row-major order
}

// Plan orders the cells to share the most: one group per distinct PrefillKey, in the order the
// first cell of each appears, each group's cells in row-major order.
func (g *Grid) Plan(base Setup) []Group {
	var groups []Group
	at := map[string]int{}
	for _, c := range g.Cells() {
		s := g.Apply(c, base)
		k := PrefillKey(s)
		i, ok := at[k]
		if !ok {
			i = len(groups)
			at[k] = i
			groups = append(groups, Group{Setup: s})
		}
		groups[i].Cells = append(groups[i].Cells, c)
	}
	return groups
}
