package qwen3vl

import (
	"fmt"

	"easel/engine/ml"
)

// kvCache holds every layer's rotated keys and values of the tokens seen so far, [capacity,
// kvHeads·headDim] per layer, so each new token runs the layers over one row and attends to the
// cached rows instead of running the whole sequence again.
type kvCache struct {
	b        ml.Backend
	k, v     []ml.Tensor
	n        int // rows filled
	capacity int
}

// newKVCache allocates a cache of capacity rows for the model's layers.
func newKVCache(b ml.Backend, c TextConfig, capacity int) (*kvCache, error) {
	kc := &kvCache{b: b, capacity: capacity}
	kvw := c.KVHeads * c.HeadDim
	for range c.Layers {
		k, err := b.New(capacity, kvw)
		if err != nil {
			kc.free()
			return nil, fmt.Errorf("key/value cache of %d tokens: %w", capacity, err)
		}
		kc.k = append(kc.k, k)
		v, err := b.New(capacity, kvw)
		if err != nil {
			kc.free()
			return nil, fmt.Errorf("key/value cache of %d tokens: %w", capacity, err)
		}
		kc.v = append(kc.v, v)
	}
	return kc, nil
}

// KVCacheBytes is the size of the cache for tokens rows: keys and values of every layer, float32.
func KVCacheBytes(c TextConfig, tokens int) int64 {
	return 2 * 4 * int64(c.Layers) * int64(c.KVHeads*c.HeadDim) * int64(tokens)
}

func (kc *kvCache) free() {
	for _, t := range append(kc.k, kc.v...) {
		kc.b.Free(t)
	}
	kc.k, kc.v = nil, nil
}

// layerView is one layer's cache as a pass sees it: the rows it writes (newK, newV) and every
// row so far including them (allK, allV).
type layerView struct {
	newK, newV, allK, allV ml.Tensor
}

// layer is layer l's view for n tokens after start cached ones; nil for a nil cache. Views are
// slices of the cache (no copy).
func (kc *kvCache) layer(e *ml.Scope, l, start, n int) *layerView {
	if kc == nil {
		return nil
	}
	w := kc.k[l].Shape()[1]
	slice := func(t ml.Tensor, from, rows int) ml.Tensor {
		s, err := e.B.Slice(t, from*w, rows, w)
		e.Do(err)
		return s
	}
	return &layerView{
		newK: slice(kc.k[l], start, n), newV: slice(kc.v[l], start, n),
		allK: slice(kc.k[l], 0, start+n), allV: slice(kc.v[l], 0, start+n),
	}
}
