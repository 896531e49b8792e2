package mmapfile

import (
	"sync"
	"testing"
)

// BenchmarkFanOut compares one fan-out of two empty workers (as the CPU backend's row and tile
// workers fan out on a 2-core machine) through a Group with the same through a sync.WaitGroup:
// the difference is what catching faults and panics costs per fan-out.
//
//	go test ./engine/mmapfile -run '^$' -bench FanOut -count 5
func BenchmarkFanOut(b *testing.B) {
	const workers = 2
	b.Run("WaitGroup", func(b *testing.B) {
		for b.Loop() {
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {})
			}
			wg.Wait()
		}
	})
	b.Run("Group", func(b *testing.B) {
		for b.Loop() {
			var g Group
			for range workers {
				g.Go(func() {})
			}
			g.Wait()
		}
	})
}
