package vae

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"easel/engine/ml"
	"easel/engine/ml/cpu"
)

// channelNormByRows is the channel norm composed from other ops: [C, H·W] → pixel rows [H·W, C]
// → RMSNorm → back.
func channelNormByRows(e *ml.Scope, x, gamma ml.Tensor) ml.Tensor {
	c, h, w := chw(x)
	dst := e.New(c, h, w)
	rows := e.Temp(h*w, c)
	e.Do(e.B.Transpose(rows, flat(e, x)))
	e.Do(e.B.RMSNorm(rows, rows, gamma, normEps(c), false))
	e.Do(e.B.Transpose(flat(e, dst), rows))
	return dst
}

// The channel norm (ml.Backend.ChannelRMSNorm on the CPU backend) and the same norm composed from
// Transpose + RMSNorm give the same bits, and both match F.normalize(x, dim=0)·√C·gamma.
func TestChannelNormPathsAgreeWithTheDefinition(t *testing.T) {
	b := cpu.New()
	const C, H, W = 24, 5, 7
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, C*H*W)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	for c := 0; c < C; c++ { // one all-zero pixel: F.normalize gives 0 there
		x[c*H*W+H*W-1] = 0
	}
	gamma := make([]float32, C)
	for i := range gamma {
		gamma[i] = float32(r.Float64() + 0.5)
	}
	xt, _ := b.Upload(x, C, H, W)
	gt, _ := b.Upload(gamma, C)
	var results [][]float32
	byOp := func(e *ml.Scope, x, gamma ml.Tensor) ml.Tensor { return rmsNorm{Gamma: gamma}.apply(e, x) }
	for _, norm := range []func(*ml.Scope, ml.Tensor, ml.Tensor) ml.Tensor{byOp, channelNormByRows} {
		e := ml.NewScope(b)
		y := norm(e, xt, gt)
		got := e.Download(y)
		if err := e.Err(); err != nil {
			t.Fatal(err)
		}
		e.Release()
		results = append(results, got)
	}
	if !slices.Equal(results[0], results[1]) {
		t.Error("ChannelRMSNorm and the composed path differ")
	}
	for p := 0; p < H*W; p++ {
		var ss float64
		for c := 0; c < C; c++ {
			ss += float64(x[c*H*W+p]) * float64(x[c*H*W+p])
		}
		norm := max(math.Sqrt(ss), 1e-12)
		for c := 0; c < C; c++ {
			want := float64(x[c*H*W+p]) / norm * math.Sqrt(C) * float64(gamma[c])
			if got := float64(results[0][c*H*W+p]); math.Abs(got-want) > 1e-6*(1+math.Abs(want)) {
				t.Fatalf("pixel %d channel %d: %v, want %v", p, c, got, want)
			}
		}
	}
}
