//go:build cgo && linux

package cpu

/*
#cgo CFLAGS: -O3 -fopenmp-simd
#include <stdint.h>

// easel_dot_q8_rows is dotQ8Go (gemv.go) vectorized: out[r] = Σ_i q[r·cols+i]·x[i], summed in
// float lanes. On x86-64 an AVX2 + FMA copy is chosen at run time when the processor has them.
#define EASEL_DOT_Q8_BODY                                                        \
	for (int r = 0; r < rows; r++) {                                             \
		const int8_t *row = q + (long)r * cols;                                  \
		float acc = 0;                                                           \
		_Pragma("omp simd reduction(+ : acc)")                                   \
		for (int i = 0; i < cols; i++) acc += (float)row[i] * x[i];              \
		out[r] = acc;                                                            \
	}

static void easel_dot_q8_base(const int8_t *q, const float *x, float *out, int rows, int cols) {
	EASEL_DOT_Q8_BODY
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma")))
static void easel_dot_q8_avx2(const int8_t *q, const float *x, float *out, int rows, int cols) {
	EASEL_DOT_Q8_BODY
}
#endif

static void easel_dot_q8_rows(const int8_t *q, const float *x, float *out, int rows, int cols) {
#if defined(__x86_64__)
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		easel_dot_q8_avx2(q, x, out, rows, cols);
		return;
	}
#endif
	easel_dot_q8_base(q, x, out, rows, cols);
}
*/
import "C"

import "unsafe"

// dotQ8 is out[r] = Σ_i int8(codes[r·len(x)+i]) · x[i] in C. codes is a worker's own copy (never
// the mapping: see gemv.go).
func dotQ8(codes []byte, x []float32, out []float32) {
	if len(out) == 0 || len(x) == 0 {
		return
	}
	C.easel_dot_q8_rows((*C.int8_t)(unsafe.Pointer(&codes[0])), (*C.float)(unsafe.Pointer(&x[0])),
		(*C.float)(unsafe.Pointer(&out[0])), C.int(len(out)), C.int(len(x)))
}
