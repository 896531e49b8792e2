package studio

import (
	"context"
	"time"
)

// every calls f on its own goroutine every period, and at once whenever poke fires (nil: never),
// until ctx ends; the returned channel is closed once it has stopped. It serves the keys kept
// fresh on the hub (a batch's, a worker's status) and the hub's janitor.
func every(ctx context.Context, period time.Duration, poke <-chan struct{}, f func()) (finished <-chan struct{}) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-poke:
			}
			f()
		}
	}()
	return done
}
