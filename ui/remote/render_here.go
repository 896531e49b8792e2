package remote

import (
	"fmt"

	"fyne.io/fyne/v2/dialog"

	"easel/app/compose"
	"easel/app/jobs"
	"easel/ui/model"
)

// OfferRenderHere says that the machine a job rendered on stopped answering and offers to run
// the same job on this one (Render on is then turned off, as the settings dialog would).
func (w *Work) OfferRenderHere(j jobs.Job, d compose.Draft) {
	where := w.Router.Where()
	w.say(model.NoticeError, "Job %d: %s", j.ID, PlainRemoteError(j.Err, where))
	msg := fmt.Sprintf("%s stopped answering during job %d; your draft is as it was. Render the job on %s instead?", where, j.ID, w.sh.Machine)
	dlg := dialog.NewConfirm("The other machine stopped", msg, func(here bool) {
		if !here {
			return
		}
		ns := w.sh.Settings()
		ns.RenderOn, ns.RenderToken = "", ""
		w.keep(ns)
		w.ApplyNetwork(ns)
		if w.sh.Submit(d, d.Seed) {
			w.say(model.NoticeInfo, "Job %d runs on %s now (Render on is off; Settings turns it on again).", j.ID, w.sh.Machine)
		}
	}, w.sh.Window)
	dlg.SetConfirmText("Render here")
	dlg.SetDismissText("Not now")
	w.sh.Show(dlg)
	w.renderHere = dlg
}
