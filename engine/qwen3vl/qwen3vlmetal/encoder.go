package qwen3vlmetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metalops"
	"easel/engine/quant"
	"easel/engine/qwen3vl"
	"easel/kernels/device"
)

// Encoder is engine/qwen3vl's encoder bound to a Metal device. Its methods may not be called
// concurrently. It is a metalops.Network: between calls only the norms' gains and biases stay on
// the device.
type Encoder struct {
	*metalops.Network
	enc  *qwen3vl.Encoder
	host *qwen3vl.Encoder // the CPU encoder Generate prepares prompt rows with (NewRunner sets it)
}

// New loads the text encoder (and the vision tower when src has one) onto dev: the q8 and f16
// weights inside mapping (the file's whole mapping, e.g. (*cmf.File).Bytes()) are read in place;
// other codecs are converted on the device when first used. The token embedding table is read on
// the host and never placed. A *metal.Declined error means the CPU encoder should run.
func New(dev device.Device, src quant.Source, mapping []byte) (*Encoder, error) {
	if dev == nil || src == nil {
		return nil, errors.New("qwen3vlmetal: New needs a device and a model file")
	}
	net, err := metalops.NewNetwork(dev, "the text encoder")
	if err != nil {
		return nil, err
	}
	e := &Encoder{Network: net}
	if e.enc, err = qwen3vl.NewEncoder(net.Backend(), net.Source(src)); err == nil {
		err = net.Place(mapping, func(t *quant.Tensor) bool {
			placed := t.DType == quant.F16 || t.DType == quant.Q8_2F || t.DType == quant.Q8Row
			return placed && t.Rows() > 1 && !isEmbedding(t.Name)
		})
	}
	if err != nil {
		net.Close()
		return nil, err
	}
	return e, nil
}

// isEmbedding reports the token embedding table, which the encoder reads row by row on the host.
func isEmbedding(name string) bool {
	return name == "te.model.embed_tokens.weight" || name == "te.embed_tokens.weight"
}

// Model is the engine/qwen3vl encoder bound to the device backend.
func (e *Encoder) Model() *qwen3vl.Encoder { return e.enc }

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

// Encode is qwen3vl.Encoder.Encode on the device.
func (e *Encoder) Encode(ctx context.Context, ids []int32, images []qwen3vl.VisionInput) (out []float32, err error) {
	need := e.PlanEncode(len(ids), images)
	what := fmt.Sprintf("encoding a prompt of %d tokens", len(ids))
	if len(images) > 0 {
		what += fmt.Sprintf(" with %d condition images", len(images))
	}
	err = e.Run(what, need, func() (err error) {
		out, err = e.enc.Encode(ctx, ids, images)
		return err
	})
	return out, err
}

// EncodeImage is qwen3vl.Encoder.EncodeImage (the vision tower alone) on the device.
func (e *Encoder) EncodeImage(ctx context.Context, img qwen3vl.VisionInput) (embeds []float32, deepstack [][]float32, err error) {
	need := e.PlanEncode(0, []qwen3vl.VisionInput{img})
	err = e.Run("encoding a condition image", need, func() (err error) {
		embeds, deepstack, err = e.enc.EncodeImage(ctx, img)
		return err
	})
	return embeds, deepstack, err
}
