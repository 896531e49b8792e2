package ui

import (
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/upscalers"
	"easel/ui/upscale"
)

// dropFiles reads the dropped files off the UI goroutine. The first PNG that carries settings
// (Easel's own, or another tool's A1111 "parameters" text) restores them into the controls and is
// shown on the canvas instead of becoming a condition image; every other file is added as a
// condition image, as before — except, when onStart (dropped on the canvas or the start image's
// slot), the first of them, which becomes the start image. One message says what happened.
func (s *window) dropFiles(paths []string, onStart bool) {
	if len(paths) == 0 {
		return
	}
	go func() {
		var (
			from    string
			md      *imagefile.Metadata
			ignored []string // further PNGs with settings: only one can be restored
			images  []string
			loras   []string          // .safetensors files: LoRAs
			ups     []upscalers.Entry // upscaler files: asked about (ui/upscale)
			refused []string
		)
		for _, p := range paths {
			if upscale.Dropped(p, &ups, &refused) {
				continue
			}
			if strings.EqualFold(filepath.Ext(p), ".safetensors") {
				loras = append(loras, p)
				continue
			}
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
		s.deps.Do(func() {
			finish := func(use pngUse) {
				if use == pngCancelled {
					return // Cancel or Esc: nothing dropped changes the window
				}
				var lines []string
				if from != "" && use == pngAsStart {
					c, err := compose.LoadCondition(from)
					start = &loadedCondition{c, err}
				}
				if from != "" && use == pngRestore {
					lines = append(lines, s.restoreDropped(from, md))
					if len(ignored) > 0 {
						lines = append(lines, fmt.Sprintf("%s also carry settings and were left out: drop one at a time to restore its settings.", strings.Join(ignored, ", ")))
					}
				} else if from != "" && use == pngAsCondition {
					loaded = append(loadConditions([]string{from}), loaded...) // asked to use it as a condition image
				}
				if start != nil {
					if start.err != nil {
						lines = append(lines, start.err.Error())
					} else {
						s.remember("starting from " + start.c.Name)
						s.setStart(start.c)
						lines = append(lines, fmt.Sprintf("Starting from %s: paint over what to repaint, or generate to rework the whole image at strength %.2f.", start.c.Name, s.doc().Strength))
					}
				}
				if len(loras) > 0 {
					lines = append(lines, s.addLoRAs(loras))
				}
				lines = append(lines, s.addLoaded(loaded)...)
				lines = append(lines, refused...)
				defer s.upscales.AskAdd(ups)
				if len(lines) > 0 {
					s.say("%s", strings.Join(lines, "\n"))
				} else {
					s.quiet()
				}
			}
			if from == "" {
				finish(pngAsCondition)
				return
			}
			s.askRestore(from, finish)
		})
	}()
}

// pngUse is what a dropped or pasted PNG that carries settings is for.
type pngUse int

const (
	pngCancelled   pngUse = iota // Cancel or Esc: nothing changes
	pngRestore                   // its whole recipe, undoable
	pngAsStart                   // the picture as the start image
	pngAsCondition               // the picture as a condition image
)

// askRestore asks what a dropped or pasted PNG that carries settings is for: its whole recipe
// (restored, undoable), the start image, a condition image, or nothing (Cancel, Esc); answer
// gets the choice.
func (s *window) askRestore(path string, answer func(pngUse)) {
	text := widget.NewLabel(shortPath(path) + " carries the settings it was made with. Restore its whole recipe (prompt, settings, condition images, start image), start from the picture, or use it as a condition image?")
	text.Wrapping = fyne.TextWrapWord
	var d *dialog.CustomDialog
	choice := func(label string, use pngUse) *widget.Button {
		return widget.NewButton(label, func() {
			d.Hide()
			answer(use)
		})
	}
	restore := choice("Restore the recipe", pngRestore)
	restore.Importance = widget.HighImportance
	d = dialog.NewCustomWithoutButtons("Restore "+shortPath(path)+"?", text, s.win)
	d.SetButtons([]fyne.CanvasObject{choice("Cancel", pngCancelled), choice("Use as condition image", pngAsCondition), choice("Use as start image", pngAsStart), restore})
	d.Resize(fyne.NewSize(620, 0))
	s.show(d)
	s.restoreAsk = d
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
func (s *window) restoreDropped(path string, md *imagefile.Metadata) string {
	s.remember("restoring " + shortPath(path))
	note, _ := s.model.RestoreFile(md, s.loraDirs(path))
	if n := s.restoreStart(md.Settings); n != "" {
		note = strings.TrimSpace(note + "\n" + n)
	}
	s.draftRestored()
	s.showFile(path)
	msg := fmt.Sprintf("Settings restored from %s (to use it as a condition image instead, add it with Add images…).", shortPath(path))
	if note != "" {
		msg += "\n" + note
	}
	return msg
}

// restoreFromImage is Image → Restore from Image…: a PNG's whole recipe, undoable with ⌘Z.
func (s *window) restoreFromImage() {
	s.pickFile([]string{".png"}, s.deps.Settings.OutputFolder, func(path string) {
		md := settingsIn(path)
		if md == nil {
			s.say("%s holds no settings Easel or another tool wrote: there is nothing to restore. To start from it, use Work on an image.", shortPath(path))
			return
		}
		s.sayKind(noticeSuccess, "%s", s.restoreDropped(path, md))
	})
}
