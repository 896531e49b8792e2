package upscale

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// SyntheticState is a network of geometry cfg with random weights drawn from seed, in the
// canonical names Load binds: for benchmarks of full-size networks no file of which is published
// under terms a repository can carry. Each convolution's weights are uniform with a variance of
// 0.1/fan-in, so activations stay in range through every block.
func SyntheticState(cfg *Config, seed uint64) (State, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := State{}
	conv := func(name string, in, out int) {
		bound := float32(math.Sqrt(3 * 0.1 / float64(in*9)))
		w := weight{shape: []int{out, in, 3, 3}, data: make([]float32, out*in*9)}
		for i := range w.data {
			w.data[i] = (2*rng.Float32() - 1) * bound
		}
		s[name+".weight"] = w
		s[name+".bias"] = weight{shape: []int{out}, data: make([]float32, out)}
	}
	switch cfg.Arch {
	case RRDBNet:
		nf, gc := cfg.Features, cfg.Growth
		conv("conv_first", 3*cfg.Unshuffle*cfg.Unshuffle, nf)
		for b := 0; b < cfg.Blocks; b++ {
			for r := 1; r <= 3; r++ {
				for j := 1; j <= 5; j++ {
					out := gc
					if j == 5 {
						out = nf
					}
					conv(fmt.Sprintf("body.%d.rdb%d.conv%d", b, r, j), nf+(j-1)*gc, out)
				}
			}
		}
		conv("conv_body", nf, nf)
		for u := 1; u <= cfg.Ups; u++ {
			conv(fmt.Sprintf("conv_up%d", u), nf, nf)
		}
		conv("conv_hr", nf, nf)
		conv("conv_last", nf, 3)
		return s, checkRRDB(cfg, s)
	case SRVGGNetCompact:
		nf := cfg.Features
		last := 2*cfg.Convs + 2
		for i := 0; i <= last; i += 2 {
			in, out := nf, nf
			if i == 0 {
				in = 3
			}
			if i == last {
				out = 3 * cfg.Scale * cfg.Scale
			}
			conv(fmt.Sprintf("body.%d", i), in, out)
			if i < last {
				a := weight{shape: []int{nf}, data: make([]float32, nf)}
				for k := range a.data {
					a.data[k] = 0.25
				}
				s[fmt.Sprintf("body.%d.weight", i+1)] = a
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("upscale: no synthetic network of architecture %q", cfg.Arch)
}

// FullSizeRRDBNet is the geometry of RealESRGAN_x4plus, 4x-UltraSharp and NMKD Superscale:
// 64 features, 23 blocks, growth 32, ×4.
func FullSizeRRDBNet() *Config {
	return &Config{Arch: RRDBNet, Layout: "basicsr", Scale: 4, Features: 64, Growth: 32, Blocks: 23, Unshuffle: 1, Ups: 2}
}
