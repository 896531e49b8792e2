package qwen3vl

import (
	"context"
	"fmt"
	"math"

	"easel/engine/ml"
	"easel/engine/quant"
)

// visionNormEps is the epsilon of every LayerNorm in the vision tower (nn.LayerNorm(eps=1e-6)).
const visionNormEps = 1e-6

// VisionInput is one condition image as the Qwen3-VL image processor hands it over.
type VisionInput struct {
	// Pixels is pixel_values: Grid[0]·Grid[1]·Grid[2] rows of VisionConfig.PatchValues() values
	// (channel, frame, y, x), rows in merge-window order.
	Pixels []float32
	// Grid is image_grid_thw: frames, rows and columns of patches.
	Grid [3]int
}

// visionTower runs the vision tower (spec §10.4) on a backend.
type visionTower struct {
	b ml.Backend
	c VisionConfig
	w *visionWeights
	// tap, when set, sees every stage's output under the reference's hook names (tests compare
	// them with the debug case to localize a mismatch).
	tap func(stage string, t ml.Tensor)
}

func (v *visionTower) observe(stage string, t ml.Tensor) {
	if v.tap != nil {
		v.tap(stage, t)
	}
}

// frameSpan is one attention window: the patches of one frame of one image.
type frameSpan struct{ start, count int }

// visionOutput is what the language model receives: the merged image embeddings [tokens, out]
// of every image in order, and one DeepStack feature tensor of the same shape per merger.
type visionOutput struct {
	embeds    ml.Tensor
	deepstack []ml.Tensor
}

func (o *visionOutput) free(b ml.Backend) {
	if o.embeds != nil {
		b.Free(o.embeds)
	}
	for _, t := range o.deepstack {
		if t != nil {
			b.Free(t)
		}
	}
}

// checkImages validates each image's grid and pixel count and returns its merged grid.
func (v *visionTower) checkImages(images []VisionInput) ([]mergedGrid, error) {
	m := v.c.MergeSize
	grids := make([]mergedGrid, len(images))
	for i, im := range images {
		t, h, w := im.Grid[0], im.Grid[1], im.Grid[2]
		if t <= 0 || h <= 0 || w <= 0 || h%m != 0 || w%m != 0 {
			return nil, fmt.Errorf("condition image %d: grid %v is not positive frames × rows × columns with rows and columns multiples of %d", i+1, im.Grid, m)
		}
		if want := t * h * w * v.c.PatchValues(); len(im.Pixels) != want {
			return nil, fmt.Errorf("condition image %d: %d pixel values for a %v grid of %d-value patches; %d expected", i+1, len(im.Pixels), im.Grid, v.c.PatchValues(), want)
		}
		grids[i] = mergedGrid{t: t, h: h / m, w: w / m}
	}
	return grids, nil
}

// hostInputs is the images laid out as the tower's rows, all in merge-window order: the pixel
// rows, the interpolated position embeddings, each patch's (row, col) for the 2-D rotary, and the
// attention windows (one per frame).
type hostInputs struct {
	pixels, posEmb []float32
	ropePos        [][]int
	spans          []frameSpan
}

// hostInputs prepares the images on the host.
func (v *visionTower) hostInputs(images []VisionInput) (*hostInputs, error) {
	c := v.c
	table, err := quant.Dequantize(v.w.posEmbed)
	if err != nil {
		return nil, fmt.Errorf("vision position embeddings: %w", err)
	}
	in := &hostInputs{}
	for _, im := range images {
		t, h, w := im.Grid[0], im.Grid[1], im.Grid[2]
		in.pixels = append(in.pixels, im.Pixels...)
		for range t {
			in.spans = append(in.spans, frameSpan{start: len(in.ropePos), count: h * w})
			for _, rc := range mergeWindowOrder(1, h, w, c.MergeSize) {
				in.ropePos = append(in.ropePos, []int{rc[0], rc[1]})
			}
		}
		in.posEmb = append(in.posEmb, interpolatedPositions(table, c.GridSide(), c.Hidden, t, h, w, c.MergeSize)...)
	}
	return in, nil
}

// encode runs the tower over the images' patches together (attention stays within each frame).
func (v *visionTower) encode(ctx context.Context, images []VisionInput) (*visionOutput, error) {
	c := v.c
	C, hd := c.Hidden, c.HeadDim()
	host, err := v.hostInputs(images)
	if err != nil {
		return nil, err
	}
	n := len(host.ropePos)
	cosT, sinT, err := ml.RopeTable(host.ropePos, []int{hd / 2, hd / 2}, c.RopeTheta)
	if err != nil {
		return nil, fmt.Errorf("vision rotary table: %w", err)
	}

	e := ml.NewScope(v.b)
	defer e.Release()
	rope := &ml.Rope{Cos: e.Own(e.Upload(cosT, n, hd/2)), Sin: e.Own(e.Upload(sinT, n, hd/2)), Pairs: ml.HalfSplit}
	in := e.Own(e.Upload(host.pixels, n, c.PatchValues()))
	pos := e.Own(e.Upload(host.posEmb, n, C))
	s := &visionScratch{
		x: e.Temp(n, C), h: e.Temp(n, C), qkv: e.Temp(n, 3*C), qkvT: e.Temp(3*C, n),
		q: e.Temp(n, C), k: e.Temp(n, C), v: e.Temp(n, C), attn: e.Temp(n, C), mlp: e.Temp(n, c.Intermediate),
	}
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("vision tower over %d patches: %w", n, err)
	}
	linear(e, s.x, in, v.w.patchEmbed, v.w.patchBias)
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("vision patch embedding: %w", err)
	}
	v.observe("visual.patch_embed", s.x)
	if e.Do(e.B.Add(s.x, s.x, pos)); e.Err() != nil {
		return nil, fmt.Errorf("vision position embeddings: %w", e.Err())
	}

	out := &visionOutput{deepstack: make([]ml.Tensor, len(c.DeepstackIndexes))}
	fail := func(format string, args ...any) (*visionOutput, error) {
		out.free(v.b)
		return nil, fmt.Errorf(format, args...)
	}
	for i := range v.w.blocks {
		if err := ctx.Err(); err != nil {
			return fail("%w", err)
		}
		if v.block(e, &v.w.blocks[i], s, rope, host.spans); e.Err() != nil {
			return fail("vision block %d: %w", i, e.Err())
		}
		v.observe(fmt.Sprintf("visual.blocks.%d", i), s.x)
		if k := deepstackSlot(c, i); k >= 0 {
			if out.deepstack[k] = v.merge(e, &v.w.deepstack[k], s.x, n); e.Err() != nil {
				return fail("vision DeepStack merger %d: %w", k, e.Err())
			}
			v.observe(fmt.Sprintf("visual.deepstack_merger_list.%d", k), out.deepstack[k])
		}
	}
	if out.embeds = v.merge(e, &v.w.merger, s.x, n); e.Err() != nil {
		return fail("vision merger: %w", e.Err())
	}
	v.observe("visual.merger", out.embeds)
	return out, nil
}

// visionScratch holds the activations of one pass through the blocks.
type visionScratch struct {
	x, h, qkv, qkvT, q, k, v, attn, mlp ml.Tensor
}

// block is one ViT block (spec §10.4):
//
//	x += proj(attn(rope(q), rope(k), v)) with q, k, v = split(qkv(LN1(x))), attention per frame
//	x += fc2(act(fc1(LN2(x))))
func (v *visionTower) block(e *ml.Scope, blk *visionBlock, s *visionScratch, rope *ml.Rope, spans []frameSpan) {
	b, c := e.B, v.c
	C, H, hd := c.Hidden, c.Heads, c.HeadDim()
	e.Do(b.LayerNorm(s.h, s.x, blk.Norm1W, blk.Norm1B, visionNormEps))
	linear(e, s.qkv, s.h, blk.QKV, blk.QKVB)
	splitThirds(e, s.qkv, s.qkvT, s.q, s.k, s.v)
	e.Do(b.HeadNormRoPE(s.q, H, hd, nil, 0, rope))
	e.Do(b.HeadNormRoPE(s.k, H, hd, nil, 0, rope))
	spec := ml.AttnSpec{Heads: H, KVHeads: H, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
	for _, sp := range spans {
		rows := func(t ml.Tensor) ml.Tensor { return e.Rows(t, sp.start, sp.count, C) }
		e.Do(b.Attention(rows(s.attn), rows(s.q), rows(s.k), rows(s.v), nil, nil, spec))
	}
	linear(e, s.h, s.attn, blk.Proj, blk.ProjB)
	e.Do(b.Add(s.x, s.x, s.h))
	e.Do(b.LayerNorm(s.h, s.x, blk.Norm2W, blk.Norm2B, visionNormEps))
	linear(e, s.mlp, s.h, blk.FC1, blk.FC1B)
	if c.GELUTanh {
		e.Do(b.GELUTanh(s.mlp, s.mlp))
	} else {
		e.Do(b.GELUErf(s.mlp, s.mlp))
	}
	linear(e, s.h, s.mlp, blk.FC2, blk.FC2B)
	e.Do(b.Add(s.x, s.x, s.h))
}

// merge runs a patch merger over x [n, C]: each merge window's tokens (consecutive rows) become
// one row of 4·C, normalized per token (final merger) or per merged row (DeepStack), then
// fc2(GELU(fc1(·))). The result [n/4, out] is a new tensor the caller owns; the merger's own
// intermediates are freed when it returns.
func (v *visionTower) merge(e *ml.Scope, m *patchMerger, x ml.Tensor, n int) ml.Tensor {
	c := v.c
	unit := c.MergeSize * c.MergeSize
	rows, wide := n/unit, c.Hidden*unit
	t := ml.NewScope(e.B)
	defer func() {
		t.Release()
		e.Do(t.Err())
	}()
	b := t.B
	if m.postShuffle {
		normed := t.Temp(rows, wide)
		t.Do(b.LayerNorm(normed, t.Slice(x, 0, rows, wide), m.NormW, m.NormB, visionNormEps))
		return v.mergeMLP(t, m, normed, rows, wide)
	}
	normed := t.Temp(n, c.Hidden)
	t.Do(b.LayerNorm(normed, x, m.NormW, m.NormB, visionNormEps))
	return v.mergeMLP(t, m, t.Slice(normed, 0, rows, wide), rows, wide)
}

// mergeMLP is a merger's fc2(GELU(fc1(merged))) into a new [rows, out] tensor the caller owns.
func (v *visionTower) mergeMLP(t *ml.Scope, m *patchMerger, merged ml.Tensor, rows, wide int) ml.Tensor {
	hidden := t.Temp(rows, wide)
	linear(t, hidden, merged, m.FC1, m.FC1B)
	t.Do(t.B.GELUErf(hidden, hidden))
	out := t.New(rows, v.c.OutHidden)
	linear(t, out, hidden, m.FC2, m.FC2B)
	if t.Err() != nil && out != nil {
		t.B.Free(out)
		return nil
	}
	return out
}

// linear is dst = x·wᵀ + bias.
func linear(e *ml.Scope, dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor) {
	e.Do(e.B.Linear(dst, x, w))
	e.Do(e.B.Add(dst, dst, bias))
}

// splitThirds splits the fused qkv [n, 3C] into q, k, v [n, C] each. The op set slices rows only,
// so the columns go through a transpose: qkvT = qkvᵀ [3C, n], whose row blocks are qᵀ, kᵀ, vᵀ.
func splitThirds(e *ml.Scope, qkv, qkvT, q, k, v ml.Tensor) {
	e.Do(e.B.Transpose(qkvT, qkv))
	if qkvT == nil {
		return
	}
	shape := qkvT.Shape()
	third, n := shape[0]/3, shape[1]
	for i, dst := range []ml.Tensor{q, k, v} {
		e.Do(e.B.Transpose(dst, e.Slice(qkvT, i*third*n, third, n)))
	}
}
