package remote

import (
	"errors"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/settings"
	"easel/app/studiogen"
	"easel/ui/kit"
)

// StudioRenderOn is Studio… → "Render this window's jobs on a studio": the hub's address, token
// and pairing fingerprint, and while it is on, the window's jobs (a whole batch at once: every
// idle Mac takes an image) go to the studio instead of this Mac; API jobs of the window's own
// server still render here. Each job's queue row says which Mac renders each image and at which
// attempt (studiogen's status line).
type StudioRenderOn struct {
	HubFields
	Check *widget.Check
	Err   *widget.Label
	gen   *studiogen.Generator
	// places is each job's last "Studio: image 1 on mac-1 · …" line, for its queue row.
	places map[jobs.ID]string
}

// Studio is the studio the window's jobs render on (nil: none).
func (r *StudioRenderOn) Studio() *studiogen.Generator { return r.gen }

// Placement is job id's last studio line ("" when it did not render on a studio).
func (r *StudioRenderOn) Placement(id jobs.ID) string { return r.places[id] }

// RenderOn is the window's studio rendering state, made on first use.
func (w *Work) RenderOn() *StudioRenderOn {
	if w.studioRender == nil {
		r := &StudioRenderOn{HubFields: NewHubFields(), Err: ErrorLabel(), places: map[jobs.ID]string{}}
		w.fillHubFields(r.HubFields)
		r.Check = widget.NewCheck("Render this window's jobs on the studio", func(on bool) {
			if err := w.setRenderOnStudio(on); err != nil {
				r.Check.SetChecked(false) // (calls this again, off)
				r.Err.SetText(err.Error())
				return
			}
			r.Err.SetText("")
		})
		w.studioRender = r
	}
	return w.studioRender
}

// setRenderOnStudio connects the window's jobs to the studio the form names, or back to this Mac.
func (w *Work) setRenderOnStudio(on bool) error {
	r := w.RenderOn()
	if !on {
		w.rememberStudioUse(func(st *settings.Studio) { st.Render = false })
		if r.gen != nil {
			w.Router.SetStudio(nil, "")
			r.gen.Close()
			r.gen = nil
			w.ShowNetwork()
		}
		return nil
	}
	if r.gen != nil {
		return nil
	}
	url, token, pin, err := r.Read()
	if err != nil {
		return err
	}
	_, fp, err := w.studioModel("only Macs with the same model file take the jobs")
	if err != nil {
		return err
	}
	g, err := studiogen.New(url, token, pin, fp, nil)
	if err != nil {
		return errors.New(PlainRemoteError(err, "The studio hub at "+url))
	}
	w.rememberStudio(r.HubFields, func(st *settings.Studio) { st.Render = true })
	r.gen = g
	w.Router.SetStudio(g, "the studio at "+url)
	w.ShowNetwork()
	return nil
}

// NotePlacement keeps a studio job's status line for its queue row.
func (w *Work) NotePlacement(j jobs.Job, st jobs.Status) {
	if !strings.HasPrefix(st.Line, "Studio: ") {
		return
	}
	w.RenderOn().places[j.ID] = st.Line
	w.sh.QueueChanged()
}

// PlacementOf is job id's studio line for its queue row ("" when it did not render on a studio).
func (w *Work) PlacementOf(id jobs.ID) string {
	if w.studioRender == nil {
		return ""
	}
	if l := w.studioRender.places[id]; l != "" {
		return " · " + l
	}
	return ""
}

// form is the dialog's section.
func (r *StudioRenderOn) form() fyne.CanvasObject {
	return container.NewVBox(kit.Heading("Render on a studio"), widget.NewForm(r.Items()...), r.Check, r.Err)
}
