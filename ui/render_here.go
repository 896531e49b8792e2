package ui

import (
	"fmt"

	"fyne.io/fyne/v2/dialog"

	"easel/app/compose"
	"easel/app/jobs"

	"easel/ui/remote"
)

// offerRenderHere says that the machine a job rendered on stopped answering and offers to run
// the same job on this one (Render on is then turned off, as the settings dialog would).
func (s *window) offerRenderHere(j jobs.Job, d compose.Draft) {
	where := s.router.Where()
	s.sayKind(noticeError, "Job %d: %s", j.ID, remote.PlainRemoteError(j.Err, where))
	msg := fmt.Sprintf("%s stopped answering during job %d; your draft is as it was. Render the job on %s instead?", where, j.ID, thisMachine())
	dlg := dialog.NewConfirm("The other machine stopped", msg, func(here bool) {
		if !here {
			return
		}
		ns := s.deps.Settings
		ns.RenderOn, ns.RenderToken = "", ""
		s.deps.Settings = ns
		s.persist()
		s.applyNetwork(ns)
		if s.submit(d, d.Seed) {
			s.sayKind(noticeInfo, "Job %d runs on %s now (Render on is off; Settings turns it on again).", j.ID, thisMachine())
		}
	}, s.win)
	dlg.SetConfirmText("Render here")
	dlg.SetDismissText("Not now")
	s.show(dlg)
	s.renderHere = dlg
}
