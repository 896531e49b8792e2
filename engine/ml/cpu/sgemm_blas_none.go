//go:build noblas || !cgo || !(linux || darwin)

package cpu

// blasName names the GEMM this build uses.
const blasName = "go"

// setBLASThreads does nothing: the Go GEMM spreads its rows over every core itself.
func setBLASThreads(int) {}

func blasSgemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	goSgemm(transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}
