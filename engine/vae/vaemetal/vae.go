package vaemetal

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
	"easel/engine/vae"
	"easel/kernels/device"
)

// The device backend has the channel norm's fast path, which PlanDecodeFor's dry run assumes.
var _ vae.ChannelNormer = (*metalops.Backend)(nil)

// VAE is engine/vae's model bound to a Metal device. Its methods may not be called concurrently.
//
// Only the biases and gains stay on the device between calls: the weight arena (no-copy buffers
// over the mapping) is made for each call and released after it, with every activation buffer,
// so the VAE is resident only while it runs and the denoiser's memory is what it leaves.
type VAE struct {
	b          *metalops.Backend
	m          *vae.Model
	arenaPlan  *metal.WeightArenaPlan // nil when no weight lies in the mapping
	arenaBytes int64

	vectors    int64 // the uploaded biases and gains
	maxBuffer  int64
	workingSet int64
	others     func() int64 // device memory other networks hold (the denoiser's), or nil
}

// recordingSource remembers every tensor the model binds, so their payloads can be placed.
type recordingSource struct {
	quant.Source
	seen []*quant.Tensor
}

func (r *recordingSource) Tensor(name string) (*quant.Tensor, error) {
	t, err := r.Source.Tensor(name)
	if err == nil && t != nil && name != vae.ConfigTensor {
		r.seen = append(r.seen, t)
	}
	return t, err
}

// New loads the VAE of src (the model file) onto dev: the f16 weights inside mapping (the file's
// whole mapping, e.g. (*cmf.File).Bytes()) are read in place; others are converted to half on the
// device when first used. A *metal.Declined error means the CPU model should run the VAE.
func New(dev device.Device, src quant.Source, mapping []byte) (*VAE, error) {
	if dev == nil || src == nil {
		return nil, errors.New("vaemetal: New needs a device and a model file")
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
	v := &VAE{b: b}
	v.maxBuffer, v.workingSet = metal.DeviceLimits(dev)
	rec := &recordingSource{Source: src}
	if v.m, err = vae.Load(b, rec); err != nil {
		b.Close()
		return nil, err
	}
	var tensors [][]byte
	var names []string
	for _, t := range rec.seen {
		if t.DType == quant.F16 && inside(mapping, t.Data) {
			tensors = append(tensors, t.Data)
			names = append(names, t.Name)
		}
	}
	if len(tensors) > 0 {
		if v.arenaPlan, err = metal.PlanWeightArena(mapping, tensors, names, v.maxBuffer); err != nil {
			b.Close()
			return nil, err
		}
		for _, c := range v.arenaPlan.Chunks() {
			v.arenaBytes += c
		}
	}
	v.vectors = b.LiveBytes()
	if need := v.vectors + v.arenaBytes; need > v.workingSet {
		b.Close()
		return nil, metal.Decline("the VAE's weights need %s of GPU memory, more than this GPU's recommended working set (%s)", metal.FormatBytes(need), metal.FormatBytes(v.workingSet))
	}
	return v, nil
}

// SetOtherResident tells the VAE how much device memory other networks hold when it runs (the
// Metal denoiser's weights), so its plan counts them against the working set.
func (v *VAE) SetOtherResident(f func() int64) { v.others = f }

// inside reports whether b is a slice of mapping.
func inside(mapping, b []byte) bool {
	if len(mapping) == 0 || len(b) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(mapping)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= base && p+uintptr(len(b)) <= base+uintptr(len(mapping))
}

// Model is the engine/vae model bound to the device backend.
func (v *VAE) Model() *vae.Model { return v.m }

// DeviceName names the device.
func (v *VAE) DeviceName() string { return v.b.Device().Name() }

// Timings is the GPU time per op class in profiling mode (EASEL_METAL_PROF=1), else empty.
func (v *VAE) Timings() *ml.Timings { return v.b.Timings() }

// DeviceTime is the GPU time of every decode and encode so far.
func (v *VAE) DeviceTime() time.Duration { return v.b.DeviceTime() }

// ResidentBytes is the device memory the VAE holds between calls: its biases and gains.
func (v *VAE) ResidentBytes() int64 { return v.vectors }

// WeightBytes is the device memory of the weight arena while a call runs.
func (v *VAE) WeightBytes() int64 { return v.arenaBytes }

// Close frees the device memory (the mapping stays the caller's).
func (v *VAE) Close() { v.b.Close() }

// PlanDecode is the device memory a decode of an h×w latent grid needs beyond ResidentBytes:
// PlanDecodeFor at this model's geometry.
func (v *VAE) PlanDecode(h, w int, tiling *vae.Tiling) (int64, error) {
	return PlanDecodeFor(v.m.Config(), h, w, tiling)
}

// PlanEncode is the device memory an encode of an H×W image needs beyond ResidentBytes:
// PlanEncodeFor at this model's geometry.
func (v *VAE) PlanEncode(H, W int) (int64, error) { return PlanEncodeFor(v.m.Config(), H, W) }

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

// PlanEncodeFor is the device memory, beyond the biases and gains, of encoding an H×W image with
// a VAE of geometry cfg: the dry run's peak plus the mid block's score buffer.
func PlanEncodeFor(cfg *vae.Config, H, W int) (int64, error) {
	p, err := vae.PlanEncodeFor(cfg, H, W)
	if err != nil {
		return 0, err
	}
	s := cfg.Scale()
	return p.PeakActivationBytes + metalops.AttentionScratchBytes((H/s)*(W/s), (H/s)*(W/s), 1), nil
}

// fit declines work whose planned activations do not fit beside the weights and what other
// networks hold.
func (v *VAE) fit(what string, need int64) error {
	var others int64
	if v.others != nil {
		others = v.others()
	}
	weights := v.vectors + v.arenaBytes
	if total := weights + need + others; total > v.workingSet {
		held := ""
		if others > 0 {
			held = ", " + metal.FormatBytes(others) + " held by the denoiser"
		}
		return metal.Decline("%s needs %s of GPU memory (%s of weights, %s of activations%s), more than this GPU's recommended working set (%s)",
			what, metal.FormatBytes(total), metal.FormatBytes(weights), metal.FormatBytes(need), held, metal.FormatBytes(v.workingSet))
	}
	return nil
}

// run makes the weight arena, runs one call with the activation budget the plan allowed, then
// frees the activation buffers, the converted weights and the arena. A decline that happens on
// the way (a buffer past the largest one) is returned as the *metal.Declined it is.
func (v *VAE) run(need int64, call func() error) error {
	if v.arenaPlan != nil {
		arena, err := v.arenaPlan.Build(v.b.Device())
		if err != nil {
			return err
		}
		v.b.SetArena(arena)
		defer func() {
			v.b.SetArena(nil)
			arena.Release()
		}()
	}
	v.b.SetBudget(v.vectors + need)
	v.b.TakeDecline()
	err := call()
	if serr := v.b.Release(); serr != nil && err == nil {
		err = serr
	}
	if d := v.b.TakeDecline(); err != nil && d != nil {
		return d // the op's error wraps it as text
	}
	return err
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
	if err := v.fit(fmt.Sprintf("decoding %d×%d latents in one piece", zn.H, zn.W), need); err != nil {
		return nil, err
	}
	var img *vae.Image
	err = v.run(need, func() (err error) {
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
	if err := v.fit(fmt.Sprintf("decoding %d×%d latents in %d² tiles", zn.H, zn.W, t.Tile), need); err != nil {
		return nil, err
	}
	var img *vae.Image
	err = v.run(need, func() (err error) {
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
	need, err := v.PlanEncode(img.H, img.W)
	if err != nil {
		return nil, nil, err
	}
	if err := v.fit(fmt.Sprintf("encoding a %d×%d image", img.W, img.H), need); err != nil {
		return nil, nil, err
	}
	err = v.run(need, func() (err error) {
		mode, normalized, err = v.m.Encode(ctx, img)
		return err
	})
	return mode, normalized, err
}
