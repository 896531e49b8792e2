package setup

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/modelsetup"
	"easel/app/settings"
)

// backendLabels are the backend choices as the dialog lists them.
var backendLabels = []struct {
	backend settings.Backend
	label   string
}{
	{settings.BackendAuto, "Automatic (Metal when it fits, else CPU)"},
	{settings.BackendMetal, "Metal (GPU)"},
	{settings.BackendCPU, "CPU"},
}

// previewLabels are the preview modes as the dialog lists them.
var previewLabels = []struct {
	mode  settings.PreviewMode
	label string
}{
	{settings.PreviewFast, "Fast (colours from the latents, every step)"},
	{settings.PreviewSharp, "Sharp (the real decoder at reduced size, every few steps)"},
}

// settingsForm is the settings dialog's fields.
type settingsForm struct {
	base                                settings.Settings // what the file held: keys not shown stay as they were
	model, output, width, height, steps *widget.Entry
	backend, preview                    *widget.Select
	// share is "Share this Mac" with its address and token; renderOn is "Render on" (empty: this
	// Mac) with the other machine's token.
	share                                        *widget.Check
	shareAddr, shareToken, renderOn, renderToken *widget.Entry
	// tune is "Tune the GPU kernels for this Mac on first use" (settings.NoGPUTuning unchecked).
	tune *widget.Check
	// check is "Check each image against its prompt" (settings.CheckImages).
	check *widget.Check
}

func newSettingsForm(s settings.Settings) *settingsForm {
	f := &settingsForm{base: s}
	f.model = widget.NewEntry()
	f.model.SetText(s.Model)
	f.output = widget.NewEntry()
	f.output.SetText(s.OutputFolder)
	f.width = widget.NewEntry()
	f.width.SetText(strconv.Itoa(s.Width))
	f.height = widget.NewEntry()
	f.height.SetText(strconv.Itoa(s.Height))
	f.steps = widget.NewEntry()
	f.steps.SetText(strconv.Itoa(s.Steps))
	var labels []string
	for _, b := range backendLabels {
		labels = append(labels, b.label)
	}
	f.backend = widget.NewSelect(labels, nil)
	for _, b := range backendLabels {
		if b.backend == s.Backend {
			f.backend.SetSelected(b.label)
		}
	}
	f.tune = widget.NewCheck("Tune the GPU kernels for this Mac on first use (the first job of each size takes longer)", nil)
	f.tune.SetChecked(!s.NoGPUTuning)
	f.check = widget.NewCheck("Check each image against its prompt (the text encoder answers ✓ / ✗ per element)", nil)
	f.check.SetChecked(s.CheckImages)
	f.share = widget.NewCheck("Share this Mac (other machines and tools can render here)", nil)
	f.share.SetChecked(s.Share)
	f.shareAddr = widget.NewEntry()
	f.shareAddr.SetPlaceHolder(settings.DefaultShareAddr)
	f.shareAddr.SetText(s.ShareAddr)
	f.shareToken = widget.NewEntry()
	f.shareToken.SetPlaceHolder("made when sharing starts")
	f.shareToken.SetText(s.ShareToken)
	f.renderOn = widget.NewEntry()
	f.renderOn.SetPlaceHolder("this Mac (or host:port of another Easel that shares)")
	f.renderOn.SetText(s.RenderOn)
	f.renderToken = widget.NewPasswordEntry()
	f.renderToken.SetText(s.RenderToken)
	labels = nil
	for _, p := range previewLabels {
		labels = append(labels, p.label)
	}
	f.preview = widget.NewSelect(labels, nil)
	f.preview.SetSelected(previewLabels[0].label)
	for _, p := range previewLabels {
		if p.mode == s.Preview {
			f.preview.SetSelected(p.label)
		}
	}
	return f
}

// settings reads the fields back, checked: numbers are numbers, the values pass
// settings.Validate, and a changed model file passes modelsetup.Check.
func (f *settingsForm) settings() (settings.Settings, error) {
	s := f.base
	s.Model = strings.TrimSpace(f.model.Text)
	s.OutputFolder = strings.TrimSpace(f.output.Text)
	s.Share, s.ShareAddr, s.ShareToken = f.share.Checked, strings.TrimSpace(f.shareAddr.Text), strings.TrimSpace(f.shareToken.Text)
	s.RenderOn, s.RenderToken = strings.TrimSpace(f.renderOn.Text), strings.TrimSpace(f.renderToken.Text)
	s.NoGPUTuning = !f.tune.Checked
	s.CheckImages = f.check.Checked
	for _, b := range backendLabels {
		if b.label == f.backend.Selected {
			s.Backend = b.backend
		}
	}
	for _, p := range previewLabels {
		if p.label == f.preview.Selected {
			s.Preview = p.mode
		}
	}
	for _, n := range []struct {
		name  string
		entry *widget.Entry
		dst   *int
	}{{"width", f.width, &s.Width}, {"height", f.height, &s.Height}, {"steps", f.steps, &s.Steps}} {
		v, err := strconv.Atoi(strings.TrimSpace(n.entry.Text))
		if err != nil {
			return s, fmt.Errorf("the default %s must be a whole number, not %q", n.name, n.entry.Text)
		}
		*n.dst = v
	}
	if err := s.Validate(); err != nil {
		return s, err
	}
	if s.Model != f.base.Model {
		if _, err := modelsetup.Check(s.Model); err != nil {
			return s, err
		}
	}
	return s, nil
}

// ShowSettings opens the settings dialog over w: the model file, the backend, the preview mode,
// the output folder, the default size and steps. Saving checks the values (and a newly chosen model file) and writes
// them; onSaved, when not nil, gets the saved settings. A settings file that cannot be read is
// reported with an offer to reset it to the defaults.
func ShowSettings(w fyne.Window, store *settings.Store, onSaved func(settings.Settings)) {
	showSettings(w, store, onSaved, "", nil)
}

// ShowSettingsWithGPU is ShowSettings with a read-only "GPU" section holding gpu (the first
// Metal use's self-test and kernel choice, backend.FirstUseSummary); none when gpu is "". show,
// when not nil, shows the dialog (the main window's, so Esc closes it).
func ShowSettingsWithGPU(w fyne.Window, store *settings.Store, onSaved func(settings.Settings), gpu string, show func(dialog.Dialog)) {
	showSettings(w, store, onSaved, gpu, show)
}

// showSettings is ShowSettings, returning the form it shows (nil when the file could not be read)
// so tests can fill it in.
func showSettings(w fyne.Window, store *settings.Store, onSaved func(settings.Settings), gpu string, show func(dialog.Dialog)) *settingsForm {
	s, err := store.Load()
	if err != nil {
		dialog.ShowConfirm("The settings cannot be read",
			fmt.Sprintf("%v\n\nReset them to the defaults? (The model will have to be chosen again.)", err),
			func(reset bool) {
				if !reset {
					return
				}
				if err := store.Save(settings.Defaults()); err != nil {
					dialog.ShowError(err, w)
					return
				}
				showSettings(w, store, onSaved, gpu, show)
			}, w)
		return nil
	}
	f := newSettingsForm(s)
	pickModel := widget.NewButton("Choose…", func() {
		d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
			if err == nil && r != nil {
				f.model.SetText(r.URI().Path())
				r.Close()
			}
		}, w)
		d.SetFilter(storage.NewExtensionFileFilter([]string{".cmf"}))
		d.Show()
	})
	pickOutput := widget.NewButton("Choose…", func() {
		dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				f.output.SetText(u.Path())
			}
		}, w)
	})
	// Copy puts the share token on the clipboard, to paste on the machine that renders here.
	copyToken := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		fyne.CurrentApp().Clipboard().SetContent(strings.TrimSpace(f.shareToken.Text))
	})
	items := []*widget.FormItem{
		widget.NewFormItem("Model file", container.NewBorder(nil, nil, nil, pickModel, f.model)),
		widget.NewFormItem("Backend", f.backend),
		widget.NewFormItem("Preview", f.preview),
		widget.NewFormItem("Images go to", container.NewBorder(nil, nil, nil, pickOutput, f.output)),
		widget.NewFormItem("Default size", container.NewGridWithColumns(3, f.width, widget.NewLabel("×"), f.height)),
		widget.NewFormItem("Default steps", f.steps),
		widget.NewFormItem("Share", f.share),
		widget.NewFormItem("Share on", f.shareAddr),
		widget.NewFormItem("Share token", container.NewBorder(nil, nil, nil, copyToken, f.shareToken)),
		widget.NewFormItem("Render on", f.renderOn),
		widget.NewFormItem("Its token", f.renderToken),
		// A studio of several Macs is the same idea, one dialog away: said here in its words.
		widget.NewFormItem("A studio", studioHint()),
		widget.NewFormItem("GPU tuning", f.tune),
		widget.NewFormItem("Check images", f.check),
	}
	if gpu != "" {
		// Read-only: what the first Metal use found (the self-test) and chose (the kernels).
		l := widget.NewLabel(gpu)
		l.Wrapping = fyne.TextWrapWord
		items = append(items, widget.NewFormItem("GPU", l))
	}
	d := dialog.NewForm("Settings", "Save", "Cancel", items, func(save bool) {
		if !save {
			return
		}
		s, err := f.settings()
		if err == nil {
			err = store.Save(s)
		}
		if err != nil {
			dialog.ShowError(fmt.Errorf("the settings were not saved: %v", err), w)
			return
		}
		if onSaved != nil {
			onSaved(s)
		}
	}, w)
	d.Resize(fyne.NewSize(640, 0))
	if show != nil {
		show(d)
	} else {
		d.Show()
	}
	return f
}

// studioHint points from Render on and Share to the Studio dialog, where the same ideas work with
// several Macs (render on a studio, share this Mac's queue, lend this Mac).
func studioHint() *widget.Label {
	l := widget.NewLabel("several Macs: the Easel menu, Studio…")
	l.Importance = widget.LowImportance
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}
