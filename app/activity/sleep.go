package activity

import (
	"sync"
	"time"
)

// FlushTimeout is the longest a sleeper waits for its checkpoint before the Mac sleeps.
const FlushTimeout = 2 * time.Second

var sleepers struct {
	mu      sync.Mutex
	next    int
	byID    map[int]func()
	observe sync.Once
}

// OnWillSleep runs f when the Mac is about to sleep (NSWorkspaceWillSleepNotification, observed
// from the first call on; elsewhere only WillSleep runs it): a running job's checkpoint writer
// writes its newest state then (checkpoint.Writer.Flush). remove unregisters f (more than once is
// fine).
func OnWillSleep(f func()) (remove func()) {
	sleepers.observe.Do(observeSleep)
	sleepers.mu.Lock()
	defer sleepers.mu.Unlock()
	if sleepers.byID == nil {
		sleepers.byID = map[int]func(){}
	}
	sleepers.next++
	id := sleepers.next
	sleepers.byID[id] = f
	return func() {
		sleepers.mu.Lock()
		delete(sleepers.byID, id)
		sleepers.mu.Unlock()
	}
}

// WillSleep runs every function registered with OnWillSleep, at once, and returns when all have
// returned (each bounds its own wait by FlushTimeout). The Mac's observer calls it.
func WillSleep() {
	sleepers.mu.Lock()
	fs := make([]func(), 0, len(sleepers.byID))
	for _, f := range sleepers.byID {
		fs = append(fs, f)
	}
	sleepers.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	wg.Wait()
}

// Sleepers is the number of functions registered with OnWillSleep (the running jobs).
func Sleepers() int {
	sleepers.mu.Lock()
	defer sleepers.mu.Unlock()
	return len(sleepers.byID)
}
