package mmapfile

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"unsafe"
)

// FaultError is a read of a mapped file that faulted, or a file found changed under its mapping:
// it was truncated, replaced or its drive went away while it was in use.
type FaultError struct {
	Path string
	// Kind is what the file is to the user ("model file"); Remedy what to do about it.
	Kind, Remedy string
	// Size is the file's length when it was mapped; Now its length when the fault was caught,
	// or −1 when it can no longer be read (NowErr says why).
	Size, Now int64
	NowErr    error
	// Err is the runtime's fault (nil when the change was found without a fault).
	Err error
}

func (e *FaultError) Error() string {
	kind, remedy := e.Kind, e.Remedy
	if kind == "" {
		kind = "file"
	}
	if remedy == "" {
		remedy = "reconnect its drive or put the file back, then try again"
	}
	var state string
	switch {
	case e.Now < 0 && errors.Is(e.NowErr, os.ErrNotExist):
		state = "it is no longer there"
	case e.Now < 0:
		state = "it can no longer be read"
	case e.Now == e.Size:
		state = fmt.Sprintf("it is still %s, but part of it could not be read", ByteSize(e.Size))
	default:
		state = fmt.Sprintf("it is now %s of %s", ByteSize(e.Now), ByteSize(e.Size))
	}
	return fmt.Sprintf("the %s %s changed or became unreadable while Easel was using it (%s): %s", kind, e.Path, state, remedy)
}

// Unwrap is the runtime's fault.
func (e *FaultError) Unwrap() error { return e.Err }

// ByteSize writes n bytes for people: 512 B, 28.1 MB, 1.2 GB (powers of 1000, as Finder shows).
func ByteSize(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

// Describe says what the file is and what to do when it goes away, for its FaultErrors: kind
// "model file", remedy "reconnect the drive or choose the model again".
func (m *File) Describe(kind, remedy string) {
	live.Lock()
	defer live.Unlock()
	m.kind, m.remedy = kind, remedy
}

// Changed reports the file as changed under its mapping (a *FaultError without a fault) when it
// is gone or no longer has the length it was mapped with; nil when it looks the same. It finds
// what a fault would have, for readers that do not fault on the CPU (a GPU reading the mapping).
func (m *File) Changed() error {
	if m == nil || !m.owned {
		return nil
	}
	fe := m.fault(nil)
	if fe.Now == fe.Size {
		return nil
	}
	return fe
}

// fault describes m as it is on disk now.
func (m *File) fault(err error) *FaultError {
	live.Lock()
	fe := &FaultError{Path: m.Path, Kind: m.kind, Remedy: m.remedy, Size: int64(len(m.data)), Err: err}
	live.Unlock()
	st, statErr := os.Stat(m.Path)
	switch {
	case statErr != nil:
		fe.Now, fe.NowErr = -1, statErr
	default:
		fe.Now = st.Size()
	}
	return fe
}

// live is every mapping Open made and Close has not unmapped, to find the file a fault's address
// belongs to.
var live struct {
	sync.Mutex
	files map[*File]struct{}
}

func register(m *File) {
	live.Lock()
	defer live.Unlock()
	if live.files == nil {
		live.files = map[*File]struct{}{}
	}
	live.files[m] = struct{}{}
}

func unregister(m *File) {
	live.Lock()
	defer live.Unlock()
	delete(live.files, m)
}

// mappingAt is the live mapping holding addr, or nil.
func mappingAt(addr uintptr) *File {
	live.Lock()
	defer live.Unlock()
	for m := range live.files {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(m.data)))
		if addr >= base && addr-base < uintptr(len(m.data)) {
			return m
		}
	}
	return nil
}

// AsFault turns a value recovered from a panic into a *FaultError: a memory fault at an address
// inside a live mapping (with Guard or Group in force), or a *FaultError already made (by a
// Group's worker). ok is false for every other panic, which is a bug to report as such.
func AsFault(v any) (fe *FaultError, ok bool) {
	if err, isErr := v.(error); isErr && errors.As(err, &fe) {
		return fe, true
	}
	re, isRuntime := v.(runtime.Error)
	if !isRuntime {
		return nil, false
	}
	at, hasAddr := v.(interface{ Addr() uintptr })
	if !hasAddr {
		return nil, false
	}
	m := mappingAt(at.Addr())
	if m == nil {
		return nil, false
	}
	return m.fault(re), true
}

// Guard makes a memory fault on the calling goroutine a panic (debug.SetPanicOnFault) instead of
// the end of the process, until the returned function restores the previous setting. A goroutine
// that reads mappings calls it first, and recovers with Recover or AsFault:
//
//	defer mmapfile.Guard()()
func Guard() (restore func()) {
	was := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(was) }
}

// Recover, deferred, turns a fault in a mapping on the calling goroutine into *err (a
// *FaultError) and lets every other panic go on. Use it where an error can be returned:
//
//	defer mmapfile.Recover(&err)
//	defer mmapfile.Guard()()
func Recover(err *error) {
	v := recover()
	if v == nil {
		return
	}
	if fe, ok := AsFault(v); ok {
		*err = fe
		return
	}
	panic(v)
}

// WorkerPanic is a panic other than a fault in a Group's worker, raised again by Wait with the
// worker's own stack.
type WorkerPanic struct {
	Value any
	Stack []byte
}

func (p *WorkerPanic) Error() string {
	return fmt.Sprintf("%v (in a worker goroutine)\n%s", p.Value, p.Stack)
}

// Group runs worker goroutines that may read mappings, as sync.WaitGroup does: in each, a fault
// is a panic (Guard), and any panic is caught; Wait raises the first one again on the caller's
// goroutine — a fault as its *FaultError, anything else as a *WorkerPanic — so that the caller's
// recover (the job's) sees it and no worker takes the process down. The zero value is ready.
type Group struct {
	wg     sync.WaitGroup
	mu     sync.Mutex
	caught any
}

// Go runs fn on a new goroutine.
func (g *Group) Go(fn func()) {
	g.wg.Go(func() {
		defer g.catch()
		debug.SetPanicOnFault(true)
		fn()
	})
}

// catch records the worker's panic (deferred in Go, so recover works).
func (g *Group) catch() {
	v := recover()
	if v == nil {
		return
	}
	var keep any
	if fe, ok := AsFault(v); ok {
		keep = fe
	} else if wp, ok := v.(*WorkerPanic); ok {
		keep = wp
	} else {
		keep = &WorkerPanic{Value: v, Stack: debug.Stack()}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.caught == nil {
		g.caught = keep
	}
}

// Wait waits for every worker, then panics with the first caught panic, if any.
func (g *Group) Wait() {
	g.wg.Wait()
	g.mu.Lock()
	v := g.caught
	g.caught = nil
	g.mu.Unlock()
	if v != nil {
		panic(v)
	}
}
