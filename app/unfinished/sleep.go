package unfinished

import (
	"sync"

	"easel/app/activity"
	"easel/app/checkpoint"
	"easel/engine/pipeline"
)

// sleepFlush has the job's checkpoint writer write its newest state when the Mac is about to
// sleep (app/activity), while the job runs: from its first step to its last.
type sleepFlush struct {
	mu     sync.Mutex
	remove func()
}

// running registers the flush of the job's writer w with app/activity, once.
func (f *sleepFlush) running(w *checkpoint.Writer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.remove == nil {
		f.remove = activity.OnWillSleep(func() { w.Flush(activity.FlushTimeout) })
	}
}

// stepped unregisters it after the run's last step.
func (f *sleepFlush) stepped(s pipeline.StepState) {
	if s.Step == s.Steps && s.Image == max(s.Images, 1)-1 {
		f.stop()
	}
}

// stop unregisters it.
func (f *sleepFlush) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.remove != nil {
		f.remove()
		f.remove = nil
	}
}
