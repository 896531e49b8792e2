package lora

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"easel/engine/quant"
	"easel/engine/safetensors"
)

// Factor is one layer's low-rank update ΔW = Scale · B·A, applied at run time as
// strength·Scale·B(A·x). A and B hold the file's values in f32, f16 or bf16, owned by the adapter.
type Factor struct {
	Layer string        // the model's module name, e.g. "transformer_blocks.3.attn.to_q"
	A     *quant.Tensor // [Rank, in]
	B     *quant.Tensor // [out, Rank]
	Rank  int
	Scale float32 // alpha / rank (1 without alpha)
}

// Patch is an exact delta for one layer: ΔW = Weight ([out, in]) and/or a bias delta Bias
// ([out]), applied as strength·(x·Weightᵀ + Bias).
type Patch struct {
	Layer  string
	Weight *quant.Tensor // or nil
	Bias   []float32     // or nil
}

// Adapter is a LoRA file bound to a model's layers.
type Adapter struct {
	Factors []Factor
	Patches []Patch
	Report  Report
	// Metadata is the file's safetensors __metadata__.
	Metadata map[string]string
}

// Report says how the file's tensors matched the model.
type Report struct {
	Tensors   int      // tensors in the file
	Matched   int      // tensors applied to a layer
	Unmatched []string // names of the others, sorted
	Layers    []string // the layers the adapter changes, sorted
	Ranks     map[int]int
}

// Warning is a sentence about tensors that were not applied, or "" when every one was.
func (r Report) Warning() string {
	if len(r.Unmatched) == 0 {
		return ""
	}
	ex := r.Unmatched[:min(3, len(r.Unmatched))]
	return fmt.Sprintf("matched %d of %d tensors; %d are for layers this model does not have (e.g. %s) and are not applied: parts of this LoRA may be for another model",
		r.Matched, r.Tensors, len(r.Unmatched), strings.Join(ex, ", "))
}

// moduleTensors gathers one module's tensors by role.
type moduleTensors struct {
	down, up, alpha, diff, diffB *safetensors.Tensor
	unsupported                  string
	count                        int
}

// Bind maps every tensor of f to layers and returns the adapter. It refuses a file that
// matches no layer ("matched 0 of N tensors: this LoRA is for another model"), adapter kinds
// Easel does not apply (LoHa, LoKr, DoRA, …), incomplete pairs and shape mismatches, naming the
// tensor. Tensors for layers the model lacks are listed in Report.Unmatched.
func Bind(f *safetensors.File, layers []Layer) (*Adapter, error) {
	t := newTarget(layers)
	names := f.Names()
	mods := map[string]*moduleTensors{}
	var unmatched []string
	for _, name := range names {
		k, ok := parseKey(name)
		module := ""
		if ok {
			module = t.resolve(k)
		}
		if module == "" {
			unmatched = append(unmatched, name)
			continue
		}
		mt := mods[module]
		if mt == nil {
			mt = &moduleTensors{}
			mods[module] = mt
		}
		mt.count++
		tensor := f.Tensor(name)
		var slot **safetensors.Tensor
		switch k.role {
		case roleDown:
			slot = &mt.down
		case roleUp:
			slot = &mt.up
		case roleAlpha:
			slot = &mt.alpha
		case roleDiff:
			slot = &mt.diff
		case roleDiffB:
			slot = &mt.diffB
		case roleUnsupported:
			mt.unsupported = k.kind + " tensor " + name
			continue
		}
		if *slot != nil {
			return nil, fmt.Errorf("lora: %s and %s both give the same part of layer %s: the file is inconsistent", (*slot).Name, name, module)
		}
		*slot = tensor
	}
	a := &Adapter{Metadata: f.Metadata}
	a.Report = Report{Tensors: len(names), Unmatched: unmatched, Ranks: map[int]int{}}
	sort.Strings(a.Report.Unmatched)
	if len(mods) == 0 {
		ex := names[:min(3, len(names))]
		return nil, fmt.Errorf("lora: matched 0 of %d tensors: this LoRA is for another model (its tensors are named like %s; Qwen-Image-2.1 LoRAs name layers such as transformer_blocks.0.attn.to_q)",
			len(names), strings.Join(ex, ", "))
	}
	peft, err := parsePEFTConfig(f.Metadata)
	if err != nil {
		return nil, err
	}
	modules := make([]string, 0, len(mods))
	for m := range mods {
		modules = append(modules, m)
	}
	sort.Strings(modules)
	touched := map[string]bool{}
	for _, m := range modules {
		mt := mods[m]
		if mt.unsupported != "" {
			return nil, fmt.Errorf("lora: layer %s is adapted by a %s, which Easel does not apply: use a plain LoRA (lora_A/lora_B or lora_down/lora_up) or a .diff patch", m, mt.unsupported)
		}
		out, in := t.shape(m)
		used := 0
		if mt.down != nil || mt.up != nil {
			fs, err := bindFactor(t, m, mt, out, in, peft)
			if err != nil {
				return nil, err
			}
			for _, f := range fs {
				a.Factors = append(a.Factors, f)
				touched[f.Layer] = true
				a.Report.Ranks[f.Rank]++
			}
			used += 2
			if mt.alpha != nil {
				used++
			}
		} else if mt.alpha != nil {
			a.Report.Unmatched = append(a.Report.Unmatched, mt.alpha.Name)
		}
		if mt.diff != nil || mt.diffB != nil {
			ps, err := bindPatch(t, m, mt, out, in)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				a.Patches = append(a.Patches, p)
				touched[p.Layer] = true
			}
			if mt.diff != nil {
				used++
			}
			if mt.diffB != nil {
				used++
			}
		}
		a.Report.Matched += used
	}
	sort.Strings(a.Report.Unmatched)
	for l := range touched {
		a.Report.Layers = append(a.Report.Layers, l)
	}
	sort.Strings(a.Report.Layers)
	if a.Report.Matched == 0 {
		return nil, fmt.Errorf("lora: matched 0 of %d tensors: this LoRA is for another model", len(names))
	}
	return a, nil
}

// matrixShape views a factor tensor as 2-D, accepting trailing 1×1 kernel dimensions (kohya
// saves some linear factors as [r, in, 1, 1]).
func matrixShape(t *safetensors.Tensor) (rows, cols int, ok bool) {
	s := t.Shape
	for len(s) > 2 && s[len(s)-1] == 1 {
		s = s[:len(s)-1]
	}
	if len(s) != 2 {
		return 0, 0, false
	}
	return s[0], s[1], true
}

func bindFactor(t *target, module string, mt *moduleTensors, out, in int, peft *peftConfig) ([]Factor, error) {
	if mt.down == nil {
		return nil, fmt.Errorf("lora: %s has no matching down/A factor (lora_down or lora_A) for layer %s: the file is incomplete", mt.up.Name, module)
	}
	if mt.up == nil {
		return nil, fmt.Errorf("lora: %s has no matching up/B factor (lora_up or lora_B) for layer %s: the file is incomplete", mt.down.Name, module)
	}
	r, dc, ok := matrixShape(mt.down)
	if !ok || r == 0 || dc != in {
		return nil, fmt.Errorf("lora: %s has shape %v but layer %s takes %d inputs, so its down/A factor must be [rank, %d]: this LoRA was made for a model of another size", mt.down.Name, mt.down.Shape, module, in, in)
	}
	uo, ur, ok := matrixShape(mt.up)
	if !ok || uo != out || ur != r {
		return nil, fmt.Errorf("lora: %s has shape %v but layer %s has %d outputs and the down/A factor has rank %d, so it must be [%d, %d]: this LoRA was made for a model of another size", mt.up.Name, mt.up.Shape, module, out, r, out, r)
	}
	scale, err := factorScale(module, mt.alpha, r, peft)
	if err != nil {
		return nil, err
	}
	A, err := ownMatrix(mt.down, r, in)
	if err != nil {
		return nil, err
	}
	B, err := ownMatrix(mt.up, out, r)
	if err != nil {
		return nil, err
	}
	halves, fused := t.fused[module]
	if !fused {
		return []Factor{{Layer: module, A: A, B: B, Rank: r, Scale: scale}}, nil
	}
	b0, b1 := splitRows(B, out/2)
	return []Factor{
		{Layer: halves[0], A: A, B: b0, Rank: r, Scale: scale},
		{Layer: halves[1], A: A, B: b1, Rank: r, Scale: scale},
	}, nil
}

func bindPatch(t *target, module string, mt *moduleTensors, out, in int) ([]Patch, error) {
	var w *quant.Tensor
	var bias []float32
	if mt.diff != nil {
		r, c, ok := matrixShape(mt.diff)
		if !ok || r != out || c != in {
			return nil, fmt.Errorf("lora: %s has shape %v but layer %s's weight is [%d, %d]: the patch is for a model of another size", mt.diff.Name, mt.diff.Shape, module, out, in)
		}
		var err error
		if w, err = ownMatrix(mt.diff, out, in); err != nil {
			return nil, err
		}
	}
	if mt.diffB != nil {
		if mt.diffB.Elements() != out || len(mt.diffB.Shape) != 1 {
			return nil, fmt.Errorf("lora: %s has shape %v but layer %s has %d outputs, so a bias patch must be [%d]", mt.diffB.Name, mt.diffB.Shape, module, out, out)
		}
		var err error
		if bias, err = floats(mt.diffB); err != nil {
			return nil, err
		}
	}
	halves, fused := t.fused[module]
	if !fused {
		return []Patch{{Layer: module, Weight: w, Bias: bias}}, nil
	}
	p0, p1 := Patch{Layer: halves[0]}, Patch{Layer: halves[1]}
	if w != nil {
		p0.Weight, p1.Weight = splitRows(w, out/2)
	}
	if bias != nil {
		p0.Bias, p1.Bias = bias[:out/2], bias[out/2:]
	}
	return []Patch{p0, p1}, nil
}

// factorScale is alpha / rank from the module's alpha tensor, else from the PEFT
// lora_adapter_metadata, else 1 (lora.md §0.3).
func factorScale(module string, alpha *safetensors.Tensor, rank int, peft *peftConfig) (float32, error) {
	if alpha != nil {
		v, err := floats(alpha)
		if err != nil || len(v) != 1 {
			return 0, fmt.Errorf("lora: %s must be one number (the layer's alpha); it is %s%v", alpha.Name, alpha.DType, alpha.Shape)
		}
		if math.IsNaN(float64(v[0])) || math.IsInf(float64(v[0]), 0) {
			return 0, fmt.Errorf("lora: %s is %v, not a usable alpha", alpha.Name, v[0])
		}
		return v[0] / float32(rank), nil
	}
	if peft != nil {
		return peft.scale(module, rank), nil
	}
	return 1, nil
}

// floats decodes a floating-point tensor, naming it on failure.
func floats(t *safetensors.Tensor) ([]float32, error) {
	v, err := t.Float32s()
	if err != nil {
		return nil, fmt.Errorf("lora: %v; LoRA factors must be F32, F16 or BF16", err)
	}
	return v, nil
}

// ownMatrix copies a factor out of the file mapping as a [rows, cols] quant tensor, keeping
// f32, f16 and bf16 as they are and converting f64 to f32.
func ownMatrix(t *safetensors.Tensor, rows, cols int) (*quant.Tensor, error) {
	d, ok := map[string]quant.DType{"F32": quant.F32, "F16": quant.F16, "BF16": quant.BF16}[t.DType]
	if ok {
		return &quant.Tensor{Name: t.Name, DType: d, Shape: []int{rows, cols}, Data: append([]byte(nil), t.Data...)}, nil
	}
	v, err := floats(t)
	if err != nil {
		return nil, err
	}
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	return &quant.Tensor{Name: t.Name, DType: quant.F32, Shape: []int{rows, cols}, Data: data}, nil
}

// splitRows cuts a float-codec matrix into rows [0, h) and [h, rows) (views of the same bytes).
func splitRows(t *quant.Tensor, h int) (*quant.Tensor, *quant.Tensor) {
	rows, cols := t.Shape[0], t.Shape[1]
	size := 4
	if t.DType != quant.F32 {
		size = 2
	}
	cut := h * cols * size
	return &quant.Tensor{Name: t.Name + "[gate]", DType: t.DType, Shape: []int{h, cols}, Data: t.Data[:cut:cut]},
		&quant.Tensor{Name: t.Name + "[up]", DType: t.DType, Shape: []int{rows - h, cols}, Data: t.Data[cut:]}
}

// Bytes is the memory the adapter keeps resident (its factors and patches).
func (a *Adapter) Bytes() int64 {
	var n int64
	seen := map[*quant.Tensor]bool{}
	add := func(t *quant.Tensor) {
		if t != nil && !seen[t] {
			seen[t] = true
			n += int64(len(t.Data))
		}
	}
	for _, f := range a.Factors {
		add(f.A)
		add(f.B)
	}
	for _, p := range a.Patches {
		add(p.Weight)
		n += 4 * int64(len(p.Bias))
	}
	return n
}
