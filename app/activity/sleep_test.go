package activity

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestWillSleepRunsTheSleepers: WillSleep (what the Mac's observer calls) runs every registered
// function and returns after they have; a removed one no longer runs (removing twice is fine).
func TestWillSleepRunsTheSleepers(t *testing.T) {
	t.Cleanup(DidWake)
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

// TestAwakeWaitsForTheWake: after a sleep notice Asleep is true and Awake blocks until DidWake
// (or its context ends); awake, Awake returns at once. A second DidWake is harmless.
func TestAwakeWaitsForTheWake(t *testing.T) {
	t.Cleanup(DidWake)
	if Asleep() || Awake(context.Background()) != nil {
		t.Fatal("awake at the start: Asleep true or Awake failed")
	}
	WillSleep()
	if !Asleep() {
		t.Fatal("after WillSleep Asleep is false")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Awake(ctx); err != context.Canceled {
		t.Errorf("asleep, Awake with an ended context returned %v, want context.Canceled", err)
	}
	woke := make(chan error, 1)
	go func() { woke <- Awake(context.Background()) }()
	select {
	case err := <-woke:
		t.Fatalf("Awake returned %v before the wake", err)
	default:
	}
	DidWake()
	if err := <-woke; err != nil {
		t.Errorf("Awake after the wake returned %v", err)
	}
	if Asleep() {
		t.Error("after DidWake Asleep is true")
	}
	DidWake()
}
