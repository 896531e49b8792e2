package ui

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

	"easel/ui/remote"
)

// studioRenderOn is Studio… → "Render this window's jobs on a studio": the hub's address, token
// and pairing fingerprint, and while it is on, the window's jobs (a whole batch at once: every
// idle Mac takes an image) go to the studio instead of this Mac; API jobs of the window's own
// server still render here. Each job's queue row says which Mac renders each image and at which
// attempt (studiogen's status line).
type studioRenderOn struct {
	remote.HubFields
	check *widget.Check
	err   *widget.Label
	gen   *studiogen.Generator
	// places is each job's last "Studio: image 1 on mac-1 · …" line, for its queue row.
	places map[jobs.ID]string
}

// renderOn is the window's studio rendering state, made on first use.
func (s *window) renderOn() *studioRenderOn {
	if s.studioRender == nil {
		r := &studioRenderOn{HubFields: remote.NewHubFields(), err: remote.ErrorLabel(), places: map[jobs.ID]string{}}
		s.fillHubFields(r.HubFields)
		r.check = widget.NewCheck("Render this window's jobs on the studio", func(on bool) {
			if err := s.setRenderOnStudio(on); err != nil {
				r.check.SetChecked(false) // (calls this again, off)
				r.err.SetText(err.Error())
				return
			}
			r.err.SetText("")
		})
		s.studioRender = r
	}
	return s.studioRender
}

// setRenderOnStudio connects the window's jobs to the studio the form names, or back to this Mac.
func (s *window) setRenderOnStudio(on bool) error {
	r := s.renderOn()
	if !on {
		s.rememberStudioUse(func(st *settings.Studio) { st.Render = false })
		if r.gen != nil {
			s.router.SetStudio(nil, "")
			r.gen.Close()
			r.gen = nil
			s.showNetwork()
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
	_, fp, err := s.studioModel("only Macs with the same model file take the jobs")
	if err != nil {
		return err
	}
	g, err := studiogen.New(url, token, pin, fp, nil)
	if err != nil {
		return errors.New(remote.PlainRemoteError(err, "The studio hub at "+url))
	}
	s.rememberStudio(r.HubFields, func(st *settings.Studio) { st.Render = true })
	r.gen = g
	s.router.SetStudio(g, "the studio at "+url)
	s.showNetwork()
	return nil
}

// notePlacement keeps a studio job's status line for its queue row.
func (s *window) notePlacement(j jobs.Job, st jobs.Status) {
	if !strings.HasPrefix(st.Line, "Studio: ") {
		return
	}
	s.renderOn().places[j.ID] = st.Line
	s.queueList.Show(s.queue.Jobs())
}

// placementOf is job id's studio line for its queue row ("" when it did not render on a studio).
func (s *window) placementOf(id jobs.ID) string {
	if s.studioRender == nil {
		return ""
	}
	if l := s.studioRender.places[id]; l != "" {
		return " · " + l
	}
	return ""
}

// form is the dialog's section.
func (r *studioRenderOn) form() fyne.CanvasObject {
	return container.NewVBox(kit.Heading("Render on a studio"), widget.NewForm(r.Items()...), r.check, r.err)
}

// closeRenderOn disconnects from the studio (the window is closing).
func (s *window) closeRenderOn() {
	if s.studioRender != nil && s.studioRender.gen != nil {
		s.studioRender.gen.Close()
	}
}
