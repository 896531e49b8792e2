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
func (v *visionTower) encode(ctx context.Context, images []VisionInput) (out *visionOutput, err error) {
	b, c := v.b, v.c
	C, hd := c.Hidden, c.HeadDim()
	host, err := v.hostInputs(images)
	if err != nil {
		return nil, err
	}
	n := len(host.ropePos)

	var temps []ml.Tensor
	defer func() {
		for _, t := range temps {
			b.Free(t)
		}
	}()
	alloc := func(shape ...int) ml.Tensor {
		if err != nil {
			return nil
		}
		var t ml.Tensor
		if t, err = b.New(shape...); err == nil {
			temps = append(temps, t)
		}
		return t
	}
	upload := func(data []float32, shape ...int) ml.Tensor {
		if err != nil {
			return nil
		}
		var t ml.Tensor
		if t, err = b.Upload(data, shape...); err == nil {
			temps = append(temps, t)
		}
		return t
	}

	cosT, sinT, err := ml.RopeTable(host.ropePos, []int{hd / 2, hd / 2}, c.RopeTheta)
	if err != nil {
		return nil, fmt.Errorf("vision rotary table: %w", err)
	}
	rope := &ml.Rope{Cos: upload(cosT, n, hd/2), Sin: upload(sinT, n, hd/2), Pairs: ml.HalfSplit}
	in := upload(host.pixels, n, c.PatchValues())
	pos := upload(host.posEmb, n, C)
	s := &visionScratch{
		x: alloc(n, C), h: alloc(n, C), qkv: alloc(n, 3*C), qkvT: alloc(3*C, n),
		q: alloc(n, C), k: alloc(n, C), v: alloc(n, C), attn: alloc(n, C), mlp: alloc(n, c.Intermediate),
	}
	if err != nil {
		return nil, fmt.Errorf("vision tower over %d patches: %w", n, err)
	}
	if err := v.linear(s.x, in, v.w.patchEmbed); err != nil {
		return nil, fmt.Errorf("vision patch embedding: %w", err)
	}
	v.observe("visual.patch_embed", s.x)
	if err := b.Add(s.x, s.x, pos); err != nil {
		return nil, fmt.Errorf("vision position embeddings: %w", err)
	}

	out = &visionOutput{deepstack: make([]ml.Tensor, len(c.DeepstackIndexes))}
	for i := range v.w.blocks {
		if err := ctx.Err(); err != nil {
			out.free(b)
			return nil, err
		}
		if err := v.block(&v.w.blocks[i], s, rope, host.spans); err != nil {
			out.free(b)
			return nil, fmt.Errorf("vision block %d: %w", i, err)
		}
		v.observe(fmt.Sprintf("visual.blocks.%d", i), s.x)
		if k := deepstackSlot(c, i); k >= 0 {
			if out.deepstack[k], err = v.merge(&v.w.deepstack[k], s.x, n); err != nil {
				out.free(b)
				return nil, fmt.Errorf("vision DeepStack merger %d: %w", k, err)
			}
			v.observe(fmt.Sprintf("visual.deepstack_merger_list.%d", k), out.deepstack[k])
		}
	}
	if out.embeds, err = v.merge(&v.w.merger, s.x, n); err != nil {
		out.free(b)
		return nil, fmt.Errorf("vision merger: %w", err)
	}
	v.observe("visual.merger", out.embeds)
	return out, nil
}

// visionScratch holds the activations of one pass through the blocks.
type visionScratch struct {
	x, h, qkv, qkvT, q, k, v, attn, mlp ml.Tensor
}

// block is one ViT block: x += proj(attn(LN1(x))); x += fc2(act(fc1(LN2(x)))).
func (v *visionTower) block(blk *visionBlock, s *visionScratch, rope *ml.Rope, spans []frameSpan) error {
	b, c := v.b, v.c
	C, H, hd := c.Hidden, c.Heads, c.HeadDim()
	if err := b.LayerNorm(s.h, s.x, blk.norm1.w, blk.norm1.b, visionNormEps); err != nil {
		return err
	}
	if err := v.linear(s.qkv, s.h, blk.qkv); err != nil {
		return err
	}
	if err := splitThirds(b, s.qkv, s.qkvT, s.q, s.k, s.v); err != nil {
		return err
	}
	for _, t := range []ml.Tensor{s.q, s.k} {
		if err := b.HeadNormRoPE(t, H, hd, nil, 0, rope); err != nil {
			return err
		}
	}
	spec := ml.AttnSpec{Heads: H, KVHeads: H, HeadDim: hd, Scale: float32(1 / math.Sqrt(float64(hd)))}
	for _, sp := range spans {
		var views [4]ml.Tensor
		for i, t := range []ml.Tensor{s.attn, s.q, s.k, s.v} {
			var err error
			if views[i], err = b.Slice(t, sp.start*C, sp.count, C); err != nil {
				return err
			}
		}
		if err := b.Attention(views[0], views[1], views[2], views[3], nil, nil, spec); err != nil {
			return err
		}
	}
	if err := v.linear(s.h, s.attn, blk.proj); err != nil {
		return err
	}
	if err := b.Add(s.x, s.x, s.h); err != nil {
		return err
	}
	if err := b.LayerNorm(s.h, s.x, blk.norm2.w, blk.norm2.b, visionNormEps); err != nil {
		return err
	}
	if err := v.linear(s.mlp, s.h, blk.fc1); err != nil {
		return err
	}
	act := b.GELUTanh
	if !c.GELUTanh {
		act = b.GELUErf
	}
	if err := act(s.mlp, s.mlp); err != nil {
		return err
	}
	if err := v.linear(s.h, s.mlp, blk.fc2); err != nil {
		return err
	}
	return b.Add(s.x, s.x, s.h)
}

// merge runs a patch merger over x [n, C]: each merge window's tokens (consecutive rows) become
// one row of 4·C, normalized per token (final merger) or per merged row (DeepStack), then
// fc2(GELU(fc1(·))). The result [n/4, out] is a new tensor the caller owns.
func (v *visionTower) merge(m *patchMerger, x ml.Tensor, n int) (ml.Tensor, error) {
	b, c := v.b, v.c
	unit := c.MergeSize * c.MergeSize
	rows, wide := n/unit, c.Hidden*unit
	var normed ml.Tensor
	var err error
	if m.postShuffle {
		normed, err = b.New(rows, wide)
	} else {
		normed, err = b.New(n, c.Hidden)
	}
	if err != nil {
		return nil, err
	}
	defer b.Free(normed)
	if m.postShuffle {
		view, err := b.Slice(x, 0, rows, wide)
		if err != nil {
			return nil, err
		}
		err = b.LayerNorm(normed, view, m.norm.w, m.norm.b, visionNormEps)
	} else {
		err = b.LayerNorm(normed, x, m.norm.w, m.norm.b, visionNormEps)
	}
	if err != nil {
		return nil, err
	}
	merged, err := b.Slice(normed, 0, rows, wide)
	if err != nil {
		return nil, err
	}
	hidden, err := b.New(rows, wide)
	if err != nil {
		return nil, err
	}
	defer b.Free(hidden)
	if err := v.linear(hidden, merged, m.fc1); err != nil {
		return nil, err
	}
	if err := b.GELUErf(hidden, hidden); err != nil {
		return nil, err
	}
	out, err := b.New(rows, c.OutHidden)
	if err != nil {
		return nil, err
	}
	if err := v.linear(out, hidden, m.fc2); err != nil {
		b.Free(out)
		return nil, err
	}
	return out, nil
}

// linear is dst = x·wᵀ + bias.
func (v *visionTower) linear(dst, x ml.Tensor, l linearBias) error {
	if err := v.b.Linear(dst, x, l.w); err != nil {
		return err
	}
	return v.b.Add(dst, dst, l.bias)
}

// splitThirds splits the fused qkv [n, 3C] into q, k, v [n, C] each. The op set slices rows only,
// so the columns go through a transpose: qkvT = qkvᵀ [3C, n], whose row blocks are qᵀ, kᵀ, vᵀ.
func splitThirds(b ml.Backend, qkv, qkvT, q, k, v ml.Tensor) error {
	if err := b.Transpose(qkvT, qkv); err != nil {
		return err
	}
	shape := qkvT.Shape()
	third, n := shape[0]/3, shape[1]
	for i, dst := range []ml.Tensor{q, k, v} {
		part, err := b.Slice(qkvT, i*third*n, third, n)
		if err != nil {
			return err
		}
		if err := b.Transpose(dst, part); err != nil {
			return err
		}
	}
	return nil
}
