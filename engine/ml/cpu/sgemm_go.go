package cpu

// goSgemm is the pure-Go GEMM for machines without cblas (build tag noblas, or no cgo): the same
// contract as sgemm, parallel over rows of C, with 4-wide register blocking over k.
func goSgemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	parallelRows(m, 4, func(lo, hi int) {
		acc := make([]float32, n)
		for i := lo; i < hi; i++ {
			ar := a[i*lda : i*lda+k]
			if transB {
				for j := 0; j < n; j++ {
					acc[j] = dot(ar, b[j*ldb:j*ldb+k])
				}
			} else {
				clear(acc)
				for p, av := range ar {
					if av == 0 {
						continue
					}
					axpy(acc, b[p*ldb:p*ldb+n], av)
				}
			}
			cr := c[i*ldc : i*ldc+n]
			if beta == 0 {
				for j := range cr {
					cr[j] = alpha * acc[j]
				}
			} else {
				for j := range cr {
					cr[j] = alpha*acc[j] + beta*cr[j]
				}
			}
		}
	})
}

// dot is Σ x[i]·y[i] with four independent accumulators.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy is y += a·x.
func axpy(y, x []float32, a float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}
