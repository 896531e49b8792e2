package ui

import (
	"easel/app/memplan"
	"easel/app/settings"
)

// setBackend records the backend choice (persisted when there is a store).
func (s *window) setBackend(b settings.Backend) {
	s.model.SetBackend(b)
	s.deps.Settings.Backend = b
	if g, ok := s.deps.Generator.(interface{ SetBackend(settings.Backend) }); ok {
		g.SetBackend(b) // from the next job on
	}
	s.persist()
	if s.deps.BudgetFor != nil {
		s.deps.Budget = s.deps.BudgetFor(b)
		s.draftChanged()
	}
	if b == settings.BackendMetal && !hasMetal {
		s.say("Metal is only on Apple silicon Macs: on this machine jobs will fail until the backend is Auto or CPU.")
	}
}

// pickModel chooses the .cmf model file.
func (s *window) pickModel() { s.pickFile([]string{".cmf"}, "", s.useModel) }

// useModel switches to a model file: its geometry drives the memory prediction at once, and the
// generator opens it for the next job.
func (s *window) useModel(path string) {
	g, err := memplan.GeometryOf(path)
	if err != nil {
		s.say("%s cannot be used: %v", shortPath(path), err)
		return
	}
	s.model.SetModel(path)
	s.deps.Settings.Model = path
	s.deps.Geometry = g
	if mg, ok := s.deps.Generator.(interface{ SetPath(string) }); ok {
		mg.SetPath(path)
	}
	if s.deps.Calibrator != nil {
		s.deps.Calibrator.Start(path)
	}
	s.persist()
	s.say("Model set to %s; it opens at the next Generate.", shortPath(path))
	s.draftChanged()
}

// persist saves the settings when the window has a store.
func (s *window) persist() {
	if s.deps.Store == nil {
		return
	}
	if err := s.deps.Store.Save(s.deps.Settings); err != nil {
		s.say("Settings were not saved: %v", err)
	}
}

// followedSize is the output's size while it follows the (extended) start image (ok false: it
// does not follow it, or the size cannot be made).
func (s *window) followedSize() (w, h int, ok bool) {
	if !s.doc().Follows() {
		return 0, 0, false
	}
	w, h, err := s.outputWithExtend(s.doc().Extend)
	return w, h, err == nil
}

// copyText puts text on the clipboard (false: there is no clipboard).
func (s *window) copyText(text string) bool {
	cb := s.clipboard()
	if cb == nil {
		return false
	}
	cb.SetContent(text)
	return true
}
