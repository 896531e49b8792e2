//go:build cgo && linux

package cpu

/*
#cgo CFLAGS: -O3 -fopenmp-simd
#include <stdint.h>
#include <string.h>

// exp_neg is exp32 (exp.go) for x <= 0 in C, branch-free so that the loops calling it vectorize:
// Cephes' expf with a Cody-Waite reduction by ln 2.
static inline float exp_neg(float x) {
	x = x < -87.3f ? -87.3f : x;
	int32_t i = (int32_t)(x * 1.44269504088896341f - 0.5f);
	float fx = (float)i;
	float r = x - fx * 0.693359375f;
	r = r - fx * -2.12194440e-4f;
	float y = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
	            4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
	y = y * r * r + r + 1.0f;
	union { int32_t i; float f; } u;
	u.i = (i + 127) << 23;
	return y * u.f;
}

// easel_softmax_rows is softmaxRangeGo (attention.go) over rows [lo, hi). The omp simd pragmas
// (no OpenMP runtime: -fopenmp-simd) let the compiler vectorize the maximum and the sums, which it
// may reassociate within blocks of 128 keys; the blocks are added in double.
static void easel_softmax_rows(float *scores, float *inv, int lo, int hi, int m, const int32_t *vis, int q0) {
	for (int i = lo; i < hi; i++) {
		float *row = scores + (size_t)i * (size_t)m;
		int limit = vis ? vis[q0 + i] : m;
		float M = -3.4028235e38f;
#pragma omp simd reduction(max : M)
		for (int j = 0; j < limit; j++) M = row[j] > M ? row[j] : M;
		double sum = 0;
		for (int j0 = 0; j0 < limit; j0 += 128) {
			int j1 = j0 + 128 < limit ? j0 + 128 : limit;
			float s = 0;
#pragma omp simd reduction(+ : s)
			for (int j = j0; j < j1; j++) {
				float e = exp_neg(row[j] - M);
				row[j] = e;
				s += e;
			}
			sum += (double)s;
		}
		inv[i] = (float)(1.0 / sum);
		if (limit < m) memset(row + limit, 0, (size_t)(m - limit) * sizeof(float));
	}
}
*/
import "C"

import "unsafe"

// softmaxRange runs softmaxRows' work on rows [lo, hi) in C.
func softmaxRange(scores, invSum []float32, lo, hi, m int, visible []int32, q0 int) {
	if lo >= hi {
		return
	}
	var vis *C.int32_t
	if visible != nil {
		vis = (*C.int32_t)(unsafe.Pointer(&visible[0]))
	}
	C.easel_softmax_rows((*C.float)(unsafe.Pointer(&scores[0])), (*C.float)(unsafe.Pointer(&invSum[0])),
		C.int(lo), C.int(hi), C.int(m), vis, C.int(q0))
}
