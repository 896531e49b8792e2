package cpu

import (
	"fmt"
	"math"

	"easel/engine/ml"
)

// attnScoreBudget bounds the score scratch (floats): queries are taken in chunks of
// attnScoreBudget / keys rows (at least 64) per head, so each sgemm is as large as it can be.
const attnScoreBudget = 4 << 20

// Attention is softmax(q·[prefixK; k]ᵀ·scale + visibility)·[prefixV; v] per head. Scores and the
// weighted sum are sgemm calls per head and query chunk; the softmax runs over the cores between.
func (b *Backend) Attention(dst, q, k, v, prefixK, prefixV ml.Tensor, spec ml.AttnSpec) error {
	const op = "Attention"
	H, KVH, hd := spec.Heads, spec.KVHeads, spec.HeadDim
	if H <= 0 || KVH <= 0 || hd <= 0 || H%KVH != 0 {
		return fmt.Errorf("cpu.%s: %d heads over %d key/value heads of %d: heads must be a positive multiple of key/value heads", op, H, KVH, hd)
	}
	cq, err := host(op, "queries", q)
	if err != nil {
		return err
	}
	cd, err := host(op, "destination", dst)
	if err != nil {
		return err
	}
	ck, err := host(op, "keys", k)
	if err != nil {
		return err
	}
	cv, err := host(op, "values", v)
	if err != nil {
		return err
	}
	pk, err := optional(op, "prefix keys", prefixK)
	if err != nil {
		return err
	}
	pv, err := optional(op, "prefix values", prefixV)
	if err != nil {
		return err
	}
	if (pk == nil) != (pv == nil) {
		return fmt.Errorf("cpu.%s: prefix keys and prefix values must both be given or both be nil", op)
	}
	qw, kw := H*hd, KVH*hd
	if cq.cols() != qw || cd.cols() != qw || cd.rows() != cq.rows() {
		return fmt.Errorf("cpu.%s: queries %v and destination %v must both be [n, %d]", op, cq.shape, cd.shape, qw)
	}
	if ck.cols() != kw || cv.cols() != kw || ck.rows() != cv.rows() {
		return fmt.Errorf("cpu.%s: keys %v and values %v must both be [m, %d]", op, ck.shape, cv.shape, kw)
	}
	lp := 0
	if pk != nil {
		if pk.cols() != kw || pv.cols() != kw || pk.rows() != pv.rows() {
			return fmt.Errorf("cpu.%s: prefix keys %v and values %v must both be [p, %d]", op, pk.shape, pv.shape, kw)
		}
		lp = pk.rows()
	}
	n, own := cq.rows(), ck.rows()
	m := lp + own
	if spec.Visible != nil {
		if len(spec.Visible) != n {
			return fmt.Errorf("cpu.%s: visibility has %d entries for %d query rows", op, len(spec.Visible), n)
		}
		for i, vis := range spec.Visible {
			if vis < 1 || int(vis) > m {
				return fmt.Errorf("cpu.%s: query row %d may see %d keys; it must see between 1 and %d", op, i, vis, m)
			}
		}
	}
	if n == 0 {
		return nil
	}
	defer b.track(ml.ClassAttn, 4*float64(n)*float64(m)*float64(hd)*float64(H))()
	group := H / KVH
	chunk := min(n, max(64, attnScoreBudget/m))
	workers := tileWorkers(H)
	scores := make([][]float32, workers)
	invSums := make([][]float32, workers)
	for w := range scores {
		scores[w] = make([]float32, chunk*m)
		invSums[w] = make([]float32, chunk)
	}
	forTiles(H, func(w, h int) {
		kvo := (h / group) * hd
		sc := scores[w]
		for q0 := 0; q0 < n; q0 += chunk {
			nq := min(chunk, n-q0)
			qs := cq.data[q0*qw+h*hd:]
			if lp > 0 {
				sgemm(true, nq, lp, hd, spec.Scale, qs, qw, pk.data[kvo:], kw, 0, sc, m)
			}
			if own > 0 {
				sgemm(true, nq, own, hd, spec.Scale, qs, qw, ck.data[kvo:], kw, 0, sc[lp:], m)
			}
			inv := invSums[w][:nq]
			softmaxRows(sc, inv, nq, m, spec.Visible, q0, workers == 1)
			out := cd.data[q0*qw+h*hd:]
			beta := float32(0)
			if lp > 0 {
				sgemm(false, nq, hd, lp, 1, sc, m, pv.data[kvo:], kw, 0, out, qw)
				beta = 1
			}
			if own > 0 {
				sgemm(false, nq, hd, own, 1, sc[lp:], m, cv.data[kvo:], kw, beta, out, qw)
			}
			for i, s := range inv {
				row := out[i*qw : i*qw+hd]
				for j := range row {
					row[j] *= s
				}
			}
		}
	})
	return nil
}

// softmaxRows exponentiates each of the nq score rows (width m) over its visible keys
// (visible[q0+i] of them, or all) after subtracting the row maximum, zeroes the rest, and stores
// 1/Σ in invSum: the caller scales the weighted sum instead of every probability. It runs over
// the cores when parallel. On Linux with cgo the rows go to a vectorized C loop (softmax_cgo.go).
func softmaxRows(scores, invSum []float32, nq, m int, visible []int32, q0 int, parallel bool) {
	run := parallelRows
	if !parallel {
		run = func(n, _ int, fn func(lo, hi int)) { fn(0, n) }
	}
	run(nq, 8, func(lo, hi int) { softmaxRange(scores, invSum, lo, hi, m, visible, q0) })
}

// softmaxRangeGo is softmaxRows' work on rows [lo, hi) in Go.
func softmaxRangeGo(scores, invSum []float32, lo, hi, m int, visible []int32, q0 int) {
	for i := lo; i < hi; i++ {
		row := scores[i*m : (i+1)*m]
		limit := m
		if visible != nil {
			limit = int(visible[q0+i])
		}
		vis := row[:limit]
		mx := float32(math.Inf(-1))
		for _, s := range vis {
			mx = max(mx, s)
		}
		var s0, s1 float64
		j := 0
		for ; j+2 <= len(vis); j += 2 {
			e0, e1 := exp32(vis[j]-mx), exp32(vis[j+1]-mx)
			vis[j], vis[j+1] = e0, e1
			s0 += float64(e0)
			s1 += float64(e1)
		}
		for ; j < len(vis); j++ {
			e := exp32(vis[j] - mx)
			vis[j] = e
			s0 += float64(e)
		}
		invSum[i] = float32(1 / (s0 + s1))
		clear(row[limit:])
	}
}
