//go:build cgo && darwin && !noblas

package cpu

/*
#cgo darwin LDFLAGS: -framework Accelerate
#include <Accelerate/Accelerate.h>
*/
import "C"

import "unsafe"

// blasName names the GEMM this build uses.
const blasName = "accelerate"

// setBLASThreads does nothing: Accelerate schedules its own threads (blasParallel stays true).
func setBLASThreads(int) {}

func blasSgemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	var tb C.enum_CBLAS_TRANSPOSE = C.CblasNoTrans
	if transB {
		tb = C.CblasTrans
	}
	C.cblas_sgemm(C.CblasRowMajor, C.CblasNoTrans, tb, C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int(ldb),
		C.float(beta), (*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}
