package qi21metal

import (
	"math"

	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/kernels"
	"easel/kernels/device"
)

// activations are one program's working buffers, sized for its larger pass (prefix or target).
type activations struct {
	rows  int           // allocated rows (activationRows)
	x     device.Buffer // f32 [rows][D], the residual stream
	xn    device.Buffer // half [rows][D], the modulated LayerNorm (guarded)
	panel device.Buffer // half [rows][3D], q | k | v
	attn  device.Buffer // half [rows][D], attention output (guarded)
	y     device.Buffer // f32 [rows][D], a projection's output before the gated residual
	gu    device.Buffer // f32 [2][rows][F], gate then up
	hid   device.Buffer // half [rows][F], SwiGLU (guarded)
}

// pass is what one run of rows through the blocks reads: the activations, the rows' RoPE tables
// and modulation, and the program's prefix K/V (written by a prefill, read by a step).
type pass struct {
	a                *activations
	rows             int
	ropeCos, ropeSin device.Buffer
	ropeSinOff       int           // byte offset of the sin table in ropeSin
	mods             device.Buffer // f32 [s1|g1|s2|g2]
	pkv              device.Buffer // half [layers][prefix][2D]
	prefix           int
	vis              device.Buffer // prefill: uint visible-key counts per prefix row; nil in a step
}

// Half sites of the amax diagnostics, in slot order.
var amaxSites = [...]string{"attn-in", "qkv", "attn-out", "ffn-in", "hidden"}

// encoder issues one pass's dispatches.
type encoder struct {
	rec  *recorder
	d    *Denoiser
	amax device.Buffer // the overflow watch (watch.go): uint slots, one per block and amaxSites entry; nil if it could not be made
	// guards are the pass's half guards; perBuffer its blocks per command buffer; gemmChunks the
	// row chunks each block GEMM is split into, each in its own command buffer (1: whole)
	guards     metal.Guards
	perBuffer  int
	gemmChunks int

	// LoRA (lora.go): the down projection's scratch, those it outgrew, and a failure to make one.
	loraT    device.Buffer
	loraTLen int
	loraOld  []device.Buffer
	loraErr  error
	// loraFlops counts the LoRA dispatches' work (PassStats.LoRAFlops).
	loraFlops float64
}

func groups(w, h, z int) device.Size { return device.Size{Width: w, Height: h, Depth: z} }
func threads(w, h int) device.Size   { return device.Size{Width: w, Height: h, Depth: 1} }
func ceilDiv(a, b int) int           { return (a + b - 1) / b }

// gemmChunkAlign is the row multiple of a GEMM chunk's size.
const gemmChunkAlign = 8

// gemm is y[:, yOff[i]..] = mul · x[:, xOff[i]..] · W[ws[i]]ᵀ over n rows; the weights share a
// shape, and those of one codec go out as one z-batched dispatch. With e.gemmChunks above 1 the
// rows go out in that many chunks (of a multiple of gemmChunkAlign rows), each in its own
// command buffer, for a GPU whose watchdog stops a whole GEMM: every output row is the same dot
// products over k with the same kernel (the variant chosen for the whole shape), so the result
// is bit for bit the whole dispatch's.
func (e *encoder) gemm(blk *blockWeights, ws []int, x device.Buffer, xOff []int, ldx int, y device.Buffer, yOff []int, ldy, n int, halfOut bool, mul float32) {
	for _, q8 := range []bool{false, true} {
		var sel []int
		for i, w := range ws {
			if blk.w[w].q8 == q8 {
				sel = append(sel, i)
			}
		}
		if len(sel) == 0 {
			continue
		}
		w0 := &blk.w[ws[sel[0]]]
		prm := kernels.MmParams{
			N: uint32(n), Rows: uint32(w0.rows), K: uint32(w0.cols), Ldx: uint32(ldx), Ldy: uint32(ldy),
			Mul: mul, ParamsOff: uint32(w0.paramsOff), CodesOff: uint32(w0.codesOff), CodeStride: uint32(w0.codeStride),
		}
		if halfOut {
			prm.Epi = 1
		}
		for z, i := range sel {
			prm.XOff[z], prm.YOff[z] = uint32(xOff[i]), uint32(yOff[i])
		}
		shape := kernels.GemmShape{N: n, Rows: w0.rows, K: w0.cols, Ldx: ldx, Ldy: ldy}
		for _, i := range sel {
			shape.XOff, shape.YOff = append(shape.XOff, xOff[i]), append(shape.YOff, yOff[i])
		}
		kv := e.d.pipes.gemmFor(shape, e.d.pipes.variantsAnyN)
		chunk := n
		if e.gemmChunks > 1 {
			chunk = ceilDiv(ceilDiv(n, e.gemmChunks), gemmChunkAlign) * gemmChunkAlign
		}
		for r0 := 0; r0 < n; r0 += chunk {
			cp := prm
			m := min(chunk, n-r0)
			cp.N = uint32(m)
			for z := range sel {
				cp.XOff[z] += uint32(r0 * ldx)
				cp.YOff[z] += uint32(r0 * ldy)
			}
			if chunk < n {
				e.rec.split() // each chunk in its own command buffer
			}
			enc := e.rec.encoder(ml.ClassGemm)
			e.rec.flops(2 * float64(m) * float64(w0.rows) * float64(w0.cols) * float64(len(sel)))
			enc.SetPipeline(kv.pipeline(q8, halfOut))
			for s := 0; s < 3; s++ {
				w := &blk.w[ws[sel[min(s, len(sel)-1)]]]
				enc.SetBuffer(w.buf, w.off, s)
				enc.SetBuffer(e.d.aux, w.rsOff, 3+s)
				enc.SetBuffer(e.d.aux, w.colOff, 9+s)
			}
			enc.SetBuffer(x, 0, 6)
			enc.SetBuffer(y, 0, 7)
			enc.SetBytes(device.StructBytes(&cp), 8)
			enc.Dispatch(kv.v.Grid(m, w0.rows, len(sel)))
		}
		if chunk < n {
			e.rec.split()
		}
	}
}

// rowOp: with gateOff ≥ 0, x += tanh(mods[gateOff..])·y; with scaleOff ≥ 0, xn =
// half(LN(x)·(1 + mods[scaleOff..])·oscale). Offsets are in floats.
func (e *encoder) rowOp(a *activations, n int, mods device.Buffer, gateOff, scaleOff int, oscale float32) {
	c := e.d.cfg
	prm := kernels.RowParams{H: uint32(c.Hidden()), Eps: c.Eps, OScale: oscale}
	enc := e.rec.encoder(ml.ClassNorm)
	enc.SetPipeline(e.d.pipes.rowop)
	enc.SetBuffer(a.x, 0, 0)
	enc.SetBuffer(a.y, 0, 1)
	enc.SetBuffer(a.xn, 0, 2)
	enc.SetBuffer(mods, 0, 3)
	enc.SetBuffer(mods, 0, 4)
	if gateOff >= 0 {
		prm.Mode |= 1
		enc.SetBuffer(mods, 4*gateOff, 3)
	}
	if scaleOff >= 0 {
		prm.Mode |= 2
		enc.SetBuffer(mods, 4*scaleOff, 4)
	}
	enc.SetBytes(device.StructBytes(&prm), 5)
	enc.Dispatch(groups(n, 1, 1), threads(256, 1))
}

// recordAmax folds the largest |value| of count halves of buf into the slot of block's site.
func (e *encoder) recordAmax(buf device.Buffer, count, block, site int) {
	if e.amax == nil {
		return
	}
	n, slot := uint32(count), uint32(block*len(amaxSites)+site)
	enc := e.rec.encoder(ml.ClassCopy)
	enc.SetPipeline(e.d.pipes.amax)
	enc.SetBuffer(buf, 0, 0)
	enc.SetBuffer(e.amax, 0, 1)
	enc.SetBytes(device.StructBytes(&n), 2)
	enc.SetBytes(device.StructBytes(&slot), 3)
	enc.Dispatch(groups(min(256, ceilDiv(count, 256)), 1, 1), threads(256, 1)) // threads stride over the data
}

// blocks runs every block over the pass's rows; xn must already hold the first block's
// modulated LayerNorm.
func (e *encoder) blocks(p *pass) {
	c, g, pp := e.d.cfg, e.guards, e.d.pipes
	D, F, nh := c.Hidden(), c.MLPHidden(), c.Heads
	a, n := p.a, p.rows
	gl := a.rows * F // the up half of gu
	for l := range e.d.blocks {
		blk := &e.d.blocks[l]
		// q | k | v into the panel, stored ·2^-qkv
		e.gemm(blk, []int{wQ, wK, wV}, a.xn, []int{0, 0, 0}, D, a.panel, []int{0, D, 2 * D}, 3*D, n, true, pow2(g.Attn-g.QKV))
		for i, w := range []int{wQ, wK, wV} {
			e.lora(blockLayer(l, w), loraIO{x: a.xn, xHalf: true, ldx: D, y: a.panel, yHalf: true, yOff: i * D, ldy: 3 * D, n: n,
				mul: pow2(g.Attn - g.QKV), biasMul: pow2(-g.QKV)})
		}
		e.recordAmax(a.panel, n*3*D, l, 1)
		{
			// RMSNorm is scale-free but for eps, which scales with the stored values' square.
			prm := kernels.QkParams{H: uint32(D), NH: uint32(nh), Ldp: uint32(3 * D), Eps: c.Eps * pow2(-2*g.QKV),
				QMul: float32(math.Log2E / math.Sqrt(float64(c.HeadDim)))}
			enc := e.rec.encoder(ml.ClassRope)
			enc.SetPipeline(pp.qkrope)
			enc.SetBuffer(a.panel, 0, 0)
			enc.SetBuffer(e.d.aux, blk.normQ, 1)
			enc.SetBuffer(e.d.aux, blk.normK, 2)
			enc.SetBuffer(p.ropeCos, 0, 3)
			enc.SetBuffer(p.ropeSin, p.ropeSinOff, 4)
			enc.SetBytes(device.StructBytes(&prm), 5)
			enc.Dispatch(groups(n, ceilDiv(2*nh, 4), 1), threads(128, 1))
		}
		kvOff := l * p.prefix * 2 * D * 2
		if p.vis != nil {
			prm := kernels.KvParams{H: uint32(D), N: uint32(n), Ldp: uint32(3 * D)}
			enc := e.rec.encoder(ml.ClassCopy)
			enc.SetPipeline(pp.kvcopy)
			enc.SetBuffer(a.panel, 0, 0)
			enc.SetBuffer(p.pkv, kvOff, 1)
			enc.SetBytes(device.StructBytes(&prm), 2)
			enc.Dispatch(groups(ceilDiv(2*D/8, 64), ceilDiv(n, 4), 1), threads(64, 4))
		}
		{
			prm := kernels.FlashParams{NQ: uint32(n), NOwn: uint32(n), Ldp: uint32(3 * D), H: uint32(D), Ldo: uint32(D),
				OScale: pow2(g.QKV - g.AO)}
			vis := p.vis
			if vis != nil {
				prm.UseVis = 1
			} else {
				prm.NPre = uint32(p.prefix)
				vis = a.y // bound but unread
			}
			fk := pp.flashFor(D, kvOff)
			enc := e.rec.encoder(ml.ClassAttn)
			e.rec.flops(4 * float64(n) * float64(n+p.prefix) * float64(D))
			enc.SetPipeline(fk.p)
			enc.SetBuffer(a.panel, 0, 0)
			enc.SetBuffer(a.attn, 0, 1)
			enc.SetBuffer(p.pkv, kvOff, 2)
			enc.SetBuffer(vis, 0, 3)
			enc.SetBytes(device.StructBytes(&prm), 4)
			enc.Dispatch(fk.v.Grid(n, nh))
		}
		e.recordAmax(a.attn, n*D, l, 2)
		e.gemm(blk, []int{wO}, a.attn, []int{0}, D, a.y, []int{0}, D, n, false, pow2(g.AO))
		e.lora(blockLayer(l, wO), loraIO{x: a.attn, xHalf: true, ldx: D, y: a.y, ldy: D, n: n, mul: pow2(g.AO), biasMul: 1})
		e.rowOp(a, n, p.mods, D, 2*D, pow2(-g.FFN))
		e.recordAmax(a.xn, n*D, l, 3)
		e.gemm(blk, []int{wGate, wUp}, a.xn, []int{0, 0}, D, a.gu, []int{0, gl}, F, n, false, pow2(g.FFN))
		for i, w := range []int{wGate, wUp} {
			e.lora(blockLayer(l, w), loraIO{x: a.xn, xHalf: true, ldx: D, y: a.gu, yOff: i * gl, ldy: F, n: n, mul: pow2(g.FFN), biasMul: 1})
		}
		{
			prm := kernels.SwigluParams{N4: uint32(n * F / 4), UOff: uint32(gl), OScale: pow2(-g.Hid)}
			enc := e.rec.encoder(ml.ClassAct)
			enc.SetPipeline(pp.swiglu)
			enc.SetBuffer(a.gu, 0, 0)
			enc.SetBuffer(a.hid, 0, 1)
			enc.SetBytes(device.StructBytes(&prm), 2)
			enc.Dispatch(groups(ceilDiv(int(prm.N4), 256), 1, 1), threads(256, 1))
		}
		e.recordAmax(a.hid, n*F, l, 4)
		e.gemm(blk, []int{wDown}, a.hid, []int{0}, F, a.y, []int{0}, D, n, false, pow2(g.Hid))
		e.lora(blockLayer(l, wDown), loraIO{x: a.hid, xHalf: true, ldx: F, y: a.y, ldy: D, n: n, mul: pow2(g.Hid), biasMul: 1})
		if l+1 < len(e.d.blocks) {
			e.rowOp(a, n, p.mods, 3*D, 0, pow2(-g.Attn))
			e.recordAmax(a.xn, n*D, l+1, 0)
		} else {
			e.rowOp(a, n, p.mods, 3*D, -1, 1)
		}
		if (l+1)%max(e.perBuffer, 1) == 0 {
			e.rec.cut()
		}
	}
}

// embed is x = img_in(xtok) for a step's n latent tokens.
func (e *encoder) embed(xtok, x device.Buffer, n int) {
	D := e.d.cfg.Hidden()
	prm := kernels.EmbedParams{H: uint32(D), N: uint32(n)}
	enc := e.rec.encoder(ml.ClassGemm)
	enc.SetPipeline(e.d.pipes.embed)
	enc.SetBuffer(xtok, 0, 0)
	enc.SetBuffer(e.d.aux, e.d.imgIn, 1)
	enc.SetBuffer(x, 0, 2)
	enc.SetBytes(device.StructBytes(&prm), 3)
	enc.Dispatch(groups(ceilDiv(D, 256), n, 1), threads(256, 1))
	e.lora("img_in", loraIO{x: xtok, ldx: e.d.cfg.InChannels, y: x, ldy: D, n: n, mul: 1, biasMul: 1})
}

// final is out = proj_out(LN(x)·fs) over n rows. With a LoRA on proj_out, h (float [n][D], free
// at this point) receives LN(x)·fs for the LoRA's input.
func (e *encoder) final(x, fs device.Buffer, fsOff int, out, h device.Buffer, n int) {
	c := e.d.cfg
	prm := kernels.FinalParams{H: uint32(c.Hidden()), Eps: c.Eps}
	enc := e.rec.encoder(ml.ClassNorm)
	enc.SetPipeline(e.d.pipes.final)
	enc.SetBuffer(x, 0, 0)
	enc.SetBuffer(fs, fsOff, 1)
	enc.SetBuffer(e.d.aux, e.d.projOut, 2)
	enc.SetBuffer(out, 0, 3)
	enc.SetBytes(device.StructBytes(&prm), 4)
	enc.Dispatch(groups(n, 1, 1), threads(256, 1))
	if e.hasLoRA("proj_out") {
		D := c.Hidden()
		lp := kernels.LoraParams{N: uint32(n), K: uint32(D), Eps: c.Eps}
		enc := e.rec.encoder(ml.ClassNorm)
		enc.SetPipeline(e.d.pipes.loraLNScale)
		enc.SetBuffer(x, 0, 0)
		enc.SetBuffer(fs, fsOff, 1)
		enc.SetBuffer(h, 0, 2)
		enc.SetBytes(device.StructBytes(&lp), 3)
		g, th := kernels.LoraLNScaleGrid(n)
		enc.Dispatch(g, th)
		e.lora("proj_out", loraIO{x: h, ldx: D, y: out, ldy: c.OutChannels, n: n, mul: 1, biasMul: 1})
	}
}
