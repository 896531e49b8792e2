package kernels_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// flashCase is one attention call; segments, when set, describe the block-causal prefix as runs
// of text (causal) or image (bidirectional) rows over the own rows.
type flashCase struct {
	heads          int
	nPre, nOwn     int
	qRow0, nq      int
	segments       []segment
	oscale         float32
	order          emu.FiberOrder
	scoreMagnitude float64
	description    string
}

type segment struct {
	rows  int
	image bool
}

// visibility returns, per own row, how many own keys it sees: a text row itself and everything
// before it, an image row its whole block and everything before it (qi21-spec §6.9).
func visibility(segments []segment) []uint32 {
	var vis []uint32
	start := 0
	for _, s := range segments {
		for r := 0; r < s.rows; r++ {
			if s.image {
				vis = append(vis, uint32(start+s.rows))
			} else {
				vis = append(vis, uint32(start+r+1))
			}
		}
		start += s.rows
	}
	return vis
}

func TestEmuFlashAttention(t *testing.T) {
	cases := []flashCase{
		{description: "step", heads: 2, nPre: 45, nOwn: 70, nq: 70, oscale: 0.5, scoreMagnitude: 1},
		{description: "step-peaky", heads: 1, nPre: 64, nOwn: 8, nq: 8, oscale: 1, scoreMagnitude: 4, order: emu.Shuffled},
		{description: "prefill", heads: 2, nOwn: 100, nq: 100, oscale: 0.25, scoreMagnitude: 1,
			segments: []segment{{10, false}, {50, true}, {10, false}, {30, true}}},
		{description: "prefill-chunk", heads: 1, nOwn: 90, qRow0: 20, nq: 40, oscale: 1, scoreMagnitude: 2, order: emu.Reverse,
			segments: []segment{{25, false}, {40, true}, {25, false}}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/pre%d_own%d_q%d+%d", c.description, c.nPre, c.nOwn, c.qRow0, c.nq), func(t *testing.T) {
			testFlash(t, c, kernels.FlashVariants[0])
		})
	}
}

// testFlash runs variant v of the attention on c, checks it against a float64 reference within
// the bound the kernel's arithmetic allows, and returns the output buffer's bytes.
func testFlash(t *testing.T, c flashCase, v kernels.FlashVariant) []byte {
	const hd = 128
	d := newDevice(t, c.order)
	p := pipeline(t, d, v.File, v.Function)
	if err := kernels.FitsPipeline(v.Name, v.Threads, v.ThreadgroupBytes, p.MaxTotalThreadsPerThreadgroup()); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(c.nOwn), uint64(c.nPre*7+c.nq)))
	h := c.heads * hd
	ldp, ldo := 3*h, h+8
	rows := max(c.nOwn, c.qRow0+c.nq)

	// q carries the kernel's log2(e)/sqrt(128) pre-scale times the wanted score magnitude.
	qScale := c.scoreMagnitude * math.Log2E / math.Sqrt(hd)
	panelBuf := newBuffer(t, d, 2*rows*ldp)
	panel := make([]float64, rows*ldp)
	for i := range panel {
		v := rng.NormFloat64()
		if i%ldp < h {
			v *= qScale
		}
		device.View[uint16](panelBuf)[i] = float64ToHalf(v)
		panel[i] = halfToFloat64(device.View[uint16](panelBuf)[i])
	}
	pkvBuf := newBuffer(t, d, max(2, 2*c.nPre*2*h))
	pkv := make([]float64, c.nPre*2*h)
	for i := range pkv {
		device.View[uint16](pkvBuf)[i] = float64ToHalf(rng.NormFloat64())
		pkv[i] = halfToFloat64(device.View[uint16](pkvBuf)[i])
	}
	vis := visibility(c.segments)
	visBuf := newBuffer(t, d, 4*max(1, len(vis)))
	copy(device.View[uint32](visBuf), vis)
	outBuf := newBuffer(t, d, 2*rows*ldo)
	for i := range outBuf.Bytes() {
		outBuf.Bytes()[i] = 0xff
	}
	prm := kernels.FlashParams{QRow0: uint32(c.qRow0), NQ: uint32(c.nq), NPre: uint32(c.nPre), NOwn: uint32(c.nOwn),
		Ldp: uint32(ldp), H: uint32(h), Ldo: uint32(ldo), OScale: c.oscale}
	if len(vis) > 0 {
		prm.UseVis = 1
	}
	if err := v.Fits(h, ldp, 0, 0); err != nil {
		t.Fatal(err)
	}
	groups, threads := v.Grid(c.nq, c.heads)
	run(t, d, p, groups, threads,
		binding{index: 0, buf: panelBuf}, binding{index: 1, buf: outBuf}, binding{index: 2, buf: pkvBuf},
		binding{index: 3, buf: visBuf}, binding{index: 4, bytes: device.StructBytes(&prm)})

	key := func(j, head int) (k, v []float64) {
		if j < c.nPre {
			return pkv[j*2*h+head*hd:][:hd], pkv[j*2*h+h+head*hd:][:hd]
		}
		r := j - c.nPre
		return panel[r*ldp+h+head*hd:][:hd], panel[r*ldp+2*h+head*hd:][:hd]
	}
	out := device.View[uint16](outBuf)
	worst := 0.0
	for head := 0; head < c.heads; head++ {
		for i := 0; i < c.nq; i++ {
			row := c.qRow0 + i
			q := panel[row*ldp+head*hd:][:hd]
			limit := c.nPre + c.nOwn
			if len(vis) > 0 {
				limit = c.nPre + int(vis[row])
			}
			// Reference softmax in base 2, in float64, and the bound on the kernel's error: scores
			// are float sums of 128 exact products (error δ ≤ 130·2^-24·Σ|q·k|), which moves each
			// weight by at most a factor 2^(±2δ); weights are rounded to half for P·V (2^-11) after a
			// float exp2 (2^-21); the running sums and rescalings add (keys + blocks + 4)·2^-23; the
			// output is rounded to half. A is the softmax-weighted mean of |v|.
			s := make([]float64, limit)
			smax, delta := math.Inf(-1), 0.0
			for j := 0; j < limit; j++ {
				k, _ := key(j, head)
				var mag float64
				for e := 0; e < hd; e++ {
					s[j] += q[e] * k[e]
					mag += math.Abs(q[e] * k[e])
				}
				smax = max(smax, s[j])
				delta = max(delta, 130*math.Ldexp(1, -24)*mag)
			}
			var l float64
			num := make([]float64, hd)
			absNum := make([]float64, hd)
			for j := 0; j < limit; j++ {
				w := math.Exp2(s[j] - smax)
				l += w
				_, v := key(j, head)
				for e := 0; e < hd; e++ {
					num[e] += w * v[e]
					absNum[e] += w * math.Abs(v[e])
				}
			}
			blocks := (limit + v.KeyBlock - 1) / v.KeyBlock
			rel := 4*delta*math.Ln2 + math.Ldexp(1, -11) + 4*math.Ldexp(1, -21) + float64(limit+blocks+4)*math.Ldexp(1, -23)
			for e := 0; e < hd; e++ {
				ref := float64(c.oscale) * num[e] / l
				bound := 1.01 * (float64(c.oscale)*absNum[e]/l*rel + math.Abs(ref)*math.Ldexp(1, -11))
				got := halfToFloat64(out[row*ldo+head*hd+e])
				if err := math.Abs(got - ref); !(err <= bound) {
					t.Fatalf("head %d query %d (row %d, %d keys) channel %d = %v, reference %v: error %.3g over the bound %.3g",
						head, i, row, limit, e, got, ref, err, bound)
				}
				worst = max(worst, math.Abs(got-ref)/bound)
			}
		}
	}
	// Rows outside the queries and the padding columns stay untouched.
	for row := 0; row < rows; row++ {
		for e := 0; e < ldo; e++ {
			inQueries := row >= c.qRow0 && row < c.qRow0+c.nq && e < h
			if !inQueries && out[row*ldo+e] != 0xffff {
				t.Fatalf("out[%d,%d] was written but is not a query output", row, e)
			}
		}
	}
	t.Logf("largest error / bound: %.3g", worst)
	return bytes.Clone(outBuf.Bytes())
}

// flashCases are the attention geometries every variant is checked on: the baseline's, plus a
// prefix that ends inside a 64-key block and a step with no prefix.
func flashCases() []flashCase {
	return []flashCase{
		{description: "step", heads: 2, nPre: 45, nOwn: 70, nq: 70, oscale: 0.5, scoreMagnitude: 1},
		{description: "step-peaky", heads: 1, nPre: 64, nOwn: 8, nq: 8, oscale: 1, scoreMagnitude: 4, order: emu.Shuffled},
		{description: "prefill", heads: 2, nOwn: 100, nq: 100, oscale: 0.25, scoreMagnitude: 1,
			segments: []segment{{10, false}, {50, true}, {10, false}, {30, true}}},
		{description: "prefill-chunk", heads: 1, nOwn: 90, qRow0: 20, nq: 40, oscale: 1, scoreMagnitude: 2, order: emu.Reverse,
			segments: []segment{{25, false}, {40, true}, {25, false}}},
		{description: "step-long-prefix", heads: 1, nPre: 150, nOwn: 20, nq: 20, oscale: 1, scoreMagnitude: 2, order: emu.Shuffled},
		{description: "step-no-prefix", heads: 1, nOwn: 33, nq: 33, oscale: 1, scoreMagnitude: 1},
	}
}

// TestEmuFlashVariants checks every attention variant against the float64 reference on each
// geometry, and the ones that keep the baseline's blocks (KeyBlock 32) against the baseline's
// output bit for bit.
func TestEmuFlashVariants(t *testing.T) {
	for _, c := range flashCases() {
		t.Run(fmt.Sprintf("%s/pre%d_own%d_q%d+%d", c.description, c.nPre, c.nOwn, c.qRow0, c.nq), func(t *testing.T) {
			base := testFlash(t, c, kernels.FlashVariants[0])
			for _, v := range kernels.FlashVariants[1:] {
				got := testFlash(t, c, v)
				if v.KeyBlock == kernels.FlashVariants[0].KeyBlock {
					if i := firstDiff(got, base); i >= 0 {
						t.Errorf("flash variant %s differs from the baseline first at byte %d (%#x, baseline %#x)", v.Name, i, got[i], base[i])
					}
				}
			}
		})
	}
}
