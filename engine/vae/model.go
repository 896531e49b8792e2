package vae

import (
	"context"
	"fmt"

	"easel/engine/ml"
	"easel/engine/quant"
)

// ConfigTensor is the name of the config blob in a model file: the diffusers vae/config.json bytes.
const ConfigTensor = "vae.config_json"

// Model is a loaded autoencoder bound to one backend. Its methods may not be called concurrently.
type Model struct {
	cfg *Config
	b   ml.Backend
	w   *weights
	// trace sees every stage's output (tests only).
	trace func(stage string, t ml.Tensor)
}

// Load reads the config from the vae.config_json tensor and binds every vae.* weight (ml.Binder,
// weights.go). Conv weights stay where the source keeps them (any codec the backend decodes,
// usually f16 or f32); biases and norm gains are uploaded as float32 rows.
func Load(b ml.Backend, src quant.Source) (*Model, error) {
	t, err := src.Tensor(ConfigTensor)
	if err != nil {
		return nil, fmt.Errorf("vae: reading %s: %v", ConfigTensor, err)
	}
	if t == nil || len(t.Data) == 0 {
		return nil, fmt.Errorf("vae: the model file has no %s: it was not made for Qwen-Image-2.1; convert the snapshot again", ConfigTensor)
	}
	cfg, err := ParseConfig(t.Data)
	if err != nil {
		return nil, err
	}
	return LoadWithConfig(b, src, cfg)
}

// LoadWithConfig binds the vae.* weights of src for the given geometry.
func LoadWithConfig(b ml.Backend, src quant.Source, cfg *Config) (*Model, error) {
	if b == nil || src == nil || cfg == nil {
		return nil, fmt.Errorf("vae: load needs a backend, a weight source and a config (got %v, %v, %v)", b, src, cfg)
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("vae config: %v", err)
	}
	w, err := bindWeights(b, src, cfg)
	if err != nil {
		return nil, err
	}
	return &Model{cfg: cfg, b: b, w: w}, nil
}

// Config is the model's geometry.
func (m *Model) Config() *Config { return m.cfg }

// DecodeWith is Decode when tiling is nil (one piece, exact), else DecodeTiled: how the pipeline
// calls a VAE, with the tiling it chose for the image.
func (m *Model) DecodeWith(ctx context.Context, zn *Latents, tiling *Tiling) (*Image, error) {
	if tiling == nil {
		return m.Decode(ctx, zn)
	}
	return m.DecodeTiled(ctx, zn, *tiling)
}

// EncodeWith is Encode when tiling is nil (one piece, exact), else EncodeTiled.
func (m *Model) EncodeWith(ctx context.Context, img *Image, tiling *Tiling) (mode, normalized *Latents, err error) {
	if tiling == nil {
		return m.Encode(ctx, img)
	}
	return m.EncodeTiled(ctx, img, *tiling)
}

// Decode turns normalized latents [z_dim, h, w] (what the denoiser produces) into an image
// [out_channels, 16h, 16w] clamped to [-1, 1], in one piece. For large grids use DecodeTiled.
func (m *Model) Decode(ctx context.Context, zn *Latents) (*Image, error) {
	z, err := m.Denormalize(zn)
	if err != nil {
		return nil, err
	}
	img, err := m.decodeRaw(ctx, z)
	if err != nil {
		return nil, err
	}
	for i, v := range img.Pix {
		img.Pix[i] = min(max(v, -1), 1)
	}
	return img, nil
}

// decodeRaw runs post_quant_conv and the decoder on de-normalized latents, without the clamp, in a
// scope of its own (one per tile of a tiled decode): every activation is freed when it returns.
func (m *Model) decodeRaw(ctx context.Context, z *Latents) (*Image, error) {
	e := ml.NewScope(ml.WithContext(m.b, ctx))
	defer e.Release()
	zt := e.Own(e.Upload(z.Data, z.C, z.H, z.W))
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("vae decode: %v", err)
	}
	out, err := m.runStages(e, zt, m.w.decodeStages())
	if err != nil {
		return nil, fmt.Errorf("vae decode of a %d×%d latent grid: %w", z.H, z.W, err)
	}
	e.Free(zt)
	c, h, w := chw(out)
	pix := e.Download(out)
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("vae decode: %v", err)
	}
	return &Image{C: c, H: h, W: w, Pix: pix}, nil
}

// Encode turns an image [in_channels, H, W] in [-1, 1] (H and W multiples of 16) into the mode
// of the latent distribution (the mean half of quant_conv's output) and its normalization
// (z − mean)/std, which is what the denoiser takes as condition latents, in one piece. For large
// images use EncodeTiled.
func (m *Model) Encode(ctx context.Context, img *Image) (mode, normalized *Latents, err error) {
	if err := m.checkImage(img); err != nil {
		return nil, nil, err
	}
	if mode, err = m.encodeRaw(ctx, img); err != nil {
		return nil, nil, err
	}
	normalized, err = m.Normalize(mode)
	if err != nil {
		return nil, nil, err
	}
	return mode, normalized, nil
}

// checkImage refuses an image the encoder cannot take.
func (m *Model) checkImage(img *Image) error {
	s := m.cfg.Scale()
	if img == nil || img.C != m.cfg.InChannels || img.H <= 0 || img.W <= 0 || img.H%s != 0 || img.W%s != 0 || len(img.Pix) != img.C*img.H*img.W {
		if img == nil {
			return fmt.Errorf("vae encode: the image is nil")
		}
		return fmt.Errorf("vae encode: the image is %d×%d×%d with %d values; it needs %d channels and sides that are multiples of %d (resize it first)",
			img.C, img.H, img.W, len(img.Pix), m.cfg.InChannels, s)
	}
	return nil
}

// encodeRaw runs the encoder and quant_conv on a checked image and returns the mode (the mean
// half of the moments), before the normalization, in a scope of its own (one per tile of a tiled
// encode): every activation is freed when it returns.
func (m *Model) encodeRaw(ctx context.Context, img *Image) (*Latents, error) {
	e := ml.NewScope(ml.WithContext(m.b, ctx))
	defer e.Release()
	x := e.Own(e.Upload(img.Pix, img.C, img.H, img.W))
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("vae encode: %v", err)
	}
	moments, err := m.runStages(e, x, m.w.encodeStages())
	if err != nil {
		return nil, fmt.Errorf("vae encode of a %d×%d image: %w", img.H, img.W, err)
	}
	e.Free(x)
	_, h, w := chw(moments)
	data := e.Download(e.Slice(moments, 0, m.cfg.ZDim, h, w))
	if err := e.Err(); err != nil {
		return nil, fmt.Errorf("vae encode: %v", err)
	}
	return &Latents{C: m.cfg.ZDim, H: h, W: w, Data: data}, nil
}
