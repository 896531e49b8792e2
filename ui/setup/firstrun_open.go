package setup

import (
	"context"
	"errors"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/modelsetup"
)

// openPage checks a .cmf the artist already has, offers a full verification, and uses it.
type openPage struct {
	path                    string
	status                  *widget.Label
	useButton, verifyButton *widget.Button
	verifyBar               *widget.ProgressBar
	model                   *modelsetup.Model
}

func (fr *firstRun) showOpen(path string) {
	p := &openPage{path: path}
	fr.open = p
	title := heading("Open a model file")
	file := widget.NewLabel(path)
	file.Wrapping = fyne.TextWrapBreak
	p.status = widget.NewLabel("Checking the file…")
	p.status.Wrapping = fyne.TextWrapWord
	p.useButton = widget.NewButton("Use this model", func() { fr.useModel(p.model, "") })
	p.useButton.Importance = widget.HighImportance
	p.useButton.Disable()
	p.verifyButton = widget.NewButton("Verify every byte", func() { fr.verifyOpened(p) })
	p.verifyButton.Disable()
	p.verifyBar = widget.NewProgressBar()
	p.verifyBar.Hide()
	verifyNote := widget.NewLabel("Optional: verifying reads every byte of the file (about 13 GB for a full-size model) and checks every hash. Use it if the file came over a flaky connection or from a USB disk.")
	verifyNote.Wrapping = fyne.TextWrapWord
	buttons := container.NewHBox(fr.backButton(), p.verifyButton, p.useButton)
	fr.show(container.NewVBox(title, file, p.status, verifyNote, p.verifyBar, buttons))

	go func() {
		m, err := modelsetup.Check(path)
		fyne.Do(func() {
			if err != nil {
				p.status.SetText(fmt.Sprintf("This file cannot be used: %v", err))
				p.status.Importance = widget.DangerImportance
				p.status.Refresh()
			} else {
				p.model = m
				p.status.SetText(describeModel(m))
				p.status.Importance = widget.SuccessImportance
				p.status.Refresh()
				p.useButton.Enable()
				p.verifyButton.Enable()
			}
			fr.jobDone()
		})
	}()
}

// verifyOpened hashes the whole file with a progress bar; while it runs the button stops it.
func (fr *firstRun) verifyOpened(p *openPage) {
	ctx, cancel := context.WithCancel(context.Background())
	fr.beginWork(cancel)
	p.useButton.Disable()
	p.verifyButton.SetText("Stop verifying")
	p.verifyButton.OnTapped = cancel
	p.verifyBar.SetValue(0)
	p.verifyBar.Show()
	go func() {
		err := modelsetup.Verify(ctx, p.path, func(done, total int64) {
			f := modelsetup.Fraction(done, total)
			fyne.Do(func() { p.verifyBar.SetValue(f) })
		})
		cancel()
		fyne.Do(func() {
			if fr.endWork() {
				return
			}
			p.verifyButton.SetText("Verify every byte")
			p.verifyButton.OnTapped = func() { fr.verifyOpened(p) }
			if errors.Is(err, context.Canceled) {
				// Stopped by the artist: the quick check passed, so the model stays usable.
				p.status.SetText(describeModel(p.model) + "\nVerification stopped; the quick check passed.")
				p.verifyBar.Hide()
				p.useButton.Enable()
				p.status.Refresh()
				fr.jobDone()
				return
			}
			p.useButton.Enable()
			if err != nil {
				p.status.SetText(fmt.Sprintf("Verification failed: %v", err))
				p.status.Importance = widget.DangerImportance
				p.useButton.Disable()
			} else {
				p.status.SetText(describeModel(p.model) + "\nEvery hash matches.")
				p.verifyBar.SetValue(1)
			}
			p.status.Refresh()
			fr.jobDone()
		})
	}()
}

// describeModel is what the window says about a model that passed the check.
func describeModel(m *modelsetup.Model) string {
	vision := "with the vision tower (condition images are described to the encoder)"
	if !m.Vision {
		vision = "without the vision tower (condition images are used as pictures only)"
	}
	return fmt.Sprintf("Qwen-Image-2.1, %s, %s, %d tensors, %s.", m.QuantType, modelsetup.FormatBytes(m.Bytes), m.Tensors, vision)
}

// useModel saves the model in the settings and shows the ready page. snapshot, when not empty,
// is the downloaded snapshot the ready page offers to delete.
func (fr *firstRun) useModel(m *modelsetup.Model, snapshot string) {
	if m == nil {
		return
	}
	if err := modelsetup.SaveModel(fr.store, m.Path); err != nil {
		fr.showError(err)
		return
	}
	fr.showReady(m, snapshot)
}
