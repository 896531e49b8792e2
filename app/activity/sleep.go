package activity

import (
	"context"
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

// power is whether the Mac is between a sleep notice and the wake that follows it.
var power struct {
	mu     sync.Mutex
	asleep bool
	woke   chan struct{} // closed by DidWake; nil while awake
}

// OnWillSleep runs f when the Mac is about to sleep (the system power notice, observed from the
// first call on: sleep_darwin.go; elsewhere only WillSleep runs it): a running job's checkpoint
// writer writes its newest state then (checkpoint.Writer.Flush), a studio worker hands its job
// back. remove unregisters f (more than once is fine).
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

// WillSleep marks the Mac asleep (Awake blocks until DidWake), then runs every function
// registered with OnWillSleep, at once, and returns when all have returned (each bounds its own
// wait by FlushTimeout). The Mac's power observer calls it before it lets the Mac sleep.
func WillSleep() {
	power.mu.Lock()
	if !power.asleep {
		power.asleep, power.woke = true, make(chan struct{})
	}
	power.mu.Unlock()
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

// DidWake marks the Mac awake again: every Awake waiting returns. The Mac's power observer calls
// it when the system has powered on after a sleep.
func DidWake() {
	power.mu.Lock()
	defer power.mu.Unlock()
	if power.asleep {
		close(power.woke)
		power.asleep, power.woke = false, nil
	}
}

// Asleep reports whether the Mac is between a sleep notice and its wake.
func Asleep() bool {
	power.mu.Lock()
	defer power.mu.Unlock()
	return power.asleep
}

// Awake returns at once while the Mac is awake; after a sleep notice it returns when the Mac
// wakes, or with ctx's error when ctx ends first (a studio worker takes no job in between).
func Awake(ctx context.Context) error {
	power.mu.Lock()
	woke := power.woke
	power.mu.Unlock()
	if woke == nil {
		return ctx.Err()
	}
	select {
	case <-woke:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errNoPowerNotices is why the Mac's sleep notices will not come (set by observeSleep).
var errNoPowerNotices error

// SleepNotices is nil when this process hears the Mac's sleep notices (off macOS, where nothing
// sleeps under a job, it is always nil); on a Mac whose power notices could not be registered
// it says so, for a notice.
func SleepNotices() error {
	sleepers.observe.Do(observeSleep)
	return errNoPowerNotices
}

// Sleepers is the number of functions registered with OnWillSleep (the running jobs).
func Sleepers() int {
	sleepers.mu.Lock()
	defer sleepers.mu.Unlock()
	return len(sleepers.byID)
}
