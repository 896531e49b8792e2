package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestFlushWritesTheNewestState: a state offered while a write is in flight is skipped; a flush
// (the Mac about to sleep) then has the next state written although a write is in flight again,
// and the file holds that newest step. With nothing behind, Flush returns at once; with the
// newest state skipped and no state offered after it, Flush gives up after its timeout.
func TestFlushWritesTheNewestState(t *testing.T) {
	w := NewWriter(filepath.Join(t.TempDir(), "run.ckpt"))
	if !w.Flush(time.Hour) {
		t.Error("a flush before any state was offered has nothing to wait for")
	}
	release := make(chan struct{})
	writing := make(chan struct{}, 3)
	old := createTemp
	t.Cleanup(func() { createTemp = old })
	createTemp = func(dir, pattern string) (tempFile, error) {
		writing <- struct{}{}
		<-release
		return os.CreateTemp(dir, pattern)
	}
	step := func(n int) func() *Checkpoint {
		return func() *Checkpoint { c := sample(); c.Step = n; return c }
	}
	w.Offer(step(1))
	<-writing
	if w.Offer(step(2)) {
		t.Fatal("step 2 was written while step 1's write was in flight")
	}
	wait := w.flush.ask() // what Flush waits on
	offered := make(chan bool)
	go func() { offered <- w.Offer(step(3)) }() // waits for step 1's write, then writes step 3
	close(release)
	if !<-offered {
		t.Fatal("step 3, offered after the flush was asked, was skipped")
	}
	<-wait
	c, err := Read(w.Path())
	if err != nil || c.Step != 3 {
		t.Fatalf("after the flush the file holds %v, %v; want step 3", c, err)
	}
	if !w.Flush(time.Hour) {
		t.Error("a flush with the newest state written reports it is not")
	}

	// The newest state is skipped and no other comes: Flush gives up at its timeout.
	hold := make(chan struct{})
	createTemp = func(dir, pattern string) (tempFile, error) { <-hold; return os.CreateTemp(dir, pattern) }
	w.Offer(step(4))
	w.Offer(step(5))
	if w.Flush(time.Millisecond) {
		t.Error("a flush whose newest state was skipped, with no state after it, reports success")
	}
	close(hold)
	w.Wait()
}
