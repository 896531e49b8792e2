package qwen3vlmetal

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"easel/engine/ml"
	"easel/engine/ml/metal"
	"easel/engine/ml/metalops"
	"easel/engine/quant"
	"easel/engine/qwen3vl"
	"easel/kernels/device"
)

// Encoder is engine/qwen3vl's encoder bound to a Metal device. Its methods may not be called
// concurrently.
type Encoder struct {
	b          *metalops.Backend
	enc        *qwen3vl.Encoder
	arenaPlan  *metal.WeightArenaPlan // nil when no weight lies in the mapping
	arenaBytes int64

	vectors    int64 // the uploaded norms' gains and biases
	maxBuffer  int64
	workingSet int64
	others     func() int64 // device memory other networks hold (the denoiser's), or nil
}

// recordingSource remembers every tensor the encoder binds, so their payloads can be placed.
type recordingSource struct {
	quant.Source
	seen []*quant.Tensor
}

func (r *recordingSource) Tensor(name string) (*quant.Tensor, error) {
	t, err := r.Source.Tensor(name)
	if err == nil && t != nil && t.DType != quant.U8 {
		r.seen = append(r.seen, t)
	}
	return t, err
}

// New loads the text encoder (and the vision tower when src has one) onto dev: the q8 and f16
// weights inside mapping (the file's whole mapping, e.g. (*cmf.File).Bytes()) are read in place;
// other codecs are converted on the device when first used. The token embedding table is read on
// the host and never placed. A *metal.Declined error means the CPU encoder should run.
func New(dev device.Device, src quant.Source, mapping []byte) (*Encoder, error) {
	if dev == nil || src == nil {
		return nil, errors.New("qwen3vlmetal: New needs a device and a model file")
	}
	knobs, err := metal.KnobsFromEnv()
	if err != nil {
		return nil, err
	}
	b, err := metalops.New(dev)
	if err != nil {
		return nil, err
	}
	b.SetProfile(knobs.Profile)
	e := &Encoder{b: b}
	e.maxBuffer, e.workingSet = metal.DeviceLimits(dev)
	rec := &recordingSource{Source: src}
	if e.enc, err = qwen3vl.NewEncoder(b, rec); err != nil {
		b.Close()
		return nil, err
	}
	var tensors [][]byte
	var names []string
	for _, t := range rec.seen {
		placed := t.DType == quant.F16 || t.DType == quant.Q8_2F || t.DType == quant.Q8Row
		if placed && inside(mapping, t.Data) && t.Rows() > 1 && !isEmbedding(t.Name) {
			tensors = append(tensors, t.Data)
			names = append(names, t.Name)
		}
	}
	if len(tensors) > 0 {
		if e.arenaPlan, err = metal.PlanWeightArena(mapping, tensors, names, e.maxBuffer); err != nil {
			b.Close()
			return nil, err
		}
		for _, c := range e.arenaPlan.Chunks() {
			e.arenaBytes += c
		}
	}
	e.vectors = b.LiveBytes()
	if need := e.vectors + e.arenaBytes; need > e.workingSet {
		b.Close()
		return nil, metal.Decline("the text encoder's weights need %s of GPU memory, more than this GPU's recommended working set (%s)", metal.FormatBytes(need), metal.FormatBytes(e.workingSet))
	}
	return e, nil
}

// isEmbedding reports the token embedding table, which the encoder reads row by row on the host.
func isEmbedding(name string) bool {
	return name == "te.model.embed_tokens.weight" || name == "te.embed_tokens.weight"
}

// inside reports whether b is a slice of mapping.
func inside(mapping, b []byte) bool {
	if len(mapping) == 0 || len(b) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mapping)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= base && p+uintptr(len(b)) <= base+uintptr(len(mapping))
}

// SetOtherResident tells the encoder how much device memory other networks hold when it runs.
func (e *Encoder) SetOtherResident(f func() int64) { e.others = f }

// Model is the engine/qwen3vl encoder bound to the device backend.
func (e *Encoder) Model() *qwen3vl.Encoder { return e.enc }

// DeviceName names the device.
func (e *Encoder) DeviceName() string { return e.b.Device().Name() }

// Timings is the GPU time per op class in profiling mode (EASEL_METAL_PROF=1), else empty.
func (e *Encoder) Timings() *ml.Timings { return e.b.Timings() }

// DeviceTime is the GPU time of every Encode so far.
func (e *Encoder) DeviceTime() time.Duration { return e.b.DeviceTime() }

// ResidentBytes is the device memory the encoder holds between calls: gains and biases.
func (e *Encoder) ResidentBytes() int64 { return e.vectors }

// WeightBytes is the device memory of the weight arena while an Encode runs.
func (e *Encoder) WeightBytes() int64 { return e.arenaBytes }

// Close frees the device memory (the mapping stays the caller's).
func (e *Encoder) Close() { e.b.Close() }

// PlanEncode estimates the device memory an Encode of tokens tokens needs beyond the weights:
// PlanEncodeFor at this encoder's geometry and the images' patch grids.
func (e *Encoder) PlanEncode(tokens int, images []qwen3vl.VisionInput) int64 {
	var vc *qwen3vl.VisionConfig
	if c, ok := e.enc.VisionConfig(); ok {
		vc = &c
	}
	grids := make([][3]int, len(images))
	for i, img := range images {
		grids[i] = img.Grid
	}
	return PlanEncodeFor(e.enc.TextConfig(), vc, tokens, grids)
}

// PlanEncodeFor is the device memory, beyond the weights, of encoding tokens prompt tokens with
// condition images of the given patch grids (image_grid_thw) on an encoder of geometry tc and vc
// (nil: no vision tower), from the configs alone: the language model's activations (the residual
// stream, normalized rows, q, k, v, the attention output, gate and up, the RoPE tables) and its
// score buffer, or the vision tower's for the largest image's patches, whichever is larger (the
// tower runs first), plus the merged outputs the tower keeps for the language model. Encode's
// check and app/memplan's prediction both count with it.
func PlanEncodeFor(tc qwen3vl.TextConfig, vc *qwen3vl.VisionConfig, tokens int, grids [][3]int) int64 {
	qw, kvw := tc.Heads*tc.HeadDim, tc.KVHeads*tc.HeadDim
	n := int64(tokens)
	lm := n*int64(2*tc.Hidden+2*qw+2*kvw+2*tc.Intermediate+tc.HeadDim)*4 + metalops.AttentionScratchBytes(tokens, tokens, tc.Heads)
	var vis, kept int64
	if vc != nil {
		for _, g := range grids {
			p := g[0] * g[1] * g[2]
			pp := int64(p)
			// patches in, the stream, its norm, the qkv panel and its transpose, the attention
			// output, the MLP hidden layer, the rotary tables; the merged outputs it keeps.
			per := pp*int64(vc.PatchValues()+2*vc.Hidden+7*vc.Hidden+vc.Intermediate+vc.HeadDim())*4 +
				metalops.AttentionScratchBytes(p, p, vc.Heads)
			vis = max(vis, per)
			kept += pp / 4 * int64(1+len(vc.DeepstackIndexes)) * int64(vc.OutHidden) * 4
		}
	}
	return max(lm, vis) + kept
}

// fit declines work whose planned activations do not fit beside the weights and what other
// networks hold.
func (e *Encoder) fit(what string, need int64) error {
	var others int64
	if e.others != nil {
		others = e.others()
	}
	weights := e.vectors + e.arenaBytes
	if total := weights + need + others; total > e.workingSet {
		held := ""
		if others > 0 {
			held = ", " + metal.FormatBytes(others) + " held by the denoiser"
		}
		return metal.Decline("%s needs %s of GPU memory (%s of weights, %s of activations%s), more than this GPU's recommended working set (%s)",
			what, metal.FormatBytes(total), metal.FormatBytes(weights), metal.FormatBytes(need), held, metal.FormatBytes(e.workingSet))
	}
	return nil
}

// Encode is qwen3vl.Encoder.Encode on the device.
func (e *Encoder) Encode(ctx context.Context, ids []int32, images []qwen3vl.VisionInput) (out []float32, err error) {
	need := e.PlanEncode(len(ids), images)
	what := fmt.Sprintf("encoding a prompt of %d tokens", len(ids))
	if len(images) > 0 {
		what += fmt.Sprintf(" with %d condition images", len(images))
	}
	err = e.run(what, need, func() (err error) {
		out, err = e.enc.Encode(ctx, ids, images)
		return err
	})
	return out, err
}

// EncodeImage is qwen3vl.Encoder.EncodeImage (the vision tower alone) on the device.
func (e *Encoder) EncodeImage(ctx context.Context, img qwen3vl.VisionInput) (embeds []float32, deepstack [][]float32, err error) {
	need := e.PlanEncode(0, []qwen3vl.VisionInput{img})
	err = e.run("encoding a condition image", need, func() (err error) {
		embeds, deepstack, err = e.enc.EncodeImage(ctx, img)
		return err
	})
	return embeds, deepstack, err
}

// run checks the plan, makes the weight arena, runs call with the planned budget, then frees the
// activation buffers, the converted weights and the arena. A decline met on the way (a buffer
// past the largest one) is returned as the *metal.Declined it is.
func (e *Encoder) run(what string, need int64, call func() error) error {
	if err := e.fit(what, need); err != nil {
		return err
	}
	if e.arenaPlan != nil {
		arena, err := e.arenaPlan.Build(e.b.Device())
		if err != nil {
			return err
		}
		e.b.SetArena(arena)
		defer func() {
			e.b.SetArena(nil)
			arena.Release()
		}()
	}
	e.b.SetBudget(e.vectors + need)
	e.b.TakeDecline()
	err := call()
	if serr := e.b.Release(); serr != nil && err == nil {
		err = serr
	}
	if d := e.b.TakeDecline(); err != nil && d != nil {
		return d // the op's error wraps it as text
	}
	return err
}
