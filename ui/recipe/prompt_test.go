package recipe

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/settings"

	"easel/ui/model"
)

func newModel() *model.Window {
	return model.New(compose.NewDraft(settings.Settings{Width: 1024, Height: 1024, Steps: 30, CFG: 4}))
}

// TestPromptPanelFollowsTheDraft: the panel built alone sets the draft's prompts as they are
// typed, and shows the draft as other regions change it (a restored prompt, CFG turned off and on
// enabling the negative prompt, the transparent toggle) without echoing back.
func TestPromptPanelFollowsTheDraft(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	m.SetPrompt("a lighthouse")
	told := 0
	m.Observe(model.DraftChanged, func(model.Change) { told++ })
	p := NewPrompt(m, Keys{})
	if p.Text.Text != "a lighthouse" || p.Negative.Disabled() {
		t.Fatalf("built over the draft: prompt %q, negative disabled %v (CFG 4)", p.Text.Text, p.Negative.Disabled())
	}
	test.Type(p.Text, " at dusk")
	if d := m.Draft(); d.Prompt != p.Text.Text || !strings.Contains(d.Prompt, " at dusk") || !strings.Contains(d.Prompt, "a lighthouse") {
		t.Errorf("typed: the draft's prompt is %q, the field %q", d.Prompt, p.Text.Text)
	}
	typed := told
	test.Type(p.Negative, "fog")
	if m.Draft().Negative != "fog" || told != typed+3 {
		t.Errorf("negative %q, told %d times for 3 keys", m.Draft().Negative, told-typed)
	}
	m.SetCFG(1)
	if !p.Negative.Disabled() {
		t.Error("CFG off left the negative prompt enabled")
	}
	m.SetCFG(3)
	if p.Negative.Disabled() {
		t.Error("CFG on left the negative prompt disabled")
	}
	before := told
	m.SetPrompt("an owl") // a restore, an undo: another region's change
	if p.Text.Text != "an owl" || told != before+1 {
		t.Errorf("the field shows %q; the change told %d times (the field echoed it back?)", p.Text.Text, told-before)
	}
	test.Tap(p.Transparent)
	if !m.Draft().Transparent || !p.tip.Visible() {
		t.Error("the transparent toggle did not set the draft or show its wording")
	}
	m.SetTransparent(false)
	if p.Transparent.Checked || p.tip.Visible() {
		t.Error("the draft's transparency turned off left the toggle on")
	}
}

// TestEntriesAnswerTheWindowsKeys: Escape goes to the window, a paste holding an image is taken
// as one (no text pasted), any other paste is text; Tab is not typed into the prompt.
func TestEntriesAnswerTheWindowsKeys(t *testing.T) {
	a := test.NewTempApp(t)
	escapes, images := 0, 0
	image := false
	keys := Keys{Escape: func() { escapes++ }, PasteImage: func(fyne.Clipboard) bool { images++; return image }}
	e, pe := NewEntry(keys), NewPromptEntry(keys)
	blurred := false
	e.OnBlur = func() { blurred = true }
	w := a.NewWindow("keys")
	w.SetContent(pe)
	e.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	pe.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if escapes != 2 {
		t.Errorf("Escape reached the window %d times, want 2", escapes)
	}
	cb := a.Clipboard()
	cb.SetContent("pasted words")
	image = true
	pe.TypedShortcut(&fyne.ShortcutPaste{Clipboard: cb})
	if pe.Text != "" || images != 1 {
		t.Errorf("an image paste typed %q", pe.Text)
	}
	image = false
	pe.TypedShortcut(&fyne.ShortcutPaste{Clipboard: cb})
	if pe.Text != "pasted words" {
		t.Errorf("a text paste typed %q", pe.Text)
	}
	if pe.AcceptsTab() {
		t.Error("the prompt takes Tab")
	}
	e.FocusLost()
	if !blurred {
		t.Error("OnBlur did not run")
	}
}
