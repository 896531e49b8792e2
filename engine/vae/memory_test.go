package vae

import (
	"context"
	"fmt"
	"testing"

	"easel/engine/ml"
	"easel/engine/quant"
)

// shapeBackend runs a network without arithmetic: tensors have shapes and sizes but no data, ops
// only check what they can, and the backend records the peak of live tensor bytes. It lets the
// real decoder geometry (1152-wide stages) be measured on a machine that cannot afford to run it.
// Ops the VAE does not use are left to the nil embedded interface.
type shapeBackend struct {
	ml.Backend
	live, peak int64
	convFlops  float64 // 2·multiply-adds of every convolution
}

type shapeTensor struct {
	shape []int
	bytes int64 // 0 for views
}

func (t *shapeTensor) Shape() []int { return t.shape }

func elems(shape []int) int64 {
	n := int64(1)
	for _, d := range shape {
		n *= int64(d)
	}
	return n
}

func (b *shapeBackend) New(shape ...int) (ml.Tensor, error) {
	t := &shapeTensor{shape: append([]int(nil), shape...), bytes: 4 * elems(shape)}
	b.live += t.bytes
	b.peak = max(b.peak, b.live)
	return t, nil
}

func (b *shapeBackend) Upload(data []float32, shape ...int) (ml.Tensor, error) {
	if int64(len(data)) != elems(shape) {
		return nil, fmt.Errorf("upload of %d values as %v", len(data), shape)
	}
	return b.New(shape...)
}

func (b *shapeBackend) Download(t ml.Tensor) ([]float32, error) {
	return make([]float32, elems(t.Shape())), nil
}

func (b *shapeBackend) Slice(t ml.Tensor, offset int, shape ...int) (ml.Tensor, error) {
	if int64(offset)+elems(shape) > elems(t.Shape()) {
		return nil, fmt.Errorf("slice [%d, +%v) of %v", offset, shape, t.Shape())
	}
	return &shapeTensor{shape: append([]int(nil), shape...)}, nil
}

func (b *shapeBackend) Free(t ml.Tensor) {
	if st, ok := t.(*shapeTensor); ok {
		b.live -= st.bytes
		st.bytes = 0
	}
}

func (b *shapeBackend) Conv2D(dst, x ml.Tensor, w *quant.Tensor, bias ml.Tensor, spec ml.ConvSpec) error {
	if x.Shape()[0] != w.Shape[1] || dst.Shape()[0] != w.Shape[0] {
		return fmt.Errorf("conv %q %v from %v into %v", w.Name, w.Shape, x.Shape(), dst.Shape())
	}
	b.convFlops += 2 * float64(elems(w.Shape)) * float64(dst.Shape()[1]*dst.Shape()[2])
	return nil
}
func (b *shapeBackend) UpsampleNearest(dst, x ml.Tensor, factor int) error               { return nil }
func (b *shapeBackend) RMSNorm(dst, x, w ml.Tensor, eps float32, zeroCentred bool) error { return nil }
func (b *shapeBackend) Transpose(dst, x ml.Tensor) error                                 { return nil }
func (b *shapeBackend) SiLU(dst, x ml.Tensor) error                                      { return nil }
func (b *shapeBackend) Add(dst, a, c ml.Tensor) error                                    { return nil }
func (b *shapeBackend) Mul(dst, a, c ml.Tensor) error                                    { return nil }
func (b *shapeBackend) Attention(dst, q, k, v, pk, pv ml.Tensor, spec ml.AttnSpec) error {
	return nil
}

// shapeNormBackend adds the ChannelNormer fast path (no transpose scratch).
type shapeNormBackend struct{ *shapeBackend }

func (b shapeNormBackend) ChannelRMSNorm(dst, x, gamma ml.Tensor, eps float32) error { return nil }

// zeroSource serves every vae.* name with the shape the config calls for and zero payloads (the
// loader dequantizes only biases and gains). Conv weights are f16, as in the default profile.
type zeroSource struct {
	cfg    *Config
	shapes map[string][]int
	zeros  []byte
}

func (s *zeroSource) Tensor(name string) (*quant.Tensor, error) {
	shape := s.shapes[name]
	d := quant.F32
	if len(shape) >= 2 {
		d = quant.F16
	}
	size, _ := quant.PayloadSize(d, shape)
	if int64(len(s.zeros)) < size {
		s.zeros = make([]byte, size)
	}
	return &quant.Tensor{Name: name, DType: d, Shape: shape, Data: s.zeros[:size]}, nil
}

// shapesFor lists every vae.* tensor of a geometry with its diffusers shape (spec Appendix A).
func shapesFor(cfg *Config) map[string][]int {
	shapes := map[string][]int{}
	conv := func(name string, in, out, k int) {
		shapes[namePrefix+name+".weight"] = []int{out, in, k, k}
		shapes[namePrefix+name+".bias"] = []int{out}
	}
	res := func(name string, in, out int) {
		shapes[namePrefix+name+".norm1.gamma"] = []int{in, 1, 1, 1}
		conv(name+".conv1", in, out, 3)
		shapes[namePrefix+name+".norm2.gamma"] = []int{out, 1, 1, 1}
		conv(name+".conv2", out, out, 3)
		if in != out {
			conv(name+".conv_shortcut", in, out, 1)
		}
	}
	mid := func(name string, c int) {
		res(name+".resnets.0", c, c)
		res(name+".resnets.1", c, c)
		shapes[namePrefix+name+".attentions.0.norm.gamma"] = []int{c, 1, 1}
		conv(name+".attentions.0.to_qkv", c, 3*c, 1)
		conv(name+".attentions.0.proj", c, c, 1)
	}
	d := cfg.DecoderDims()
	conv("post_quant_conv", cfg.ZDim, cfg.ZDim, 1)
	conv("decoder.conv_in", cfg.ZDim, d[0], 3)
	mid("decoder.mid_block", d[0])
	n := len(cfg.DimMult)
	for i := 0; i < n; i++ {
		for r := 0; r <= cfg.NumResBlocks; r++ {
			in := d[i+1]
			if r == 0 {
				in = d[i]
			}
			res(fmt.Sprintf("decoder.up_blocks.%d.resnets.%d", i, r), in, d[i+1])
		}
		if i < n-1 {
			conv(fmt.Sprintf("decoder.up_blocks.%d.upsampler.resample.1", i), d[i+1], d[i+1], 3)
		}
	}
	shapes[namePrefix+"decoder.norm_out.gamma"] = []int{d[n], 1, 1, 1}
	conv("decoder.conv_out", d[n], cfg.OutChannels, 3)
	e := cfg.EncoderDims()
	conv("encoder.conv_in", cfg.InChannels, e[0], 3)
	for i := 0; i < n; i++ {
		for r := 0; r < cfg.NumResBlocks; r++ {
			in := e[i+1]
			if r == 0 {
				in = e[i]
			}
			res(fmt.Sprintf("encoder.down_blocks.%d.resnets.%d", i, r), in, e[i+1])
		}
		if i < n-1 {
			conv(fmt.Sprintf("encoder.down_blocks.%d.downsampler.resample.1", i), e[i+1], e[i+1], 3)
		}
	}
	mid("encoder.mid_block", e[n])
	shapes[namePrefix+"encoder.norm_out.gamma"] = []int{e[n], 1, 1, 1}
	conv("encoder.conv_out", e[n], 2*cfg.ZDim, 3)
	conv("quant_conv", 2*cfg.ZDim, 2*cfg.ZDim, 1)
	return shapes
}

// decodePeak is the peak of live backend tensor bytes (weights' uploaded biases included) while
// decoding an h×w grid with the geometry of cfg, tiled or not.
func decodePeak(t *testing.T, cfg *Config, withNormer bool, h, w int, tiling *Tiling) (peak, weightsUploaded int64, convFlops float64) {
	t.Helper()
	sb := &shapeBackend{}
	var b ml.Backend = sb
	if withNormer {
		b = shapeNormBackend{sb}
	}
	m, err := LoadWithConfig(b, &zeroSource{cfg: cfg, shapes: shapesFor(cfg)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	weightsUploaded = sb.live
	zn := &Latents{C: cfg.ZDim, H: h, W: w, Data: make([]float32, cfg.ZDim*h*w)}
	if tiling == nil {
		_, err = m.Decode(context.Background(), zn)
	} else {
		_, err = m.DecodeTiled(context.Background(), zn, *tiling)
	}
	if err != nil {
		t.Fatal(err)
	}
	if sb.live != weightsUploaded {
		t.Errorf("%d bytes of activations were never freed", sb.live-weightsUploaded)
	}
	return sb.peak, weightsUploaded, sb.convFlops
}

// TestDecodeMemoryIsBoundedByTheTile runs the published decoder geometry (dims
// [1152, 1152, 1152, 576, 288, 144]) without arithmetic and records the peak of live activation
// bytes: a tiled 2048² decode must need no more than one tile's decode, whatever the image size.
func TestDecodeMemoryIsBoundedByTheTile(t *testing.T) {
	const MB = 1 << 20
	cfg := publishedConfig(t)
	for _, normer := range []bool{true, false} {
		oneTile, weights, _ := decodePeak(t, cfg, normer, DefaultTiling.Tile, DefaultTiling.Tile, nil)
		tiled, _, flops := decodePeak(t, cfg, normer, 128, 128, &DefaultTiling)
		t.Logf("ChannelNormer %v: biases/gains %.1f MB; activations at peak: one %d² tile %.0f MB, tiled 128² grid (2048²) %.0f MB (%.1f TFLOP of convolutions)",
			normer, float64(weights)/MB, DefaultTiling.Tile, float64(oneTile-weights)/MB, float64(tiled-weights)/MB, flops/1e12)
		if tiled != oneTile {
			t.Errorf("ChannelNormer %v: tiled 2048² decode peaks at %d bytes, one tile at %d", normer, tiled, oneTile)
		}
	}
	for _, side := range []int{16, 32, 64, 128} {
		peak, weights, flops := decodePeak(t, cfg, true, side, side, nil)
		t.Logf("untiled %d² latents (%d² pixels): activations at peak %.0f MB, %.2f TFLOP of convolutions", side, 16*side, float64(peak-weights)/MB, flops/1e12)
	}
	peak, weights, flops := decodePeak(t, cfg, true, 64, 64, &DefaultTiling)
	t.Logf("tiled 64² latents (1024² pixels): activations at peak %.0f MB, %.2f TFLOP of convolutions", float64(peak-weights)/MB, flops/1e12)
	// The encoder runs untiled on ~1 MP condition images (spec §3.1).
	sb := &shapeBackend{}
	m, err := LoadWithConfig(shapeNormBackend{sb}, &zeroSource{cfg: cfg, shapes: shapesFor(cfg)}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	loaded := sb.live
	img := &Image{C: 4, H: 1024, W: 1024, Pix: make([]float32, 4*1024*1024)}
	if _, _, err := m.Encode(context.Background(), img); err != nil {
		t.Fatal(err)
	}
	t.Logf("encode 1024² (untiled): activations at peak %.0f MB, %.2f TFLOP of convolutions", float64(sb.peak-loaded)/MB, sb.convFlops/1e12)
	// The tiny model's figure, to set beside its measured RSS (BenchmarkDecodeTiled2048Tiny).
	tiny, _ := loadTiny(t)
	peak, weights, _ = decodePeak(t, tiny.Config(), true, 128, 128, &DefaultTiling)
	t.Logf("tiny model (decoder dims %v), tiled 2048²: activations at peak %.1f MB", tiny.Config().DecoderDims(), float64(peak-weights)/MB)
}
