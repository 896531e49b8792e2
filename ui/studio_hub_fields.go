package ui

import (
	"errors"
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
	f.url.SetPlaceHolder("tls://hub.local:4222")
	f.pin.SetPlaceHolder("the hub's pairing fingerprint (for tls://)")
	return f
}

// read is the fields' values, trimmed; an empty address is refused with where to find it.
func (f hubFields) read() (url, token, pin string, err error) {
	url = strings.TrimSpace(f.url.Text)
	if url == "" {
		return "", "", "", errors.New("give the studio hub's address (the Studio dialog of the Mac that shares it shows it)")
	}
	return url, strings.TrimSpace(f.token.Text), strings.TrimSpace(f.pin.Text), nil
}

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
