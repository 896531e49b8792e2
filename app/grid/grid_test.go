package grid

import (
	"slices"
	"strings"
	"testing"
)

func texts(a *Axis) []string {
	var out []string
	for _, v := range a.Values {
		out = append(out, v.Text)
	}
	return out
}

func TestParseAxisValues(t *testing.T) {
	ctx := Context{Prompt: "a red fox in snow", HasStart: true, LoRAs: []string{"style"}}
	for _, c := range []struct {
		spec string
		kind Kind
		want []string
	}{
		{"seed=1-4", Seed, []string{"1", "2", "3", "4"}},
		{"seed=10-1:3", Seed, []string{"10", "7", "4", "1"}},
		{"seed=5, 9 ,12", Seed, []string{"5", "9", "12"}},
		{"steps=2-10:4", Steps, []string{"2", "6", "10"}},
		{"cfg=2,4,6", CFG, []string{"2", "4", "6"}},
		{"cfg=1-2:0.25", CFG, []string{"1", "1.25", "1.5", "1.75", "2"}},
		{"strength=0.2-0.8:0.2", Strength, []string{"0.2", "0.4", "0.6", "0.8"}},
		{"variation-strength=0,0.1,1", VariationStrength, []string{"0", "0.1", "1"}},
		{"lora:style=-1-1:0.5", LoRA, []string{"-1", "-0.5", "0", "0.5", "1"}},
		{"prompt-sr=red,blue,\"green, bright\"", PromptSR, []string{"red", "blue", "green, bright"}},
		{"size=512x512, 768X512", Size, []string{"512x512", "768x512"}},
		{"hires=1,1.5,2", Hires, []string{"1", "1.5", "2"}},
		{" SEED = 3", Seed, []string{"3"}},
	} {
		a, err := ParseAxis("X", c.spec, ctx)
		if err != nil {
			t.Errorf("%q: %v", c.spec, err)
			continue
		}
		if a.Kind != c.kind || !slices.Equal(texts(a), c.want) {
			t.Errorf("%q: kind %v values %q, want %v %q", c.spec, a.Kind, texts(a), c.kind, c.want)
		}
	}
}

// Every bad axis is refused with a sentence naming the axis and saying what to do.
func TestParseErrors(t *testing.T) {
	ctx := Context{Prompt: "a red fox", LoRAs: []string{"style"}}
	for _, c := range []struct {
		specs [3]string
		ctx   *Context
		want  string
	}{
		{[3]string{"sead=1-4"}, nil, `grid axis X: unknown axis "sead": choose one of seed, steps`},
		{[3]string{"seed"}, nil, `grid axis X "seed": write it NAME=VALUES`},
		{[3]string{"seed="}, nil, "grid axis X seed: no values"},
		{[3]string{"", "steps=ten"}, nil, `grid axis Y steps: "ten": write a whole number`},
		{[3]string{"steps=0-3"}, nil, `grid axis X steps: "0-3": 0 steps: choose between 1 and 1000`},
		{[3]string{"cfg=0.5"}, nil, `grid axis X cfg: "0.5": CFG 0.5: choose between 1 (off) and 100`},
		{[3]string{"cfg=1-2.5"}, nil, "a range of real numbers needs its step"},
		{[3]string{"seed=1:2"}, nil, "a step (after :) needs a range A-B"},
		{[3]string{"seed=1-4", "", "seed=5,6"}, nil, "grid axis Z seed: seed is already axis X"},
		{[3]string{"strength=0.5,0.7"}, nil, "grid axis X strength: a strength axis needs a start image: add --init IMAGE"},
		{[3]string{"seed=1-9", "steps=1-8"}, nil, "grid axis Y steps: 9 × 8 makes 72 cells; a grid has at most 64"},
		{[3]string{"seed=1-65"}, nil, "grid axis X seed: 65 values; a grid has at most 64 cells"},
		{[3]string{"lora:other=0,1"}, nil, "grid axis X lora:other: no LoRA of that name is applied (applied: style)"},
		{[3]string{"lora:style=0,1"}, &Context{}, "grid axis X lora:style: no LoRA is applied: add it with --lora FILE"},
		{[3]string{"prompt-sr=blue,green"}, nil, `grid axis X prompt-sr: the first value "blue" is not in the prompt`},
		{[3]string{"size=512"}, nil, `grid axis X size: "512": write a size as WIDTHxHEIGHT`},
		{[3]string{"hires=5"}, nil, `grid axis X hires: "5": hires factor 5`},
		{[3]string{"seed=1,2", "steps=1,2", "cfg=1,2"}, &Context{Prompt: "a {red|blue} fox"}, "the prompt's alternatives {red|blue} need an axis, and X, Y and Z are all taken"},
	} {
		cx := ctx
		if c.ctx != nil {
			cx = *c.ctx
		}
		_, err := Parse(c.specs, cx)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.specs, err, c.want)
		}
	}
}

// Cells run X fastest, then Y, then Z; the prompt's groups take the free axes in order and a
// cell's setup resolves them.
func TestCellsAndSetups(t *testing.T) {
	g, err := Parse([3]string{"seed=1-2", "", "cfg=2,4"}, Context{Prompt: "a {red|blue|green} fox, day"})
	if err != nil {
		t.Fatal(err)
	}
	if g.Axes[1] == nil || g.Axes[1].Name() != "prompt" || g.Dims() != [3]int{2, 3, 2} {
		t.Fatalf("axes %v dims %v: the first group should take Y", g.Axes, g.Dims())
	}
	// Z is taken, so the second group has no axis.
	if _, err := Parse([3]string{"seed=1-2", "", "cfg=2,4"}, Context{Prompt: "{a|b} {c|d}"}); err == nil {
		t.Fatal("a second group with no free axis was accepted")
	}
	cells := g.Cells()
	if len(cells) != 12 || cells[1].Pos != [3]int{1, 0, 0} || cells[2].Pos != [3]int{0, 1, 0} || cells[6].Pos != [3]int{0, 0, 1} {
		t.Fatalf("cells not in row-major order: %v", cells)
	}
	s := g.Apply(cells[5], Setup{Seed: 99, Steps: 7})
	if s.Seed != 2 || s.Prompt != "a green fox, day" || s.CFG != 2 || s.Steps != 7 {
		t.Errorf("cell 6's setup %+v", s)
	}
	if got := g.Describe(cells[5]); got != "seed=2, prompt=green, cfg=2" {
		t.Errorf("cell 6 described %q", got)
	}
	// Two groups, each its own axis.
	g2, err := Parse([3]string{"seed=1,2"}, Context{Prompt: "{a|b} and {c|d}"})
	if err != nil {
		t.Fatal(err)
	}
	if g2.Axes[1].Name() != "prompt" || g2.Axes[2].Name() != "prompt2" {
		t.Fatalf("groups took %v", g2.Axes)
	}
	if s := g2.Apply(g2.Cells()[7], Setup{}); s.Prompt != "b and d" {
		t.Errorf("last cell's prompt %q", s.Prompt)
	}
}

// Plan: one group per distinct prompt, LoRA weights and size; seed, steps and CFG share one.
func TestPlanSharesPrefills(t *testing.T) {
	base := Setup{LoRAs: []LoRAWeight{{"style", 1}}}
	ctx := Context{Prompt: "a red fox", LoRAs: []string{"style"}}
	for _, c := range []struct {
		specs  [3]string
		groups int
	}{
		{[3]string{"seed=1-4", "steps=2,4,6", "cfg=1,3"}, 1},
		{[3]string{"seed=1-4", "prompt-sr=red,blue,green"}, 3},
		{[3]string{"prompt-sr=red,blue", "seed=1-2", "lora:style=0,1"}, 4},
		{[3]string{"size=64x64,96x64", "seed=1-3"}, 2},
		{[3]string{"hires=1,2", "seed=1-3"}, 1},
	} {
		g, err := Parse(c.specs, ctx)
		if err != nil {
			t.Fatal(err)
		}
		groups := g.Plan(base)
		n := 0
		for _, gr := range groups {
			n += len(gr.Cells)
			for _, cell := range gr.Cells {
				if PrefillKey(g.Apply(cell, base)) != PrefillKey(gr.Setup) {
					t.Errorf("%q: cell %d is in a group whose prefill it does not share", c.specs, cell.Index)
				}
			}
		}
		if len(groups) != c.groups || n != g.Count() {
			t.Errorf("%q: %d groups holding %d cells, want %d groups of all %d", c.specs, len(groups), n, c.groups, g.Count())
		}
	}
}
