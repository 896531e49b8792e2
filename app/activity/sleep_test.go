package activity

import (
	"sync/atomic"
	"testing"
)

// TestWillSleepRunsTheSleepers: WillSleep (what the Mac's observer calls) runs every registered
// function and returns after they have; a removed one no longer runs (removing twice is fine).
func TestWillSleepRunsTheSleepers(t *testing.T) {
	var a, b atomic.Int32
	removeA := OnWillSleep(func() { a.Add(1) })
	removeB := OnWillSleep(func() { b.Add(1) })
	if Sleepers() != 2 {
		t.Fatalf("%d sleepers, want 2", Sleepers())
	}
	WillSleep()
	if a.Load() != 1 || b.Load() != 1 {
		t.Fatalf("after WillSleep: a ran %d, b %d times; want 1 each", a.Load(), b.Load())
	}
	removeA()
	removeA()
	WillSleep()
	if a.Load() != 1 || b.Load() != 2 {
		t.Errorf("after removing a: a ran %d, b %d times; want 1 and 2", a.Load(), b.Load())
	}
	removeB()
	if Sleepers() != 0 {
		t.Errorf("%d sleepers left", Sleepers())
	}
}
