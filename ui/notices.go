package ui

import (
	"fmt"
	"runtime"

	"fyne.io/fyne/v2/widget"
)

// isMac is whether the window runs on macOS: only there does it say "Mac", "Finder" or "⌘".
var isMac = runtime.GOOS == "darwin"

// thisMachine is how the window names the computer it runs on.
func thisMachine() string {
	if isMac {
		return "this Mac"
	}
	return "this computer"
}

// noticeKind is what a notice under Generate is: its colour says it before its words do.
type noticeKind int

const (
	noticeInfo noticeKind = iota
	noticeSuccess
	noticeWarning
	noticeError
)

var noticeImportance = [...]widget.Importance{
	noticeInfo:    widget.MediumImportance,
	noticeSuccess: widget.SuccessImportance,
	noticeWarning: widget.WarningImportance,
	noticeError:   widget.DangerImportance,
}

// sayKind shows a notice of a kind under the controls.
func (s *window) sayKind(kind noticeKind, format string, args ...any) {
	s.message.Importance = noticeImportance[kind]
	s.message.SetText(fmt.Sprintf(format, args...))
	s.message.Show()
	s.noticeKind = kind
}
