package setup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/modelsetup"
	"easel/engine/convert"
)

// convertPage shows what a snapshot folder holds, the space its conversion needs, and runs it.
type convertPage struct {
	dir     string
	outDir  string // where the model file goes ("" = the app-support models folder)
	profile convert.Profile

	contents, space, profileNote, status *widget.Label
	profiles                             *widget.RadioGroup
	placeButton, startButton             *widget.Button
	cancelButton                         *widget.Button
	bar                                  *widget.ProgressBar
	snapshot                             *modelsetup.Snapshot
	cancel                               context.CancelFunc
}

// profileLabel is how a profile is listed in the window: what the choice means for the artist,
// the bit width in brackets; the engine's name for it is left to the note under the choices.
func profileLabel(p convert.Profile) string {
	switch p {
	case convert.ProfileQ8:
		return "Finer detail (8-bit, needs more memory)"
	case convert.ProfileF16:
		return "Exact copy (full precision, largest file)"
	}
	return "Smaller and faster (4-bit, recommended)"
}

func (fr *firstRun) showConvert(dir string) {
	p := &convertPage{dir: dir, profile: convert.ProfileCortiq}
	fr.conv = p
	title := heading("Convert a Hugging Face snapshot")
	folder := widget.NewLabel(dir)
	folder.Wrapping = fyne.TextWrapBreak
	p.contents = widget.NewLabel("Reading the folder…")
	p.contents.Wrapping = fyne.TextWrapWord
	p.space = widget.NewLabel("")
	p.space.Wrapping = fyne.TextWrapWord
	var labels []string
	for _, pr := range convert.Profiles {
		labels = append(labels, profileLabel(pr))
	}
	p.profileNote = widget.NewLabel(modelsetup.ProfileSummary(p.profile))
	p.profileNote.Wrapping = fyne.TextWrapWord
	p.profiles = widget.NewRadioGroup(labels, func(choice string) {
		for _, pr := range convert.Profiles {
			if profileLabel(pr) == choice && pr != p.profile {
				p.profile = pr
				p.profileNote.SetText(modelsetup.ProfileSummary(pr))
				fr.inspectSnapshot(p)
			}
		}
	})
	p.profiles.Required = true
	p.profiles.SetSelected(profileLabel(p.profile))
	p.placeButton = widget.NewButton("Save it elsewhere…", func() { fr.pickModelFolder(p) })
	p.startButton = widget.NewButton("Convert", func() { fr.startConversion(p) })
	p.startButton.Importance = widget.HighImportance
	p.startButton.Disable()
	p.cancelButton = widget.NewButton("Cancel", func() {
		if p.cancel != nil {
			p.cancel()
		}
	})
	p.cancelButton.Hide()
	p.bar = widget.NewProgressBar()
	p.bar.Hide()
	p.status = widget.NewLabel("")
	p.status.Wrapping = fyne.TextWrapWord

	fr.show(container.NewVBox(title, folder, p.contents,
		widget.NewLabelWithStyle("Model file", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), p.profiles, p.profileNote,
		p.space, p.bar, p.status,
		container.NewHBox(fr.backButton(), p.placeButton, p.cancelButton, p.startButton)))
	fr.inspectSnapshot(p)
}

// modelPath is where the conversion writes.
func (p *convertPage) modelPath() (string, error) {
	if p.outDir != "" {
		return filepath.Join(p.outDir, modelsetup.ModelFileName(p.profile)), nil
	}
	return modelsetup.DefaultModelPath(p.profile)
}

// inspectSnapshot lists the folder's components and the space needed, in the background (it
// reads the safetensors headers).
func (fr *firstRun) inspectSnapshot(p *convertPage) {
	p.startButton.Disable()
	out, err := p.modelPath()
	if err != nil {
		p.space.SetText(err.Error())
		return
	}
	profile := p.profile
	go func() {
		s, err := modelsetup.InspectSnapshot(p.dir, profile, out)
		fyne.Do(func() {
			if profile != p.profile {
				return // the profile changed meanwhile; a newer inspection is on its way
			}
			p.snapshot = s
			if err != nil {
				p.contents.SetText(err.Error())
				p.contents.Importance = widget.DangerImportance
				p.contents.Refresh()
				fr.jobDone()
				return
			}
			p.contents.SetText(describeSnapshot(s))
			p.space.SetText(describeSpace(s))
			p.space.Importance = widget.MediumImportance
			if s.Problem != nil {
				p.space.Importance = widget.DangerImportance
			} else if !s.Fits() {
				p.space.Importance = widget.WarningImportance
			} else {
				p.startButton.Enable()
			}
			p.space.Refresh()
			fr.jobDone()
		})
	}()
}

// describeSnapshot lists the components found in a snapshot folder.
func describeSnapshot(s *modelsetup.Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The folder holds %s:\n", modelsetup.FormatBytes(s.Bytes))
	for _, c := range s.Components {
		if c.Found {
			fmt.Fprintf(&b, "✓ %s — %s/, %s, %s\n", c.What, c.Name, plural(c.Files, "file"), modelsetup.FormatBytes(c.Bytes))
		} else {
			fmt.Fprintf(&b, "✗ %s — %s/ is missing\n", c.What, c.Name)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// describeSpace says where the model file goes, how big it will be and whether it fits.
func describeSpace(s *modelsetup.Snapshot) string {
	if s.Problem != nil {
		return fmt.Sprintf("This folder cannot be converted: %v", s.Problem)
	}
	line := fmt.Sprintf("The model file will be at most %s, written to %s. %s free on that disk.",
		modelsetup.FormatBytes(s.Estimate.OutputBytes), s.Out, modelsetup.FormatBytes(s.FreeBytes))
	if !s.Fits() {
		line += " Not enough space: free some, or save the model elsewhere."
	}
	return line
}

// pickModelFolder lets the artist put the model file somewhere other than the app-support folder.
func (fr *firstRun) pickModelFolder(p *convertPage) {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			dialog.ShowError(err, fr.w)
			return
		}
		if u != nil {
			p.outDir = u.Path()
			fr.inspectSnapshot(p)
		}
	}, fr.w)
}

// startConversion runs the conversion in the background with progress and Cancel.
func (fr *firstRun) startConversion(p *convertPage) {
	out, err := p.modelPath()
	if err != nil {
		fr.showError(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	fr.beginWork(cancel)
	p.startButton.Disable()
	p.placeButton.Disable()
	p.profiles.Disable()
	p.cancelButton.Show()
	p.bar.SetValue(0)
	p.bar.Show()
	p.status.Importance = widget.MediumImportance
	p.status.SetText("Starting…")
	profile := p.profile
	go func() {
		m, err := modelsetup.ConvertSnapshot(ctx, p.dir, out, profile, func(pr convert.Progress) {
			line, f := modelsetup.DescribeConversion(pr), modelsetup.Fraction(pr.BytesDone, pr.BytesTotal)
			fyne.Do(func() {
				p.bar.SetValue(f)
				p.status.SetText(line)
				if fr.progressed != nil {
					fr.progressed()
				}
			})
		})
		cancel()
		fyne.Do(func() {
			p.cancel = nil
			if fr.endWork() {
				return
			}
			p.cancelButton.Hide()
			p.placeButton.Enable()
			p.profiles.Enable()
			switch {
			case err == nil:
				fr.useModel(m, "")
			case errors.Is(err, context.Canceled):
				p.bar.Hide()
				p.status.SetText("Conversion cancelled. No model file was written.")
				p.startButton.Enable()
			default:
				p.bar.Hide()
				p.status.SetText(fmt.Sprintf("The conversion failed: %v", err))
				p.status.Importance = widget.DangerImportance
				p.status.Refresh()
				p.startButton.Enable()
			}
			fr.jobDone()
		})
	}()
}

// plural is "1 file", "3 files".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
