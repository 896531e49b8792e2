package qi21metal

import (
	"fmt"
	"strconv"

	"easel/engine/ml"
	"easel/engine/qi21"
	"easel/engine/quant"
	"easel/kernels"
	"easel/kernels/device"
)

// LoRAs on the device: the model's LoRA terms (qi21.Model.LoRATerms) for the layers the device
// runs — the blocks' seven projections, img_in in a step, proj_out — uploaded in float and
// added after each GEMM by lora.metal's down/up pair. Exact patches (.diff) ride the same pair
// as factors of rank min(in, out) with an identity on one side; bias patches are summed into one
// bias per layer. The host layers (txt_in, the timestep embedder, the modulation, norm_out) get
// their LoRAs on the CPU model, which computes them for the device.

// blockLayerNames are the module names of a block's projections, in blockWeights.w order.
var blockLayerNames = [7]string{"attn.to_q", "attn.to_k", "attn.to_v", "attn.to_out.0", "img_mlp.gate_layer", "img_mlp.proj", "img_mlp.out"}

func blockLayer(l, w int) string {
	return "transformer_blocks." + strconv.Itoa(l) + "." + blockLayerNames[w]
}

// deviceLoRALayer is one layer's uploaded terms: y += mul·((x·Aᵀ) ⊙ s)·Bᵀ + bias.
type deviceLoRALayer struct {
	rank, in, out int
	a, s, b, bias device.Buffer // float [rank][in], [rank], [out][rank], [out] (bias may be nil)
}

// deviceLoRA is the uploaded terms of every device layer, for one qi21 LoRA version.
type deviceLoRA struct {
	version uint64
	layers  map[string]*deviceLoRALayer
	maxRank int
	bytes   int64
}

func (dl *deviceLoRA) release() {
	if dl == nil {
		return
	}
	for _, l := range dl.layers {
		for _, b := range []device.Buffer{l.a, l.s, l.b, l.bias} {
			if b != nil {
				b.Release()
			}
		}
	}
	dl.layers = nil
}

// deviceLayers lists the layers the device computes.
func (d *Denoiser) deviceLayers() []string {
	names := []string{"img_in", "proj_out"}
	for l := range d.blocks {
		for w := range blockLayerNames {
			names = append(names, blockLayer(l, w))
		}
	}
	return names
}

// syncLoRA uploads the model's LoRA terms when they changed since the last upload. Called by
// Prefill under d.mu, with no program live when they changed.
func (d *Denoiser) syncLoRA() error {
	terms, version := d.model.LoRATerms()
	if d.lora != nil && d.lora.version == version {
		return nil
	}
	if d.live > 0 {
		return fmt.Errorf("qi21metal.Prefill: the LoRAs changed while %d programs are live; release them first", d.live)
	}
	old := d.lora
	dl := &deviceLoRA{version: version, layers: map[string]*deviceLoRALayer{}}
	for _, name := range d.deviceLayers() {
		t, ok := terms[name]
		if !ok {
			continue
		}
		l, err := d.uploadLoRALayer(name, t)
		if err != nil {
			dl.release()
			return err
		}
		dl.layers[name] = l
		dl.maxRank = max(dl.maxRank, l.rank)
		dl.bytes += 4 * int64(l.rank*(l.in+l.out+1)+l.out)
	}
	if old != nil {
		d.resident -= old.bytes
		old.release()
	}
	if err := (memoryPlan{{"the LoRAs", dl.bytes}}).fit("the LoRAs", d.resident, d.maxBuffer, d.wset); err != nil {
		dl.release()
		d.lora = nil
		return err
	}
	d.resident += dl.bytes
	d.lora = dl
	return nil
}

// uploadLoRALayer concatenates a layer's factors and patches into one float factor pair.
func (d *Denoiser) uploadLoRALayer(name string, t qi21.LoRATerm) (*deviceLoRALayer, error) {
	var as, bs [][]float32 // per part: A [r][in], B [out][r]
	var ranks []int
	var scales []float32
	in, out := 0, 0
	dq := func(q *quant.Tensor) ([]float32, error) {
		v, err := quant.Dequantize(q)
		if err != nil {
			return nil, fmt.Errorf("metal: LoRA of %s: %w", name, err)
		}
		return v, nil
	}
	if t.A != nil {
		a, err := dq(t.A)
		if err != nil {
			return nil, err
		}
		b, err := dq(t.B)
		if err != nil {
			return nil, err
		}
		in, out = t.A.Cols(), t.B.Rows()
		as, bs, ranks = append(as, a), append(bs, b), append(ranks, t.A.Rows())
		scales = append(scales, t.Scales...)
	}
	var bias []float32
	for _, p := range t.Patches {
		if p.Weight != nil {
			w, err := dq(p.Weight)
			if err != nil {
				return nil, err
			}
			o, i := p.Weight.Rows(), p.Weight.Cols()
			in, out = i, o
			r := min(i, o)
			eye := make([]float32, r*r)
			for k := 0; k < r; k++ {
				eye[k*r+k] = 1
			}
			if i <= o { // Δ = Δ·I_in: A = I, B = Δ
				as, bs = append(as, eye), append(bs, w)
			} else { // Δ = I_out·Δ: A = Δ, B = I
				as, bs = append(as, w), append(bs, eye)
			}
			ranks = append(ranks, r)
			for range r {
				scales = append(scales, p.Strength)
			}
		}
		if p.Bias != nil {
			if bias == nil {
				bias = make([]float32, len(p.Bias))
			}
			for i, v := range p.Bias {
				bias[i] += p.Strength * v
			}
			out = len(p.Bias)
		}
	}
	R := 0
	for _, r := range ranks {
		R += r
	}
	l := &deviceLoRALayer{rank: R, in: in, out: out}
	buf := func(v []float32, what string) (device.Buffer, error) {
		b, err := d.dev.NewBuffer(4 * max(len(v), 1))
		if err != nil {
			return nil, fmt.Errorf("metal: LoRA %s of %s: %w", what, name, err)
		}
		copy(device.View[float32](b), v)
		return b, nil
	}
	var err error
	if R > 0 {
		A := make([]float32, 0, R*in)
		for _, a := range as {
			A = append(A, a...)
		}
		B := make([]float32, out*R)
		col := 0
		for p, b := range bs {
			r := ranks[p]
			for o := 0; o < out; o++ {
				copy(B[o*R+col:o*R+col+r], b[o*r:(o+1)*r])
			}
			col += r
		}
		if l.a, err = buf(A, "A"); err != nil {
			return nil, err
		}
		if l.s, err = buf(scales, "scales"); err != nil {
			return nil, err
		}
		if l.b, err = buf(B, "B"); err != nil {
			return nil, err
		}
	}
	if bias != nil {
		if l.bias, err = buf(bias, "bias"); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// loraIO is where one GEMM read its input and wrote its output, and its guard scales.
type loraIO struct {
	x            device.Buffer
	xHalf        bool
	xOff, ldx    int
	y            device.Buffer
	yHalf        bool
	yOff, ldy    int
	n            int
	mul, biasMul float32
}

// lora adds a layer's LoRA terms to its GEMM's output.
func (e *encoder) lora(name string, io loraIO) {
	if e.d.lora == nil {
		return
	}
	l := e.d.lora.layers[name]
	if l == nil {
		return
	}
	pp := e.d.pipes
	up := pp.loraUp
	if io.yHalf {
		up = pp.loraUpH
	}
	bias := l.bias
	if l.rank > 0 {
		t := e.loraScratch(io.n * l.rank)
		if t == nil {
			return
		}
		down := pp.loraDownF
		if io.xHalf {
			down = pp.loraDownH
		}
		prm := kernels.LoraParams{N: uint32(io.n), M: uint32(l.rank), K: uint32(l.in), Ldx: uint32(io.ldx), XOff: uint32(io.xOff)}
		enc := e.rec.encoder(ml.ClassGemm)
		enc.SetPipeline(down)
		enc.SetBuffer(io.x, 0, 0)
		enc.SetBuffer(l.a, 0, 1)
		enc.SetBuffer(l.s, 0, 2)
		enc.SetBuffer(t, 0, 3)
		enc.SetBytes(device.StructBytes(&prm), 4)
		g, th := kernels.LoraGrid(io.n, l.rank)
		enc.Dispatch(g, th)

		prm = kernels.LoraParams{N: uint32(io.n), M: uint32(l.out), K: uint32(l.rank), Ldy: uint32(io.ldy), YOff: uint32(io.yOff), Mul: io.mul, BiasMul: io.biasMul}
		if bias != nil {
			prm.HasBias = 1
		} else {
			bias = l.s // bound but unread
		}
		enc = e.rec.encoder(ml.ClassGemm)
		enc.SetPipeline(up)
		enc.SetBuffer(t, 0, 0)
		enc.SetBuffer(l.b, 0, 1)
		enc.SetBuffer(bias, 0, 2)
		enc.SetBuffer(io.y, 0, 3)
		enc.SetBytes(device.StructBytes(&prm), 4)
		g, th = kernels.LoraGrid(io.n, l.out)
		enc.Dispatch(g, th)
		e.loraFlops += 2 * float64(io.n) * float64(l.rank) * float64(l.in+l.out)
		return
	}
	if bias != nil { // a bias patch alone: the up kernel over rank 0
		prm := kernels.LoraParams{N: uint32(io.n), M: uint32(l.out), K: 0, Ldy: uint32(io.ldy), YOff: uint32(io.yOff), HasBias: 1, BiasMul: io.biasMul}
		enc := e.rec.encoder(ml.ClassGemm)
		enc.SetPipeline(up)
		enc.SetBuffer(bias, 0, 0)
		enc.SetBuffer(bias, 0, 1)
		enc.SetBuffer(bias, 0, 2)
		enc.SetBuffer(io.y, 0, 3)
		enc.SetBytes(device.StructBytes(&prm), 4)
		g, th := kernels.LoraGrid(io.n, l.out)
		enc.Dispatch(g, th)
	}
}

// loraScratch is the pass's float buffer for the down projection's output, at least n floats.
// One serves every layer: a pass's dispatches run in order, as its activations assume.
func (e *encoder) loraScratch(n int) device.Buffer {
	if e.loraT != nil && e.loraTLen >= n {
		return e.loraT
	}
	b, err := e.d.dev.NewBuffer(4 * max(n, 1))
	if err != nil {
		if e.loraErr == nil {
			e.loraErr = fmt.Errorf("metal: LoRA scratch of %d floats: %w", n, err)
		}
		return nil
	}
	if e.loraT != nil {
		e.loraOld = append(e.loraOld, e.loraT)
	}
	e.loraT, e.loraTLen = b, n
	return b
}

// hasLoRA reports whether the named layer has terms on the device.
func (e *encoder) hasLoRA(name string) bool {
	return e.d.lora != nil && e.d.lora.layers[name] != nil
}
