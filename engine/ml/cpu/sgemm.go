package cpu

// blasParallel reports whether one sgemm call already uses every core (Accelerate, the Go GEMM).
// When it is false (OpenBLAS, set to one thread), ops run independent tiles on every core with
// forTiles instead.
var blasParallel = true

// sgemm computes C = alpha·A·op(B) + beta·C in row-major storage, where A is [m, k] (leading
// dimension lda), op(B) is B [k, n] (ldb) or, with transB, Bᵀ for B stored [n, k] (ldb), and C is
// [m, n] (ldc). It is implemented by cblas (sgemm_blas_*.go) or in Go (sgemm_go.go).
func sgemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		for i := 0; i < m; i++ {
			row := c[i*ldc : i*ldc+n]
			for j := range row {
				row[j] *= beta
			}
		}
		return
	}
	blasSgemm(transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
