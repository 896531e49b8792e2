package cpu

import (
	"runtime"
	"sync/atomic"

	"easel/engine/mmapfile"
)

// The worker goroutines here read the model file's mapping (weights dequantized tile by tile):
// they run in a mmapfile.Group, so a fault there (the file went away) or any panic comes back to
// the caller's goroutine, where the pipeline turns it into the job's error.

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
	var g mmapfile.Group
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		g.Go(func() { fn(lo, hi) })
	}
	g.Wait()
}

// forTiles runs fn(worker, i) for every i in [0, count). When one sgemm call uses one core
// (blasParallel false) the tiles are taken by one goroutine per core, worker being its index in
// [0, tileWorkers(count)); otherwise they run in order on the caller with worker 0.
func forTiles(count int, fn func(worker, i int)) {
	workers := tileWorkers(count)
	if workers <= 1 {
		for i := 0; i < count; i++ {
			fn(0, i)
		}
		return
	}
	var next atomic.Int64
	var g mmapfile.Group
	for w := 0; w < workers; w++ {
		g.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				fn(w, i)
			}
		})
	}
	g.Wait()
}

// tileWorkers is how many goroutines forTiles uses for count tiles.
func tileWorkers(count int) int {
	if blasParallel {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), count))
}
