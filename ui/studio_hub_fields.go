package ui

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"easel/app/studiogen"
)

// hubFields are what a Studio dialog section that reaches a hub asks for (Render on a studio,
// Lend this Mac): the hub's address, its token and its pairing fingerprint.
type hubFields struct {
	url, token, pin *widget.Entry
}

func newHubFields() hubFields {
	f := hubFields{url: widget.NewEntry(), token: widget.NewPasswordEntry(), pin: widget.NewEntry()}
	for _, e := range []*widget.Entry{f.url, f.token, f.pin} {
		e.Scroll = fyne.ScrollNone // a long address or fingerprint scrolls inside the field, not the dialog
	}
	f.url.SetPlaceHolder("as the sharing Mac shows it: tls://…:4222")
	f.pin.SetPlaceHolder("the hub's pairing fingerprint (for tls://)")
	return f
}

// read is the fields' values, trimmed; an empty address is refused with where to find it.
func (f hubFields) read() (url, token, pin string, err error) {
	url = strings.TrimSpace(f.url.Text)
	if url == "" {
		return "", "", "", errors.New("give the studio hub's address (the Studio dialog of the Mac that shares it shows it)")
	}
	token = strings.TrimSpace(f.token.Text)
	if n := len([]rune(token)); token != "" && n < minTokenLength {
		return "", "", "", fmt.Errorf("the token has %d characters; a studio's token has at least %d: copy it with Copy in the Studio dialog of the Mac that shares", n, minTokenLength)
	}
	return url, token, strings.TrimSpace(f.pin.Text), nil
}

// minTokenLength is the shortest token the window accepts for a studio: the hubs Easel makes use
// 32 hex characters; anything much shorter can be guessed.
const minTokenLength = 16

// items are the fields as form rows.
func (f hubFields) items() []*widget.FormItem {
	return []*widget.FormItem{
		widget.NewFormItem("Hub address", f.url),
		widget.NewFormItem("Token", f.token),
		widget.NewFormItem("Pairing fingerprint", f.pin),
	}
}

// errorLabel is a section's line for what went wrong.
func errorLabel() *widget.Label {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.DangerImportance
	return l
}

// studioModel is the model file in Settings and its fingerprint (the studio's jobs are matched
// by it); without one it refuses, saying why the studio needs it.
func (s *window) studioModel(why string) (model, fingerprint string, err error) {
	model = s.deps.Settings.Model
	if model == "" {
		return "", "", errors.New("choose a model in Settings first: " + why)
	}
	fingerprint, err = studiogen.ModelFingerprint(model)
	return model, fingerprint, err
}
