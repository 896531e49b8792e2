package ui

import (
	"runtime"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/ui/model"
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

// noticeKind is what a notice under Generate is (ui/model): its colour says it before its words do.
type noticeKind = model.NoticeKind

const (
	noticeInfo    = model.NoticeInfo
	noticeSuccess = model.NoticeSuccess
	noticeWarning = model.NoticeWarning
	noticeError   = model.NoticeError
)

var noticeImportance = [...]widget.Importance{
	noticeInfo:    widget.MediumImportance,
	noticeSuccess: widget.SuccessImportance,
	noticeWarning: widget.WarningImportance,
	noticeError:   widget.DangerImportance,
}

// noticeLines is how many lines of a notice show at once: a longer one scrolls in its place
// instead of pushing Generate up the column.
const noticeLines = 4

// sayKind shows a notice of a kind in the window's one place for notices (ui/model's).
func (s *window) sayKind(kind noticeKind, format string, args ...any) {
	s.model.Say(kind, format, args...)
}

// sayAbout shows a notice about job id: it goes when the job ends, unless it is an error.
func (s *window) sayAbout(id jobs.ID, kind noticeKind, format string, args ...any) {
	s.model.SayAbout(id, kind, format, args...)
}

// newNoticeView makes the notice's label in its fixed-height scroll, shown while there is a
// notice and following the model's.
func (s *window) newNoticeView() {
	s.message = widget.NewLabel("")
	s.message.Wrapping = fyne.TextWrapWord
	s.message.Importance = widget.WarningImportance
	s.noticeBox = container.NewVScroll(s.message)
	s.noticeBox.SetMinSize(fyne.NewSize(0, noticeLines*theme.TextSize()*1.3+2*theme.InnerPadding()))
	s.noticeBox.Hide()
	s.model.Observe(model.NoticeChanged, func(model.Change) { s.showNotice() })
}

// showNotice shows the model's notice (none: the place is hidden).
func (s *window) showNotice() {
	n := s.model.Notice()
	s.message.Importance = noticeImportance[n.Kind]
	s.message.SetText(n.Text)
	if n.Text == "" {
		s.message.Hide()
		s.noticeBox.Hide()
		return
	}
	s.message.Show()
	s.noticeBox.Show()
	s.noticeBox.ScrollToTop()
}
