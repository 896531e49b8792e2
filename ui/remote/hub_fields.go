package remote

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// HubFields are what a Studio dialog section that reaches a hub asks for (Render on a studio,
// Lend this Mac): the hub's address, its token and its pairing fingerprint.
type HubFields struct {
	URL, Token, Pin *widget.Entry
}

// NewHubFields are empty fields with their placeholders.
func NewHubFields() HubFields {
	f := HubFields{URL: widget.NewEntry(), Token: widget.NewPasswordEntry(), Pin: widget.NewEntry()}
	for _, e := range []*widget.Entry{f.URL, f.Token, f.Pin} {
		e.Scroll = fyne.ScrollNone // a long address or fingerprint scrolls inside the field, not the dialog
	}
	f.URL.SetPlaceHolder("as the sharing Mac shows it: tls://…:4222")
	f.Pin.SetPlaceHolder("the hub's pairing fingerprint (for tls://)")
	return f
}

// Read is the fields' values, trimmed; an empty address is refused with where to find it.
func (f HubFields) Read() (url, token, pin string, err error) {
	url = strings.TrimSpace(f.URL.Text)
	if url == "" {
		return "", "", "", errors.New("give the studio hub's address (the Studio dialog of the Mac that shares it shows it)")
	}
	token = strings.TrimSpace(f.Token.Text)
	if n := len([]rune(token)); token != "" && n < MinTokenLength {
		return "", "", "", fmt.Errorf("the token has %d characters; a studio's token has at least %d: copy it with Copy in the Studio dialog of the Mac that shares", n, MinTokenLength)
	}
	return url, token, strings.TrimSpace(f.Pin.Text), nil
}

// MinTokenLength is the shortest token the window accepts for a studio: the hubs Easel makes use
// 32 hex characters; anything much shorter can be guessed.
const MinTokenLength = 16

// Items are the fields as form rows.
func (f HubFields) Items() []*widget.FormItem {
	return []*widget.FormItem{
		widget.NewFormItem("Hub address", f.URL),
		widget.NewFormItem("Token", f.Token),
		widget.NewFormItem("Pairing fingerprint", f.Pin),
	}
}

// ErrorLabel is a section's line for what went wrong.
func ErrorLabel() *widget.Label {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.DangerImportance
	return l
}
