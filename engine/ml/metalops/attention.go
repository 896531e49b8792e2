package metalops

import (
	"fmt"

	"easel/engine/ml"
	"easel/kernels"
	"easel/kernels/device"
)

// scoreBytes caps the attention's score buffer: queries are taken in chunks of rows so that
// heads × rows × keys float32 scores stay below it. A variable so tests can force several chunks.
var scoreBytes = 64 << 20

// scoreRows is how many query rows one attention chunk takes over keys keys and heads heads: a
// multiple of 64, at least 64, at most n rounded up.
func scoreRows(n, keys, heads int) int {
	r := scoreBytes / 4 / max(keys*heads, 1) / 64 * 64
	return max(64, min(r, (n+63)/64*64))
}

// AttentionScratchBytes is the score buffer Attention allocates for n queries over keys keys with
// heads heads.
func AttentionScratchBytes(n, keys, heads int) int64 {
	return 4 * int64(heads) * int64(min(scoreRows(n, keys, heads), n)) * int64(keys)
}

// Attention is softmax(q·Kᵀ·scale + visibility)·V per head with K = [prefixK; k] and V = [prefixV;
// v], key/value head h / (Heads/KVHeads) for query head h: for each chunk of query rows, every
// head's scores (one batched GEMM), their masked softmax, then their weighted sum (another).
func (b *Backend) Attention(dst, q, k, v, prefixK, prefixV ml.Tensor, spec ml.AttnSpec) error {
	const op = "Attention"
	H, KVH, hd := spec.Heads, spec.KVHeads, spec.HeadDim
	if H <= 0 || KVH <= 0 || hd <= 0 || H%KVH != 0 {
		return fmt.Errorf("metalops %s: %d heads over %d key/value heads of %d: heads must be a positive multiple of key/value heads", op, H, KVH, hd)
	}
	if (prefixK == nil) != (prefixV == nil) {
		return fmt.Errorf("metalops %s: prefix keys and values must both be given or both be nil", op)
	}
	ts := map[string]ml.Tensor{"destination": dst, "queries": q, "keys": k, "values": v}
	own := map[string]*tensor{}
	for name, x := range ts {
		t, err := b.own(op+" "+name, x)
		if err != nil {
			return err
		}
		own[name] = t
	}
	qw, kw := H*hd, KVH*hd
	qt, dt, kt, vt := own["queries"], own["destination"], own["keys"], own["values"]
	if lastDim(qt) != qw || lastDim(dt) != qw || qt.n() != dt.n() {
		return fmt.Errorf("metalops %s: queries %v and destination %v must both be [n, %d]", op, qt.shape, dt.shape, qw)
	}
	if lastDim(kt) != kw || lastDim(vt) != kw || kt.n() != vt.n() {
		return fmt.Errorf("metalops %s: keys %v and values %v must both be [m, %d]", op, kt.shape, vt.shape, kw)
	}
	n, keys := qt.n()/qw, kt.n()/kw
	if prefixK != nil {
		pk, err := b.own(op+" prefix keys", prefixK)
		if err != nil {
			return err
		}
		pv, err := b.own(op+" prefix values", prefixV)
		if err != nil {
			return err
		}
		if lastDim(pk) != kw || lastDim(pv) != kw || pk.n() != pv.n() {
			return fmt.Errorf("metalops %s: prefix keys %v and values %v must both be [p, %d]", op, pk.shape, pv.shape, kw)
		}
		// One contiguous [prefix; own] for keys and for values.
		var err2 error
		if kt, err2 = b.concatRows(pk, kt); err2 != nil {
			return err2
		}
		defer b.Free(kt)
		if vt, err2 = b.concatRows(pv, vt); err2 != nil {
			return err2
		}
		defer b.Free(vt)
		keys = kt.n() / kw
	}
	var vis *storage
	if spec.Visible != nil {
		if len(spec.Visible) != n {
			return fmt.Errorf("metalops %s: %d visibility entries for %d queries", op, len(spec.Visible), n)
		}
		st, _, err := b.alloc(n, true)
		if err != nil {
			return err
		}
		copy(device.View[int32](st.buf), spec.Visible)
		vis = st
		defer b.Free(&tensor{st: st, shape: []int{n}})
	}
	rows := min(scoreRows(n, keys, H), n)
	s, err := b.New(H, rows, keys)
	if err != nil {
		return err
	}
	defer b.Free(s)
	st := s.(*tensor)
	for r0 := 0; r0 < n; r0 += rows {
		m := min(rows, n-r0)
		scores := kernels.BatchParams{M: uint32(m), N: uint32(keys), K: uint32(hd), Lda: uint32(qw), Ldb: uint32(kw), Ldc: uint32(keys),
			TransB: 1, Alpha: spec.Scale, AZ: uint32(hd), BZ: uint32(hd), CZ: uint32(rows * keys), Group: uint32(H / KVH)}
		g, t := kernels.BatchGrid(m, keys, H)
		b.flops = 2 * float64(m) * float64(keys) * float64(hd) * float64(H)
		if err := dispatch(b, b.pipes.mm, ml.ClassAttn, &scores, g, t, func(enc device.Encoder) int {
			enc.SetBuffer(qt.st.buf, 4*(qt.off+r0*qw), 0)
			kt.bind(enc, 1)
			st.bind(enc, 2)
			return 3
		}); err != nil {
			return err
		}
		soft := kernels.SoftParams{N: uint32(keys), Ld: uint32(keys), M: uint32(rows), Row0: uint32(r0), Valid: uint32(m)}
		if vis != nil {
			soft.UseVis = 1
		}
		// Rows of the last chunk past m are left alone (Valid).
		g, t = kernels.RowGrid(H * rows)
		if err := dispatch(b, b.pipes.softmax, ml.ClassAttn, &soft, g, t, func(enc device.Encoder) int {
			st.bind(enc, 0)
			if vis != nil {
				enc.SetBuffer(vis.buf, 0, 1)
			} else {
				st.bind(enc, 1)
			}
			return 2
		}); err != nil {
			return err
		}
		sum := kernels.BatchParams{M: uint32(m), N: uint32(hd), K: uint32(keys), Lda: uint32(keys), Ldb: uint32(kw), Ldc: uint32(qw),
			Alpha: 1, AZ: uint32(rows * keys), BZ: uint32(hd), CZ: uint32(hd), Group: uint32(H / KVH)}
		g, t = kernels.BatchGrid(m, hd, H)
		b.flops = 2 * float64(m) * float64(keys) * float64(hd) * float64(H)
		if err := dispatch(b, b.pipes.mm, ml.ClassAttn, &sum, g, t, func(enc device.Encoder) int {
			st.bind(enc, 0)
			vt.bind(enc, 1)
			enc.SetBuffer(dt.st.buf, 4*(dt.off+r0*qw), 2)
			return 3
		}); err != nil {
			return err
		}
	}
	return nil
}

func lastDim(t *tensor) int { return t.shape[len(t.shape)-1] }

// concatRows returns a new tensor holding a's rows then c's (same row width).
func (b *Backend) concatRows(a, c *tensor) (*tensor, error) {
	w := lastDim(a)
	x, err := b.New(a.n()/w+c.n()/w, w)
	if err != nil {
		return nil, err
	}
	t := x.(*tensor)
	top := &tensor{st: t.st, off: t.off, shape: []int{a.n()}, view: true}
	bottom := &tensor{st: t.st, off: t.off + a.n(), shape: []int{c.n()}, view: true}
	if err := b.elt(kernels.EltCopy, a, nil, top, 0); err != nil {
		b.Free(t)
		return nil, err
	}
	if err := b.elt(kernels.EltCopy, c, nil, bottom, 0); err != nil {
		b.Free(t)
		return nil, err
	}
	return t, nil
}
