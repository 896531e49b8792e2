package vaemetal

import (
	"context"
	"errors"
	"fmt"

	"easel/engine/ml/metalops"
	"easel/engine/quant"
	"easel/engine/vae"
	"easel/kernels/device"
)

// VAE is engine/vae's model bound to a Metal device. Its methods may not be called concurrently.
//
// It is a metalops.Network: only the biases and gains stay on the device between calls; the
// weight arena (no-copy buffers over the mapping) is made for each call and released after it,
// with every activation buffer, so the VAE is resident only while it runs.
type VAE struct {
	*metalops.Network
	m *vae.Model
}

// New loads the VAE of src (the model file) onto dev: the f16 weights inside mapping (the file's
// whole mapping, e.g. (*cmf.File).Bytes()) are read in place; others are converted to half on the
// device when first used. A *metal.Declined error means the CPU model should run the VAE.
func New(dev device.Device, src quant.Source, mapping []byte) (*VAE, error) {
	if dev == nil || src == nil {
		return nil, errors.New("vaemetal: New needs a device and a model file")
	}
	net, err := metalops.NewNetwork(dev, "the VAE")
	if err != nil {
		return nil, err
	}
	v := &VAE{Network: net}
	if v.m, err = vae.Load(net.Backend(), net.Source(src)); err == nil {
		err = net.Place(mapping, func(t *quant.Tensor) bool { return t.DType == quant.F16 })
	}
	if err != nil {
		net.Close()
		return nil, err
	}
	return v, nil
}

// Model is the engine/vae model bound to the device backend.
func (v *VAE) Model() *vae.Model { return v.m }

// PlanDecode is the device memory a decode of an h×w latent grid needs beyond ResidentBytes:
// PlanDecodeFor at this model's geometry.
func (v *VAE) PlanDecode(h, w int, tiling *vae.Tiling) (int64, error) {
	return PlanDecodeFor(v.m.Config(), h, w, tiling)
}

// PlanEncode is the device memory an encode of an H×W image (in one piece when tiling is nil)
// needs beyond ResidentBytes: PlanEncodeFor at this model's geometry.
func (v *VAE) PlanEncode(H, W int, tiling *vae.Tiling) (int64, error) {
	return PlanEncodeFor(v.m.Config(), H, W, tiling)
}

// PlanDecodeFor is the device memory, beyond the biases and gains, of decoding an h×w latent grid
// (in one piece when tiling is nil, else in its tiles) with a VAE of geometry cfg, from the config
// alone: engine/vae's dry run of the decode with the device's channel norm, plus the attention's
// score buffer for one tile. Decode's check and app/memplan's prediction both count with it.
func PlanDecodeFor(cfg *vae.Config, h, w int, tiling *vae.Tiling) (int64, error) {
	var p vae.Plan
	var err error
	th, tw := h, w
	if tiling == nil {
		p, err = vae.PlanDecodeFor(cfg, h, w)
	} else {
		p, err = vae.PlanDecodeTiledFor(cfg, h, w, *tiling)
		th, tw = min(h, tiling.Tile), min(w, tiling.Tile)
	}
	if err != nil {
		return 0, err
	}
	return p.PeakActivationBytes + metalops.AttentionScratchBytes(th*tw, th*tw, 1), nil
}

// PlanEncodeFor is the device memory, beyond the biases and gains, of encoding an H×W image (in
// one piece when tiling is nil, else in its tiles: vae.Model.EncodeTiled) with a VAE of geometry
// cfg, from the config alone: engine/vae's dry run plus the mid block's score buffer for one
// tile. Encode's and EncodeTiled's checks and app/memplan's prediction all count with it.
func PlanEncodeFor(cfg *vae.Config, H, W int, tiling *vae.Tiling) (int64, error) {
	var p vae.Plan
	var err error
	s := cfg.Scale()
	th, tw := H/s, W/s
	if tiling == nil {
		p, err = vae.PlanEncodeFor(cfg, H, W)
	} else {
		p, err = vae.PlanEncodeTiledFor(cfg, H, W, *tiling)
		th, tw = min(th, tiling.Tile), min(tw, tiling.Tile)
	}
	if err != nil {
		return 0, err
	}
	return p.PeakActivationBytes + metalops.AttentionScratchBytes(th*tw, th*tw, 1), nil
}

// DecodeWith is Decode when tiling is nil, else DecodeTiled (vae.Model.DecodeWith on the device).
func (v *VAE) DecodeWith(ctx context.Context, zn *vae.Latents, tiling *vae.Tiling) (*vae.Image, error) {
	if tiling == nil {
		return v.Decode(ctx, zn)
	}
	return v.DecodeTiled(ctx, zn, *tiling)
}

// EncodeWith is Encode when tiling is nil, else EncodeTiled (vae.Model.EncodeWith on the device).
func (v *VAE) EncodeWith(ctx context.Context, img *vae.Image, tiling *vae.Tiling) (mode, normalized *vae.Latents, err error) {
	if tiling == nil {
		return v.Encode(ctx, img)
	}
	return v.EncodeTiled(ctx, img, *tiling)
}

// Decode is vae.Model.Decode on the device (one piece).
func (v *VAE) Decode(ctx context.Context, zn *vae.Latents) (*vae.Image, error) {
	if zn == nil {
		return nil, errors.New("vaemetal: Decode of nil latents")
	}
	need, err := v.PlanDecode(zn.H, zn.W, nil)
	if err != nil {
		return nil, err
	}
	var img *vae.Image
	err = v.Run(fmt.Sprintf("decoding %d×%d latents in one piece", zn.H, zn.W), need, func() (err error) {
		img, err = v.m.Decode(ctx, zn)
		return err
	})
	return img, err
}

// DecodeTiled is vae.Model.DecodeTiled on the device: the same tiles, blended the same way.
func (v *VAE) DecodeTiled(ctx context.Context, zn *vae.Latents, t vae.Tiling) (*vae.Image, error) {
	if zn == nil {
		return nil, errors.New("vaemetal: DecodeTiled of nil latents")
	}
	need, err := v.PlanDecode(zn.H, zn.W, &t)
	if err != nil {
		return nil, err
	}
	var img *vae.Image
	err = v.Run(fmt.Sprintf("decoding %d×%d latents in %d² tiles", zn.H, zn.W, t.Tile), need, func() (err error) {
		img, err = v.m.DecodeTiled(ctx, zn, t)
		return err
	})
	return img, err
}

// Encode is vae.Model.Encode on the device.
func (v *VAE) Encode(ctx context.Context, img *vae.Image) (mode, normalized *vae.Latents, err error) {
	if img == nil {
		return nil, nil, errors.New("vaemetal: Encode of a nil image")
	}
	need, err := v.PlanEncode(img.H, img.W, nil)
	if err != nil {
		return nil, nil, err
	}
	err = v.Run(fmt.Sprintf("encoding a %d×%d image", img.W, img.H), need, func() (err error) {
		mode, normalized, err = v.m.Encode(ctx, img)
		return err
	})
	return mode, normalized, err
}

// EncodeTiled is vae.Model.EncodeTiled on the device: the same tiles, blended the same way.
func (v *VAE) EncodeTiled(ctx context.Context, img *vae.Image, t vae.Tiling) (mode, normalized *vae.Latents, err error) {
	if img == nil {
		return nil, nil, errors.New("vaemetal: EncodeTiled of a nil image")
	}
	need, err := v.PlanEncode(img.H, img.W, &t)
	if err != nil {
		return nil, nil, err
	}
	err = v.Run(fmt.Sprintf("encoding a %d×%d image in %d² tiles", img.W, img.H, t.Tile), need, func() (err error) {
		mode, normalized, err = v.m.EncodeTiled(ctx, img, t)
		return err
	})
	return mode, normalized, err
}
