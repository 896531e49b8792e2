package cpu

// goSgemm is the pure-Go GEMM for machines without cblas (build tag noblas, or no cgo): the same
// contract as sgemm, parallel over rows of C; with transB, four rows of A share each row of B.
func goSgemm(transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	parallelRows(m, 4, func(lo, hi int) {
		acc := make([]float32, 4*n)
		i := lo
		if transB {
			for ; i+4 <= hi; i += 4 {
				a0, a1, a2, a3 := a[i*lda:i*lda+k], a[(i+1)*lda:(i+1)*lda+k], a[(i+2)*lda:(i+2)*lda+k], a[(i+3)*lda:(i+3)*lda+k]
				for j := 0; j < n; j++ {
					acc[j], acc[n+j], acc[2*n+j], acc[3*n+j] = dot4(a0, a1, a2, a3, b[j*ldb:j*ldb+k])
				}
				for r := 0; r < 4; r++ {
					store(c[(i+r)*ldc:(i+r)*ldc+n], acc[r*n:(r+1)*n], alpha, beta)
				}
			}
		}
		acc = acc[:n]
		for ; i < hi; i++ {
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
			store(c[i*ldc:i*ldc+n], acc, alpha, beta)
		}
	})
}

// store is c = alpha·acc + beta·c (c not read when beta is 0).
func store(c, acc []float32, alpha, beta float32) {
	acc = acc[:len(c)]
	if beta == 0 {
		for j := range c {
			c[j] = alpha * acc[j]
		}
		return
	}
	for j := range c {
		c[j] = alpha*acc[j] + beta*c[j]
	}
}

// dot4 is the dot products of four rows with y.
func dot4(x0, x1, x2, x3, y []float32) (s0, s1, s2, s3 float32) {
	n := len(y)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	for i, v := range y {
		s0 += x0[i] * v
		s1 += x1[i] * v
		s2 += x2[i] * v
		s3 += x3[i] * v
	}
	return
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
