package ui

// The shell's side of the keeping region (ui/keeping): the jobs kept across a crash or a quit,
// the images saved in the background and those kept after a failed save.

import (
	"easel/app/history"
	"easel/app/jobs"
	"easel/app/unfinished"

	"easel/ui/keeping"
)

// newKeeping builds the keeping region with the shell's services.
func (s *window) newKeeping() *keeping.Region {
	return keeping.New(s.model, keeping.Shell{
		Do:           s.deps.Do,
		Window:       s.win,
		Show:         s.show,
		Unfinished:   func() *unfinished.Store { return s.deps.Unfinished },
		History:      func() *history.Store { return s.deps.History },
		OutputFolder: func() string { return s.deps.Settings.OutputFolder },
		Now:          s.now,
		Where:        func() string { return s.router.Where() },
		Here:         thisMachine(),
		Submit:       s.submitJob,
		Listed:       func(e history.Entry) { s.history.AddSession(e) },
		Showing:      func() (jobs.ID, string) { return s.canvasJob, s.actions.Shown() },
		Saved: func(id jobs.ID, path string) {
			if s.canvasJob == id {
				s.setShownFile(path)
			}
		},
		JobSaved: func(e history.Entry, fromStart bool) {
			if fromStart {
				s.actions.Edited(e.Path) // an inpaint or outpaint: Continue from this (ui/savedimage)
			}
			s.progress.Stage.SetText(s.progress.Stage.Text + " · saved " + shortPath(e.Path))
		},
	})
}
