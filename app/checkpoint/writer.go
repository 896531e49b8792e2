package checkpoint

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
)

// Writer writes a run's checkpoints to one path in the background: at most one write in flight,
// and a state offered while one is writing is skipped, so the steps never wait for the disk.
// A full disk skips checkpoints (said once, the run goes on); a folder that cannot be written
// turns them off (said once).
type Writer struct {
	path string
	// Written, when not nil, runs on the writing goroutine after each checkpoint is in place.
	Written func(*Checkpoint)
	// Notice, when not nil, receives the sentences for the user (a full disk, checkpoints off).
	Notice func(string)
	// EveryStep makes Offer wait for the write in flight instead of skipping, so every step's
	// state is written (tests that stop a run after a chosen step; the steps then wait for the disk).
	EveryStep bool

	busy    atomic.Bool
	off     atomic.Bool
	skipped atomic.Int64
	wg      sync.WaitGroup
	said    sync.Map   // the notices given once
	flush   flushState // flush.go
}

// NewWriter writes checkpoints to path.
func NewWriter(path string) *Writer { return &Writer{path: path} }

// Path is the checkpoint file.
func (w *Writer) Path() string { return w.path }

// Offer writes the checkpoint build makes, unless a write is in flight or checkpoints are off;
// build runs on the caller's goroutine (copy the run's buffers there) only when the write goes
// ahead. It reports whether it did.
func (w *Writer) Offer(build func() *Checkpoint) bool {
	asked := w.flush.take()
	if w.EveryStep || asked != nil {
		w.Wait()
	}
	if w.off.Load() || !w.busy.CompareAndSwap(false, true) {
		w.skipped.Add(1)
		w.flush.skipped(asked)
		return false
	}
	c := build()
	wrote := w.flush.writing()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer w.busy.Store(false)
		defer w.flush.wrote(wrote, asked)
		err := WriteFile(w.path, c)
		switch {
		case err == nil:
			if w.Written != nil {
				w.Written(c)
			}
		case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
			w.once("full", fmt.Sprintf("The disk holding %s is full: a checkpoint was skipped (the image goes on; free some space to keep the run resumable).", filepath.Dir(w.path)))
		case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
			w.off.Store(true)
			w.once("off", fmt.Sprintf("Checkpoints are off for this run: %s cannot be written (%v). The image goes on, but cannot be resumed if it stops.", filepath.Dir(w.path), err))
		default:
			w.once("error", fmt.Sprintf("A checkpoint could not be written (%v); the image goes on.", err))
		}
	}()
	return true
}

// once gives the notice of a kind once.
func (w *Writer) once(kind, s string) {
	if _, done := w.said.LoadOrStore(kind, true); !done && w.Notice != nil {
		w.Notice(s)
	}
}

// Skipped is the number of states offered while a write was in flight or checkpoints were off.
func (w *Writer) Skipped() int64 { return w.skipped.Load() }

// Off reports whether checkpoints were turned off (the folder cannot be written).
func (w *Writer) Off() bool { return w.off.Load() }

// Wait waits for the write in flight.
func (w *Writer) Wait() { w.wg.Wait() }

// Remove waits for the write in flight, then deletes the checkpoint and what is stored beside it
// (the image is saved: nothing is left to resume).
func (w *Writer) Remove() error {
	w.Wait()
	return Remove(w.path)
}
