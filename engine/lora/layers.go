package lora

import "strings"

// Layer is one linear layer of the model a LoRA is bound to: its module name as diffusers
// writes it, without ".weight" ("transformer_blocks.3.attn.to_q"), and its weight's shape.
type Layer struct {
	Name    string
	Out, In int
}

// fusedGateUp is the ComfyUI / ai-toolkit name of the two SwiGLU input projections stored as
// one (lora.md §1.3): rows [0, h) are img_mlp.gate_layer, rows [h, 2h) img_mlp.proj.
const (
	fusedGateUp = "img_mlp.gate_up"
	gateLayer   = "img_mlp.gate_layer"
	upLayer     = "img_mlp.proj"
)

// target resolves the module names found in files, dotted or flattened, to the model's layers.
type target struct {
	layers []Layer
	byName map[string]Layer
	byFlat map[string]string    // "transformer_blocks_3_attn_to_q" → dotted name
	fused  map[string][2]string // "transformer_blocks.3.img_mlp.gate_up" → gate, up
}

func newTarget(layers []Layer) *target {
	t := &target{layers: layers, byName: map[string]Layer{}, byFlat: map[string]string{}, fused: map[string][2]string{}}
	for _, l := range layers {
		t.byName[l.Name] = l
		t.byFlat[flatten(l.Name)] = l.Name
	}
	for _, l := range layers {
		block, ok := strings.CutSuffix(l.Name, gateLayer)
		if !ok {
			continue
		}
		up, ok := t.byName[block+upLayer]
		if !ok || up.Out != l.Out || up.In != l.In {
			continue
		}
		name := block + fusedGateUp
		t.fused[name] = [2]string{l.Name, up.Name}
		t.byFlat[flatten(name)] = name
	}
	return t
}

func flatten(name string) string { return strings.ReplaceAll(name, ".", "_") }

// resolve maps a parsed key's module to a dotted module name of the model (a layer, or a fused
// gate_up), or "".
func (t *target) resolve(k parsedKey) string {
	m := k.module
	if k.flat {
		m = t.byFlat[m]
		if m == "" {
			// kohya sometimes flattens a dotted key only partly; try the whole thing flattened.
			m = t.byFlat[flatten(k.module)]
		}
	}
	if _, ok := t.byName[m]; ok {
		return m
	}
	if _, ok := t.fused[m]; ok {
		return m
	}
	return ""
}

// shape is the [out, in] a module's factors must produce (a fused gate_up is both halves).
func (t *target) shape(module string) (out, in int) {
	if l, ok := t.byName[module]; ok {
		return l.Out, l.In
	}
	g := t.byName[t.fused[module][0]]
	return 2 * g.Out, g.In
}
