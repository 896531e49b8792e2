// Package loratest writes random LoRA files in each format Easel reads, with the dense weight
// deltas they stand for computed independently of engine/lora, for parity tests (a LoRA applied
// at run time against the same LoRA merged into the weights).
package loratest

import (
	"math/rand/v2"
	"strings"

	"easel/engine/lora"
	"easel/engine/safetensors"
)

// Format is a key layout of LoRA files (docs/reference/lora.md §1).
type Format int

const (
	// PEFT is diffusers' transformer.<module>.lora_A.weight / lora_B.weight, no alpha (scale 1).
	PEFT Format = iota
	// Kohya is lora_unet_<module_with_underscores>.lora_down.weight / lora_up.weight / .alpha.
	Kohya
	// Comfy is diffusion_model.<module>.lora_down/lora_up/.alpha with the MLP's gate and up
	// projections fused as img_mlp.gate_up.
	Comfy
	// Diff is full weight patches diffusion_model.<module>.diff.
	Diff
	// DiffBias is Diff plus bias patches .diff_b on every other layer (which a bias-free
	// layer cannot merge).
	DiffBias
)

func (f Format) String() string {
	return [...]string{"peft", "kohya", "comfy", "diff", "diff+bias"}[f]
}

// Formats lists every format.
var Formats = []Format{PEFT, Kohya, Comfy, Diff, DiffBias}

// Delta is the dense change a file makes to one layer at strength 1: ΔW [out, in] and an
// optional bias delta [out].
type Delta struct {
	W    []float32
	Bias []float32
}

// Random builds a LoRA file for layers in format f with ranks 1..maxRank (varying per layer),
// factor values of about magnitude size (patch values of about size², like a factor product),
// and returns its tensors and the dense deltas they stand for.
func Random(layers []lora.Layer, f Format, maxRank int, size float32, seed uint64) ([]*safetensors.Tensor, map[string]Delta) {
	rng := rand.New(rand.NewPCG(seed, 0x10a))
	randn := func(n int, s float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64()) * s
		}
		return v
	}
	byName := map[string]lora.Layer{}
	for _, l := range layers {
		byName[l.Name] = l
	}
	var tensors []*safetensors.Tensor
	deltas := map[string]Delta{}
	done := map[string]bool{}
	for i, l := range layers {
		if done[l.Name] {
			continue
		}
		switch f {
		case Diff, DiffBias:
			d := Delta{W: randn(l.Out*l.In, size*size)}
			tensors = append(tensors, safetensors.F32Tensor("diffusion_model."+l.Name+".diff", []int{l.Out, l.In}, d.W))
			if f == DiffBias && i%2 == 0 {
				d.Bias = randn(l.Out, size*size)
				tensors = append(tensors, safetensors.F32Tensor("diffusion_model."+l.Name+".diff_b", []int{l.Out}, d.Bias))
			}
			deltas[l.Name] = d
			continue
		}
		rank := 1 + i%maxRank
		module, out := l.Name, l.Out
		var halves []string
		if block, ok := strings.CutSuffix(l.Name, "img_mlp.gate_layer"); f == Comfy && ok {
			if up, ok := byName[block+"img_mlp.proj"]; ok {
				module, out, halves = block+"img_mlp.gate_up", 2*l.Out, []string{l.Name, up.Name}
				done[up.Name] = true
			}
		}
		A := randn(rank*l.In, size)
		B := randn(out*rank, size)
		scale := float32(1)
		var alpha float32
		if f != PEFT {
			alpha = float32(1 + rng.IntN(2*rank))
			scale = alpha / float32(rank)
		}
		dense := make([]float32, out*l.In)
		for o := 0; o < out; o++ {
			for k := 0; k < rank; k++ {
				b := B[o*rank+k] * scale
				for c := 0; c < l.In; c++ {
					dense[o*l.In+c] += b * A[k*l.In+c]
				}
			}
		}
		if halves == nil {
			deltas[l.Name] = Delta{W: dense}
		} else {
			half := l.Out * l.In
			deltas[halves[0]] = Delta{W: dense[:half]}
			deltas[halves[1]] = Delta{W: dense[half:]}
		}
		switch f {
		case PEFT:
			tensors = append(tensors,
				safetensors.F32Tensor("transformer."+module+".lora_A.weight", []int{rank, l.In}, A),
				safetensors.F32Tensor("transformer."+module+".lora_B.weight", []int{out, rank}, B))
		case Kohya, Comfy:
			prefix := "lora_unet_" + strings.ReplaceAll(module, ".", "_")
			if f == Comfy {
				prefix = "diffusion_model." + module
			}
			tensors = append(tensors,
				safetensors.F32Tensor(prefix+".lora_down.weight", []int{rank, l.In}, A),
				safetensors.F32Tensor(prefix+".lora_up.weight", []int{out, rank}, B),
				safetensors.F32Tensor(prefix+".alpha", nil, []float32{alpha}))
		}
	}
	return tensors, deltas
}
