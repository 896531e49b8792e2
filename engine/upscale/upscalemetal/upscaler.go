package upscalemetal

import (
	"context"
	"errors"
	"fmt"
	"image"

	"easel/engine/ml/metalops"
	"easel/engine/quant"
	"easel/engine/upscale"
	"easel/kernels/device"
)

// Upscaler is an upscale.Model bound to a Metal device. Its methods may not be called concurrently.
type Upscaler struct {
	*metalops.Network
	m *upscale.Model
}

// New binds a detected network (upscale.Detect's config and canonical tensors) to dev. The float32
// weights stay on the host and are converted to half on the device during each call.
func New(dev device.Device, cfg *upscale.Config, s upscale.State) (*Upscaler, error) {
	if dev == nil || cfg == nil {
		return nil, errors.New("upscalemetal: New needs a device and a network")
	}
	net, err := metalops.NewNetwork(dev, "the upscaler")
	if err != nil {
		return nil, err
	}
	u := &Upscaler{Network: net}
	if u.m, err = upscale.Load(net.Backend(), cfg, s); err == nil {
		err = net.Place(nil, func(*quant.Tensor) bool { return false })
	}
	if err != nil {
		net.Close()
		return nil, err
	}
	return u, nil
}

// Model is the network bound to the device backend.
func (u *Upscaler) Model() *upscale.Model { return u.m }

// PlanFor is the device memory, beyond the biases, of upscaling a W×H picture in tiling t with a
// network of geometry cfg: the largest tile's activations (upscale.PlanFor's dry run) and the
// weights converted to half while the call runs.
func PlanFor(cfg *upscale.Config, W, H int, t upscale.Tiling) int64 {
	return upscale.PlanFor(cfg, W, H, t).Activations + 2*cfg.Params()
}

// Picture is upscale.Model.Picture on the device: the same tiles, the same rounding. A
// *metal.Declined error means the CPU should run it.
func (u *Upscaler) Picture(ctx context.Context, img image.Image, opt upscale.Options) (*image.NRGBA, error) {
	if img == nil {
		return nil, errors.New("upscalemetal: no picture")
	}
	b := img.Bounds()
	need := PlanFor(u.m.Config(), b.Dx(), b.Dy(), opt.Tiling)
	var out *image.NRGBA
	what := fmt.Sprintf("upscaling a %d×%d picture", b.Dx(), b.Dy())
	if opt.Tiling.Tile > 0 {
		what += fmt.Sprintf(" in %d² tiles", opt.Tiling.Tile)
	}
	err := u.Run(what, need, func() (err error) {
		out, err = u.m.Picture(ctx, img, opt)
		return err
	})
	return out, err
}

// RunPlanes is upscale.Model.Run on the device (the network's float output, for tests and tools).
func (u *Upscaler) RunPlanes(ctx context.Context, in upscale.Planes, t upscale.Tiling) (upscale.Planes, error) {
	need := PlanFor(u.m.Config(), in.W, in.H, t)
	var out upscale.Planes
	err := u.Run(fmt.Sprintf("upscaling %d×%d planes", in.W, in.H), need, func() (err error) {
		out, err = u.m.Run(ctx, in, t, nil)
		return err
	})
	return out, err
}
