package ui

import (
	"strings"

	"easel/app/compose"
	"easel/app/history"
)

// undoStep is one thing ⌘Z takes back: a recipe replaced (restore, Use prompt, removing the start
// image) or an image moved to the Trash.
type undoStep struct {
	what string // what was done ("Use all from easel-7.png")
	seq  int    // when, in the window's edit count (against mask strokes)
	undo func() error
}

// maxUndo is how many steps ⌘Z goes back through.
const maxUndo = 20

// pushUndo records a step ⌘Z can take back.
func (s *window) pushUndo(what string, undo func() error) {
	s.edits++
	s.undos = append(s.undos, undoStep{what: what, seq: s.edits, undo: undo})
	if len(s.undos) > maxUndo {
		s.undos = s.undos[1:]
	}
}

// remember keeps the recipe as it is — the draft and the start image with its mask, extension and
// settings — before what replaces it, for ⌘Z.
func (s *window) remember(what string) {
	d := s.draft()
	d.Conditions = append([]compose.Condition(nil), d.Conditions...)
	d.LoRAs = append([]compose.LoRA(nil), d.LoRAs...)
	d.LoRADirs = append([]string(nil), d.LoRADirs...)
	doc := s.doc()
	s.pushUndo(what, func() error {
		s.model.ReplaceDraft(d)
		s.model.ReplaceCanvas(doc)
		s.work.Reload()
		s.draftRestored()
		return nil
	})
}

// undo is ⌘Z outside text fields: the latest of a mask stroke and the steps above is taken back.
func (s *window) undo() {
	n := len(s.undos)
	maskFirst := s.doc().Start != nil && s.doc().Start.Mask.CanUndo() && (n == 0 || s.maskEdits > s.undos[n-1].seq)
	if maskFirst || n == 0 {
		s.work.UndoMask()
		return
	}
	st := s.undos[n-1]
	s.undos = s.undos[:n-1]
	if err := st.undo(); err != nil {
		s.sayKind(noticeError, "%v", err)
		return
	}
	s.sayKind(noticeSuccess, "Undone: %s.", st.what)
}

// useAll restores the whole recipe an image was made with (⌘Z brings back the one before).
func (s *window) useAll(e history.Entry) {
	if e.Settings != nil {
		s.remember("Use all from " + shortPath(e.Path))
	}
	s.restore(e)
}

// usePrompt takes only an image's prompt, negative prompt and transparency.
func (s *window) usePrompt(e history.Entry) {
	if e.Settings == nil {
		s.say("%s has no Easel settings in it (made by another tool?): there is no prompt to use.", shortPath(e.Path))
		return
	}
	s.remember("Use prompt from " + shortPath(e.Path))
	var d compose.Draft
	d.Restore(e.Settings)
	s.model.SetPrompt(d.Prompt)
	s.model.SetNegative(d.Negative)
	s.model.SetTransparent(d.Transparent)
	s.draftChanged()
	s.say("Prompt of %s in use (%s undoes it).", shortPath(e.Path), undoKeyName())
}

// useSeed takes only an image's seed (fixed from now on) and its variation.
func (s *window) useSeed(e history.Entry) {
	if e.Settings == nil {
		s.say("%s has no Easel settings in it (made by another tool?): there is no seed to use.", shortPath(e.Path))
		return
	}
	s.remember("Use seed from " + shortPath(e.Path))
	s.model.FixSeed(e.Settings.Seed, e.Settings.VariationSeed, e.Settings.VariationStrength)
	s.draftChanged()
	s.say("Seed %d of %s in use (%s undoes it).", e.Settings.Seed, shortPath(e.Path), undoKeyName())
}

// varyEntry makes a batch of variations around a history image: its recipe and seed, variation
// seeds from a random one at a small strength, as the batch sheet's Vary does. The draft stays.
func (s *window) varyEntry(e history.Entry) {
	if e.Settings == nil {
		s.say("%s has no Easel settings in it: it cannot be varied.", shortPath(e.Path))
		return
	}
	d := s.draft()
	d.LoRADirs = s.loraDirs(e.Path)
	if note := d.Restore(e.Settings); note != "" && strings.Contains(note, "add them again") {
		s.say("%s cannot be varied as it was made: %s", shortPath(e.Path), note)
		return
	}
	d.VariationSeed, d.VariationStrength, d.Count = randomSeed(), 0.2, max(s.draft().Count, 4)
	if s.submit(d, d.Seed) {
		s.say("Vary: %d variations of %s (seed %d) at strength 0.20.", d.Count, shortPath(e.Path), d.Seed)
	}
}

// trashEntry moves a history image to the Trash; ⌘Z puts it back.
func (s *window) trashEntry(e history.Entry) {
	t, err := s.deps.Desktop.Trash(e.Path)
	if err != nil {
		s.sayKind(noticeError, "%v", err)
		return
	}
	s.history.Remove(e.Path)
	if s.actions.Shown() == e.Path {
		s.setShownFile("")
	}
	s.pushUndo("moving "+shortPath(e.Path)+" to the Trash", func() error {
		if err := t.Restore(); err != nil {
			return err
		}
		s.history.PutBack(e)
		return nil
	})
	s.sayKind(noticeInfo, "%s moved to the Trash (%s puts it back).", shortPath(e.Path), undoKeyName())
}

func undoKeyName() string {
	if isMac {
		return "⌘Z"
	}
	return "Ctrl+Z"
}
