package qi21metal

import (
	"easel/engine/ml/metal"
	"encoding/binary"
	"fmt"

	"easel/engine/ml"
	"easel/engine/qi21"
	"easel/engine/quant"
	"easel/kernels/device"
)

// gemmWeight is one block projection as the GEMM kernels read it: the payload in the arena and,
// for q8, the row scale and column field as float32 in the aux buffer.
type gemmWeight struct {
	name       string
	data       []byte
	rows, cols int
	q8         bool
	// q4tp: byte offsets of the params and code planes inside the payload, bytes per code row
	paramsOff, codesOff, codeStride int
	// q8: byte offsets of rs[rows] and col[cols] in the aux buffer
	rsOff, colOff int
	// where the payload is bound: its arena chunk and byte offset
	buf device.Buffer
	off int
}

// The seven projections of a block, in blockWeights.w order.
const (
	wQ = iota
	wK
	wV
	wO
	wGate
	wUp
	wDown
)

// blockWeights is one block's projections and the byte offsets of its q/k norm weights in aux.
type blockWeights struct {
	w            [7]gemmWeight
	normQ, normK int
}

// auxBuilder collects the small float32 arrays the kernels read (q8 side planes, norm weights,
// img_in and proj_out as float) into one buffer, each 16-byte aligned.
type auxBuilder struct {
	f []float32
}

// add appends v and returns its byte offset.
func (a *auxBuilder) add(v []float32) int {
	for len(a.f)%4 != 0 {
		a.f = append(a.f, 0)
	}
	off := 4 * len(a.f)
	a.f = append(a.f, v...)
	return off
}

func halfs(b []byte) []float32 {
	out := make([]float32, len(b)/2)
	for i := range out {
		out[i] = quant.HalfToFloat32(binary.LittleEndian.Uint16(b[2*i:]))
	}
	return out
}

// describeWeight checks a projection's codec and shape and records how the kernels read it.
func describeWeight(name string, t *quant.Tensor, rows, cols int, aux *auxBuilder) (gemmWeight, error) {
	if t == nil {
		return gemmWeight{}, metal.Decline("the model has no %s", name)
	}
	if t.Rows() != rows || t.Cols() != cols {
		return gemmWeight{}, fmt.Errorf("metal: %s has shape %v, the config calls for [%d %d]", name, t.Shape, rows, cols)
	}
	g := gemmWeight{name: name, data: t.Data, rows: rows, cols: cols}
	q := rows * cols
	switch {
	case t.DType == quant.Q4TP:
		gpr := cols / 32
		g.paramsOff = rows * gpr * 16
		g.codesOff = g.paramsOff + 4*rows
		g.codeStride = (gpr*5 + 7) / 8
		if len(t.Data) < g.codesOff+rows*g.codeStride {
			return gemmWeight{}, fmt.Errorf("metal: %s: q4tp payload of %d bytes is too short for [%d %d]", name, len(t.Data), rows, cols)
		}
	case t.DType == quant.Q8_2F && len(t.Data) == q+2*rows+2*cols:
		g.q8 = true
		g.rsOff = aux.add(halfs(t.Data[q : q+2*rows]))
		g.colOff = aux.add(halfs(t.Data[q+2*rows:]))
	case t.DType == quant.Q8Row && len(t.Data) == q+2*rows:
		g.q8 = true
		g.rsOff = aux.add(halfs(t.Data[q:]))
		ones := make([]float32, cols)
		for i := range ones {
			ones[i] = 1
		}
		g.colOff = aux.add(ones)
	default:
		return gemmWeight{}, metal.Decline("%s is %v; the Metal kernels read q4tp, q8_2f and q8_row (convert the model with the q8 or cortiq profile)", name, t.DType)
	}
	return g, nil
}

// describeBlocks reads every block's projections and norm weights.
func describeBlocks(m *qi21.Model, aux *auxBuilder) ([]blockWeights, error) {
	c := m.Config
	D, F := c.Hidden(), c.MLPHidden()
	host := m.Backend()
	blocks := make([]blockWeights, len(m.Blocks))
	for l := range m.Blocks {
		b := &m.Blocks[l]
		prefix := fmt.Sprintf("dit.transformer_blocks.%d.", l)
		for i, p := range []struct {
			name       string
			t          *quant.Tensor
			rows, cols int
		}{
			{"attn.to_q.weight", b.ToQ, D, D},
			{"attn.to_k.weight", b.ToK, D, D},
			{"attn.to_v.weight", b.ToV, D, D},
			{"attn.to_out.0.weight", b.ToOut, D, D},
			{"img_mlp.gate_layer.weight", b.Gate, F, D},
			{"img_mlp.proj.weight", b.Up, F, D},
			{"img_mlp.out.weight", b.Down, D, F},
		} {
			g, err := describeWeight(prefix+p.name, p.t, p.rows, p.cols, aux)
			if err != nil {
				return nil, err
			}
			blocks[l].w[i] = g
		}
		for _, n := range []struct {
			t   ml.Tensor
			dst *int
		}{{b.NormQ, &blocks[l].normQ}, {b.NormK, &blocks[l].normK}} {
			v, err := host.Download(n.t)
			if err != nil {
				return nil, fmt.Errorf("metal: reading block %d's q/k norm weights from the host backend: %w", l, err)
			}
			*n.dst = aux.add(v)
		}
	}
	return blocks, nil
}

// denseWithBias dequantizes a [rows, cols] weight to float and appends a zero bias of rows (the
// layout qi_embed and qi_final read: W then b; the DiT's img_in and proj_out have no bias).
func denseWithBias(name string, t *quant.Tensor) ([]float32, error) {
	if t == nil {
		return nil, metal.Decline("the model has no %s", name)
	}
	v, err := quant.Dequantize(t)
	if err != nil {
		return nil, fmt.Errorf("metal: decoding %s: %w", name, err)
	}
	return append(v, make([]float32, t.Rows())...), nil
}
