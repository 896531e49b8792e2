package cpu

import (
	"runtime"
	"sync"
)

// parallelRows runs fn over [0, n) split into one contiguous range per core (at least minChunk
// items each), and waits. Row ops use it; it is never called while a BLAS call is running.
func parallelRows(n, minChunk int, fn func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if minChunk < 1 {
		minChunk = 1
	}
	if w := (n + minChunk - 1) / minChunk; w < workers {
		workers = w
	}
	if workers <= 1 {
		if n > 0 {
			fn(0, n)
		}
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
