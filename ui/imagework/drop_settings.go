package imagework

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/imagefile"

	"easel/ui/model"
)

// DropFiles reads the dropped files off the UI goroutine. The shell takes what is not a picture
// (Shell.TakeFiles: LoRAs, upscalers). The first PNG that carries settings (Easel's own, or
// another tool's A1111 "parameters" text) asks what it is for: its recipe (restored and shown on
// the canvas), the start image or a condition image; every other file is added as a condition
// image — except, when onStart (dropped on the canvas or the start image's slot), the first of
// them, which becomes the start image. One message says what happened.
func (r *Region) DropFiles(paths []string, onStart bool) {
	if len(paths) == 0 {
		return
	}
	go func() {
		var (
			from    string
			md      *imagefile.Metadata
			ignored []string // further PNGs with settings: only one can be restored
			images  []string
			others  func() ([]string, func()) // the shell's files, once the drop is answered
		)
		if r.sh.TakeFiles != nil {
			paths, others = r.sh.TakeFiles(paths)
		}
		for _, p := range paths {
			if m := settingsIn(p); m != nil {
				if from == "" {
					from, md = p, m
				} else {
					ignored = append(ignored, shortPath(p))
				}
				continue
			}
			images = append(images, p)
		}
		var start *loadedCondition
		if onStart && len(images) > 0 {
			c, err := compose.LoadCondition(images[0])
			start, images = &loadedCondition{c, err}, images[1:]
		}
		loaded := loadConditions(images)
		r.sh.Do(func() {
			finish := func(use PNGUse) {
				if use == PNGCancelled {
					return // Cancel or Esc: nothing dropped changes the window
				}
				var lines []string
				if from != "" && use == PNGAsStart {
					c, err := compose.LoadCondition(from)
					start = &loadedCondition{c, err}
				}
				if from != "" && use == PNGRestore {
					lines = append(lines, r.restoreDropped(from, md))
					if len(ignored) > 0 {
						lines = append(lines, fmt.Sprintf("%s also carry settings and were left out: drop one at a time to restore its settings.", strings.Join(ignored, ", ")))
					}
				} else if from != "" && use == PNGAsCondition {
					loaded = append(loadConditions([]string{from}), loaded...) // asked to use it as a condition image
				}
				if start != nil {
					if start.err != nil {
						lines = append(lines, start.err.Error())
					} else {
						r.sh.Remember("starting from " + start.c.Name)
						r.SetStart(start.c)
						lines = append(lines, fmt.Sprintf("Starting from %s: paint over what to repaint, or generate to rework the whole image at strength %.2f.", start.c.Name, r.doc().Strength))
					}
				}
				lines = append(lines, r.addLoaded(loaded)...)
				if others != nil {
					more, then := others()
					lines = append(lines, more...)
					if then != nil {
						defer then() // after the message (it may ask a question of its own)
					}
				}
				if len(lines) > 0 {
					r.say("%s", strings.Join(lines, "\n"))
				} else {
					r.m.Quiet()
				}
			}
			if from == "" {
				finish(PNGAsCondition)
				return
			}
			r.AskRestore(from, finish)
		})
	}()
}

// PNGUse is what a dropped or pasted PNG that carries settings is for.
type PNGUse int

const (
	PNGCancelled   PNGUse = iota // Cancel or Esc: nothing changes
	PNGRestore                   // its whole recipe, undoable
	PNGAsStart                   // the picture as the start image
	PNGAsCondition               // the picture as a condition image
)

// AskRestore asks what a dropped or pasted PNG that carries settings is for: its whole recipe
// (restored, undoable), the start image, a condition image, or nothing (Cancel, Esc); answer
// gets the choice.
func (r *Region) AskRestore(path string, answer func(PNGUse)) {
	text := widget.NewLabel(shortPath(path) + " carries the settings it was made with. Restore its whole recipe (prompt, settings, condition images, start image), start from the picture, or use it as a condition image?")
	text.Wrapping = fyne.TextWrapWord
	var d *dialog.CustomDialog
	choice := func(label string, use PNGUse) *widget.Button {
		return widget.NewButton(label, func() {
			d.Hide()
			answer(use)
		})
	}
	restore := choice("Restore the recipe", PNGRestore)
	restore.Importance = widget.HighImportance
	d = dialog.NewCustomWithoutButtons("Restore "+shortPath(path)+"?", text, r.sh.Window)
	d.SetButtons([]fyne.CanvasObject{choice("Cancel", PNGCancelled), choice("Use as condition image", PNGAsCondition), choice("Use as start image", PNGAsStart), restore})
	d.Resize(fyne.NewSize(620, 0))
	r.sh.Show(d)
	r.restoreAsk = d
}

// settingsIn is a file's PNG metadata when it carries settings to restore, else nil (not a PNG,
// unreadable, or a PNG without them: those go to the condition list, which says what is wrong).
func settingsIn(path string) *imagefile.Metadata {
	md, err := imagefile.ReadFile(path)
	if err != nil {
		return nil
	}
	if !compose.CarriesSettings(md) {
		return nil
	}
	return md
}

// restoreDropped restores a dropped PNG's settings, shows it, and returns the message.
func (r *Region) restoreDropped(path string, md *imagefile.Metadata) string {
	r.sh.Remember("restoring " + shortPath(path))
	note, _ := r.m.RestoreFile(md, r.sh.LoRADirs(path))
	if n := r.RestoreStart(md.Settings); n != "" {
		note = strings.TrimSpace(note + "\n" + n)
	}
	r.sh.Restored()
	r.sh.ShowFile(path)
	msg := fmt.Sprintf("Settings restored from %s (to use it as a condition image instead, add it with Add images…).", shortPath(path))
	if note != "" {
		msg += "\n" + note
	}
	return msg
}

// RestoreFromImage is Image → Restore from Image…: a PNG's whole recipe, undoable with ⌘Z.
func (r *Region) RestoreFromImage() {
	r.sh.PickFile([]string{".png"}, r.sh.OutputFolder(), func(path string) {
		md := settingsIn(path)
		if md == nil {
			r.say("%s holds no settings Easel or another tool wrote: there is nothing to restore. To start from it, use Work on an image.", shortPath(path))
			return
		}
		r.sayKind(model.NoticeSuccess, "%s", r.restoreDropped(path, md))
	})
}
