package vaemetal

import (
	"context"
	"testing"

	"easel/engine/vae"
	"easel/internal/golden"
	"easel/kernels/device"
)

// Bounds of the emulated device against the CPU backend on the same f16 weights: relative error
// ‖metal − cpu‖ / ‖cpu‖ over the whole output. Every convolution and attention GEMM rounds its
// operands to half (unit roundoff 2⁻¹¹ ≈ 4.9e-4) and accumulates in float; the errors of the
// ~40 convolutions on the decoder's path add up partly at random, and the norms rescale them.
// Measured on the two reference cases (docs/METAL.md, "The VAE on Metal"): decode 4.7e-4, tiled
// decode 4.2e-4, encoded mode 9.0e-4 (normalized latents 9.4e-5), i.e. about one to two half
// roundoffs; the bound is three times the largest, room for other cases and compilers, and still
// an order of magnitude below what a wrong tap, channel or seam would give.
const parityBound = 3e-3

func checkParity(t *testing.T, what string, got, want []float32, bound float64) {
	t.Helper()
	if rel := golden.RelErr(got, want); rel == 0 {
		t.Errorf("%s: identical to the CPU result: did the device run at all?", what)
	}
	rel := golden.RelErr(got, want)
	t.Logf("%s: relative error %.3e, max abs %.3e", what, rel, golden.MaxAbsErr(got, want))
	if !(rel <= bound) {
		t.Errorf("%s: relative error %.3e exceeds %.0e", what, rel, bound)
	}
}

// tilingFor splits the case's grid into at least two tiles along its longer side.
func tilingFor(zn *vae.Latents) vae.Tiling {
	return vae.Tiling{Tile: max(2, max(zn.H, zn.W)-1), Overlap: 1}
}

func TestEmuVAEDecodeMatchesCPU(t *testing.T) {
	cpuModel, gpu, _ := models(t, device.Limits{})
	ctx := context.Background()
	for _, c := range vaeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want, err := cpuModel.Decode(ctx, c.zn)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpu.Decode(ctx, c.zn)
			if err != nil {
				t.Fatal(err)
			}
			if got.C != want.C || got.H != want.H || got.W != want.W {
				t.Fatalf("decoded %d×%d×%d, the CPU %d×%d×%d", got.C, got.H, got.W, want.C, want.H, want.W)
			}
			checkParity(t, "decode", got.Pix, want.Pix, parityBound)
		})
	}
}

func TestEmuVAEDecodeTiledMatchesCPU(t *testing.T) {
	cpuModel, gpu, _ := models(t, device.Limits{})
	ctx := context.Background()
	for _, c := range vaeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			tiling := tilingFor(c.zn)
			want, err := cpuModel.DecodeTiled(ctx, c.zn, tiling)
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpu.DecodeTiled(ctx, c.zn, tiling)
			if err != nil {
				t.Fatal(err)
			}
			if got.C != want.C || got.H != want.H || got.W != want.W {
				t.Fatalf("decoded %d×%d×%d, the CPU %d×%d×%d", got.C, got.H, got.W, want.C, want.H, want.W)
			}
			checkParity(t, "tiled decode", got.Pix, want.Pix, parityBound)
		})
	}
}

func TestEmuVAEEncodeMatchesCPU(t *testing.T) {
	cpuModel, gpu, _ := models(t, device.Limits{})
	ctx := context.Background()
	for _, c := range vaeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			wantMode, wantNorm, err := cpuModel.Encode(ctx, c.img)
			if err != nil {
				t.Fatal(err)
			}
			mode, norm, err := gpu.Encode(ctx, c.img)
			if err != nil {
				t.Fatal(err)
			}
			if mode.C != wantMode.C || mode.H != wantMode.H || mode.W != wantMode.W {
				t.Fatalf("mode %d×%d×%d, the CPU %d×%d×%d", mode.C, mode.H, mode.W, wantMode.C, wantMode.H, wantMode.W)
			}
			checkParity(t, "encoded mode", mode.Data, wantMode.Data, parityBound)
			checkParity(t, "encoded normalized", norm.Data, wantNorm.Data, parityBound)
		})
	}
}

// encodeTilingFor is tilingFor on an image's latent grid: at least two tiles along its longer side.
func encodeTilingFor(img *vae.Image) vae.Tiling {
	return tilingFor(&vae.Latents{H: img.H / 16, W: img.W / 16})
}

func TestEmuVAEEncodeTiledMatchesCPU(t *testing.T) {
	cpuModel, gpu, _ := models(t, device.Limits{})
	ctx := context.Background()
	for _, c := range vaeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			tiling := encodeTilingFor(c.img)
			wantMode, wantNorm, err := cpuModel.EncodeTiled(ctx, c.img, tiling)
			if err != nil {
				t.Fatal(err)
			}
			mode, norm, err := gpu.EncodeTiled(ctx, c.img, tiling)
			if err != nil {
				t.Fatal(err)
			}
			if mode.C != wantMode.C || mode.H != wantMode.H || mode.W != wantMode.W {
				t.Fatalf("mode %d×%d×%d, the CPU %d×%d×%d", mode.C, mode.H, mode.W, wantMode.C, wantMode.H, wantMode.W)
			}
			checkParity(t, "tiled encoded mode", mode.Data, wantMode.Data, parityBound)
			checkParity(t, "tiled encoded normalized", norm.Data, wantNorm.Data, parityBound)
		})
	}
}
