//go:build cgo && linux && !noblas

package cpu

/*
#cgo linux LDFLAGS: -lopenblas
#include <cblas.h>
*/
import "C"

import "unsafe"

// blasName names the GEMM this build uses.
const blasName = "openblas"

// OpenBLAS runs single-threaded; the backend spreads tiles and heads over goroutines itself
// (no spinning BLAS threads between calls, no oversubscription with the Go row ops).
func init() {
	setBLASThreads(1)
	blasParallel = false
}

// setBLASThreads sets how many threads one OpenBLAS call uses.
func setBLASThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

func blasSgemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	var tb C.enum_CBLAS_TRANSPOSE = C.CblasNoTrans
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, tb, C.blasint(m), C.blasint(n), C.blasint(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.blasint(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.blasint(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.blasint(ldc))
}
