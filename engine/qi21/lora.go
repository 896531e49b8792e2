package qi21

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"easel/engine/lora"
	"easel/engine/ml"
	"easel/engine/quant"
)

// LoRAs at run time (docs/reference/lora.md): the base weights stay as they are (quantized,
// mapped); every linear layer a LoRA touches adds strength·scale·B(A·x) to its output, with the
// factors of all the enabled LoRAs concatenated along the rank so that each layer costs two
// small GEMMs however many LoRAs there are, plus x·Δᵀ for each exact patch (.diff) and the bias
// patches (.diff_b). Strengths are a per-rank-column vector: changing one re-uploads that vector
// and nothing else.

// LinearLayers lists the transformer's linear layers under c, named as diffusers names the
// modules (no "dit.", no ".weight"), with their weights' shapes: what LoRA files are bound to.
func LinearLayers(c Config) []lora.Layer {
	var out []lora.Layer
	for name, s := range expectedShapes(c) {
		m, ok := strings.CutSuffix(name, ".weight")
		if !ok || len(s) != 2 {
			continue
		}
		out = append(out, lora.Layer{Name: m, Out: s[0], In: s[1]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LoRA is one adapter at a strength (1 = as trained; 0 = off, exactly).
type LoRA struct {
	Adapter  *lora.Adapter
	Strength float32
}

// layerLoRA is everything added to one linear layer's output.
type layerLoRA struct {
	out  int
	a, b *quant.Tensor // the factors of every LoRA, concatenated along the rank: [R, in], [out, R]
	segs []rankSegment // which LoRA owns which rank columns
	// scales is [1, R]: strength·scale per rank column; nil when every factor's strength is 0.
	scales  ml.Tensor
	patches []layerPatch
}

// rankSegment is one LoRA's rank columns in a concatenated factor pair.
type rankSegment struct {
	lora, rank int
	scale      float32
}

// layerPatch is one LoRA's exact patch of a layer.
type layerPatch struct {
	lora     int
	w        *quant.Tensor // [out, in] or nil
	bias     []float32     // [out] or nil
	strength float32
	biasT    ml.Tensor // strength·bias, [1, out], or nil
}

// SetLoRAs makes ls the model's LoRAs (nil or empty for none). Programs prefilled before hold
// K/V computed with the previous set, so SetLoRAs refuses while any program is live: release
// them, set the LoRAs, prefill again. Calling it again with the same adapters in the same order
// and new strengths only updates the strength vectors; a LoRA at strength 0 adds nothing
// (bit-identical to leaving it out).
func (m *Model) SetLoRAs(ls []LoRA) error {
	m.stepMu.Lock()
	defer m.stepMu.Unlock()
	m.mu.Lock()
	live := m.live
	m.mu.Unlock()
	if live > 0 {
		return fmt.Errorf("qi21.SetLoRAs: %d programs are live and were prefilled with the previous LoRAs; release them first", live)
	}
	same, unchanged := len(ls) == len(m.loras), len(ls) == len(m.loras)
	for i := range ls {
		if ls[i].Adapter == nil {
			return fmt.Errorf("qi21.SetLoRAs: LoRA %d has no adapter", i)
		}
		same = same && ls[i].Adapter == m.loras[i].Adapter
		unchanged = same && unchanged && ls[i].Strength == m.loras[i].Strength
	}
	if unchanged {
		return nil // the version stays: a device keeps what it uploaded
	}
	if !same {
		layers, err := m.buildLoRALayers(ls)
		if err != nil {
			return err
		}
		m.freeLoRAVectors()
		m.loraLayers = layers
	}
	m.loras = append([]LoRA(nil), ls...)
	m.loraVersion++
	return m.uploadStrengths()
}

// HasLoRA reports whether any LoRA changes the model's outputs (one at a non-zero strength).
func (m *Model) HasLoRA() bool {
	for _, l := range m.loraLayers {
		if l.scales != nil {
			return true
		}
		for _, p := range l.patches {
			if p.strength != 0 {
				return true
			}
		}
	}
	return false
}

// LoRAs is the model's current LoRAs.
func (m *Model) LoRAs() []LoRA { return append([]LoRA(nil), m.loras...) }

// LoRABytes is the memory the LoRAs' concatenated factors and patches hold (for the memory
// ledger).
func (m *Model) LoRABytes() int64 {
	var n int64
	for _, l := range m.loraLayers {
		if l.a != nil {
			n += int64(len(l.a.Data) + len(l.b.Data))
		}
		for _, p := range l.patches {
			if p.w != nil {
				n += int64(len(p.w.Data))
			}
			n += 4 * int64(len(p.bias))
		}
	}
	return n
}

// weightsByLayer maps each linear layer's name to its weight.
func (m *Model) weightsByLayer() map[string]*quant.Tensor {
	out := map[string]*quant.Tensor{}
	add := func(s any, prefix string) {
		v := reflect.ValueOf(s).Elem()
		for i := 0; i < v.NumField(); i++ {
			tag := v.Type().Field(i).Tag.Get(ml.WeightTag)
			if w, ok := v.Field(i).Interface().(*quant.Tensor); ok && tag != "" {
				out[prefix+strings.TrimSuffix(tag, ".weight")] = w
			}
		}
	}
	add(&m.Weights, "")
	for l := range m.Blocks {
		add(&m.Blocks[l], "transformer_blocks."+strconv.Itoa(l)+".")
	}
	return out
}

// buildLoRALayers concatenates every adapter's factors per layer.
func (m *Model) buildLoRALayers(ls []LoRA) (map[*quant.Tensor]*layerLoRA, error) {
	weights := m.weightsByLayer()
	layers := map[*quant.Tensor]*layerLoRA{}
	type parts struct{ as, bs []*quant.Tensor }
	factors := map[*quant.Tensor]*parts{}
	get := func(name string) (*quant.Tensor, *layerLoRA, error) {
		w := weights[name]
		if w == nil {
			return nil, nil, fmt.Errorf("qi21.SetLoRAs: a LoRA adapts %s, which this transformer does not have: bind it to this model's LinearLayers", name)
		}
		l := layers[w]
		if l == nil {
			l = &layerLoRA{out: w.Rows()}
			layers[w] = l
		}
		return w, l, nil
	}
	for i, x := range ls {
		for _, f := range x.Adapter.Factors {
			w, l, err := get(f.Layer)
			if err != nil {
				return nil, err
			}
			if f.A.Cols() != w.Cols() || f.B.Rows() != w.Rows() {
				return nil, fmt.Errorf("qi21.SetLoRAs: the factors of %s are %v and %v; the layer's weight is %v", f.Layer, f.A.Shape, f.B.Shape, w.Shape)
			}
			p := factors[w]
			if p == nil {
				p = &parts{}
				factors[w] = p
			}
			p.as, p.bs = append(p.as, f.A), append(p.bs, f.B)
			l.segs = append(l.segs, rankSegment{lora: i, rank: f.Rank, scale: f.Scale})
		}
		for _, pt := range x.Adapter.Patches {
			w, l, err := get(pt.Layer)
			if err != nil {
				return nil, err
			}
			if pt.Weight != nil && (pt.Weight.Rows() != w.Rows() || pt.Weight.Cols() != w.Cols()) {
				return nil, fmt.Errorf("qi21.SetLoRAs: the patch of %s is %v; the layer's weight is %v", pt.Layer, pt.Weight.Shape, w.Shape)
			}
			if pt.Bias != nil && len(pt.Bias) != w.Rows() {
				return nil, fmt.Errorf("qi21.SetLoRAs: the bias patch of %s has %d values; the layer has %d outputs", pt.Layer, len(pt.Bias), w.Rows())
			}
			l.patches = append(l.patches, layerPatch{lora: i, w: pt.Weight, bias: pt.Bias})
		}
	}
	for w, p := range factors {
		a, err := concatRows(w.Name+" LoRA A", p.as)
		if err != nil {
			return nil, err
		}
		b, err := concatCols(w.Name+" LoRA B", p.bs)
		if err != nil {
			return nil, err
		}
		layers[w].a, layers[w].b = a, b
	}
	return layers, nil
}

// uploadStrengths (re)builds the per-layer strength vectors from m.loras.
func (m *Model) uploadStrengths() error {
	m.freeLoRAVectors()
	for _, l := range m.loraLayers {
		if l.a != nil {
			v := make([]float32, 0, l.a.Rows())
			active := false
			for _, s := range l.segs {
				k := m.loras[s.lora].Strength * s.scale
				active = active || k != 0
				for range s.rank {
					v = append(v, k)
				}
			}
			if active {
				t, err := m.be.Upload(v, 1, len(v))
				if err != nil {
					return fmt.Errorf("qi21.SetLoRAs: %v", err)
				}
				l.scales = t
			}
		}
		for i := range l.patches {
			p := &l.patches[i]
			p.strength = m.loras[p.lora].Strength
			if p.bias != nil && p.strength != 0 {
				v := make([]float32, len(p.bias))
				for j, b := range p.bias {
					v[j] = p.strength * b
				}
				t, err := m.be.Upload(v, 1, len(v))
				if err != nil {
					return fmt.Errorf("qi21.SetLoRAs: %v", err)
				}
				p.biasT = t
			}
		}
	}
	return nil
}

func (m *Model) freeLoRAVectors() {
	for _, l := range m.loraLayers {
		if l.scales != nil {
			m.be.Free(l.scales)
			l.scales = nil
		}
		for i := range l.patches {
			if l.patches[i].biasT != nil {
				m.be.Free(l.patches[i].biasT)
				l.patches[i].biasT = nil
			}
		}
	}
}

// linear is dst = x·wᵀ plus w's LoRAs.
func (m *Model) linear(e *ml.Scope, dst, x ml.Tensor, w *quant.Tensor) {
	e.Do(e.B.Linear(dst, x, w))
	m.addLoRA(e, dst, x, w)
}

// linearBatch is dst[i] = x·w[i]ᵀ plus each weight's LoRAs.
func (m *Model) linearBatch(e *ml.Scope, dsts []ml.Tensor, x ml.Tensor, ws []*quant.Tensor) {
	e.Do(e.B.LinearBatch(dsts, x, ws))
	for i, w := range ws {
		m.addLoRA(e, dsts[i], x, w)
	}
}

// addLoRA adds w's LoRA terms to y = x·wᵀ: y += (x·Aᵀ ⊙ strengths)·Bᵀ over the concatenated
// factors, then y += strength·x·Δᵀ and strength·Δb for each patch.
func (m *Model) addLoRA(e *ml.Scope, y, x ml.Tensor, w *quant.Tensor) {
	l := m.loraLayers[w]
	if l == nil || e.Err() != nil {
		return
	}
	shape := x.Shape()
	rows := 1
	for _, d := range shape[:len(shape)-1] {
		rows *= d
	}
	var tmp ml.Tensor
	delta := func() ml.Tensor {
		if tmp == nil {
			tmp = e.New(rows, l.out)
		}
		return tmp
	}
	if l.scales != nil {
		t := e.New(rows, l.a.Rows())
		e.Do(e.B.Linear(t, x, l.a))
		e.Do(e.B.Mul(t, t, l.scales))
		e.Do(e.B.Linear(delta(), t, l.b))
		e.Do(e.B.Add(y, y, tmp))
		e.B.Free(t)
	}
	for _, p := range l.patches {
		if p.strength == 0 {
			continue
		}
		if p.w != nil {
			e.Do(e.B.Linear(delta(), x, p.w))
			e.Do(e.B.Scale(tmp, tmp, p.strength))
			e.Do(e.B.Add(y, y, tmp))
		}
		if p.biasT != nil {
			e.Do(e.B.Add(y, y, p.biasT))
		}
	}
	if tmp != nil {
		e.B.Free(tmp)
	}
}

// LoRATerm is what the LoRAs add to one linear layer's output, for a backend that runs the
// layer itself (the Metal denoiser): y += (x·Aᵀ ⊙ Scales)·Bᵀ + Σ strength·(x·Δᵀ + Δb).
type LoRATerm struct {
	A, B    *quant.Tensor // concatenated factors [R, in], [out, R]; nil without factors
	Scales  []float32     // [R]: strength·alpha/rank per rank column
	Patches []LoRAPatchTerm
}

// LoRAPatchTerm is one exact patch at its strength (never 0).
type LoRAPatchTerm struct {
	Weight   *quant.Tensor // [out, in] or nil
	Bias     []float32     // [out] or nil
	Strength float32
}

// LoRATerms are the terms of every layer a LoRA changes (at a non-zero strength), by layer name,
// and a version that changes whenever SetLoRAs changes them.
func (m *Model) LoRATerms() (map[string]LoRATerm, uint64) {
	m.stepMu.Lock()
	defer m.stepMu.Unlock()
	names := map[*quant.Tensor]string{}
	for n, w := range m.weightsByLayer() {
		names[w] = n
	}
	out := map[string]LoRATerm{}
	for w, l := range m.loraLayers {
		var t LoRATerm
		if l.scales != nil {
			t.A, t.B = l.a, l.b
			for _, s := range l.segs {
				k := m.loras[s.lora].Strength * s.scale
				for range s.rank {
					t.Scales = append(t.Scales, k)
				}
			}
		}
		for _, p := range l.patches {
			if p.strength != 0 {
				t.Patches = append(t.Patches, LoRAPatchTerm{Weight: p.w, Bias: p.bias, Strength: p.strength})
			}
		}
		if t.A != nil || len(t.Patches) > 0 {
			out[names[w]] = t
		}
	}
	return out, m.loraVersion
}
