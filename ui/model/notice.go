package model

import "fmt"

// NoticeKind is what a notice is: its colour says it before its words do.
type NoticeKind int

// The kinds of notice.
const (
	NoticeInfo NoticeKind = iota
	NoticeSuccess
	NoticeWarning
	NoticeError
)

// Notice is the one line (or few) the window says in its one place for notices. Job is the job it
// is about (0: none): such a notice ends with its job, unless it is an error.
type Notice struct {
	Kind NoticeKind
	Text string
	Job  JobID
}

// Notice is the notice shown now (Text "" for none).
func (w *Window) Notice() Notice { return w.notice }

// Say shows a notice that stays until the next one or the artist's next action.
func (w *Window) Say(kind NoticeKind, format string, args ...any) {
	w.notice = Notice{Kind: kind, Text: fmt.Sprintf(format, args...)}
	w.changed(NoticeChanged)
}

// SayAbout shows a notice about job id: it goes when the job ends (an error stays to be read).
func (w *Window) SayAbout(id JobID, kind NoticeKind, format string, args ...any) {
	w.notice = Notice{Kind: kind, Text: fmt.Sprintf(format, args...), Job: id}
	w.changed(NoticeChanged)
}

// Quiet hides the notice (the artist's next action succeeded).
func (w *Window) Quiet() {
	if w.notice == (Notice{}) {
		return
	}
	w.notice = Notice{}
	w.changed(NoticeChanged)
}
