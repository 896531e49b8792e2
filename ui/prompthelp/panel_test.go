package prompthelp

import (
	"image"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/memplan"
	"easel/app/settings"
	"easel/engine/convert"
	"easel/internal/generatecase"
	"easel/internal/tinysnapshot"
	"easel/ui/model"
)

// alone is the panel built on its own: a window model, a Host whose UI calls the test runs, and
// what the Host heard.
type alone struct {
	t       *testing.T
	m       *model.Window
	p       *Panel
	calls   chan func()
	writing []string // the memory panel's writings shown
	ended   int      // how often the draft's prediction came back
	caption string
	shown   Shown
}

func newAlone(t *testing.T, modelPath string, budget int64) *alone {
	test.NewTempApp(t)
	set := settings.Defaults()
	set.Model = modelPath
	a := &alone{t: t, m: model.New(compose.NewDraft(set)), calls: make(chan func(), 1024)}
	a.p = New(a.m, Host{
		Settings:     func() settings.Settings { return set },
		Memory:       func() (memplan.Geometry, int64) { return memplan.PublishedGeometry(), budget },
		Shown:        func() Shown { return a.shown },
		SetCaption:   func(text string) { a.caption = text },
		ShowWriting:  func(what string, _ memplan.WritingPrediction) { a.writing = append(a.writing, what) },
		WritingEnded: func() { a.ended++ },
		Do:           func(f func()) { a.calls <- f },
	})
	return a
}

// pump runs the panel's UI calls until cond holds.
func (a *alone) pump(what string, cond func() bool) {
	a.t.Helper()
	deadline := time.After(3 * time.Minute)
	for !cond() {
		select {
		case f := <-a.calls:
			f()
		case <-deadline:
			a.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Expand on the untied tiny model (its random weights write words) streams into the suggestion
// while the memory panel shows the writing; Use as prompt changes the model's prompt, Undo puts
// the idea back, and a Check of the picture on the canvas sums itself up in the caption.
func TestPanelAloneExpandUseUndoAndCheck(t *testing.T) {
	path := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	a := newAlone(t, path, 0)
	p := a.p
	a.m.SetPrompt("a lighthouse")
	test.Tap(p.Expand)
	if !p.Writing() || p.Stop.Hidden || !p.Expand.Disabled() {
		t.Fatal("Expand did not start, or Stop is not offered")
	}
	a.pump("Expand to finish", func() bool { return !p.Writing() })
	got := strings.TrimSpace(p.Suggestion.Text)
	if got == "" || p.SuggestionBox.Hidden || !strings.HasPrefix(p.Status.Text, "Expand: ") {
		t.Fatalf("after Expand: suggestion %q (shown %v), status %q", got, !p.SuggestionBox.Hidden, p.Status.Text)
	}
	if len(a.writing) != 1 || a.writing[0] != "Expand" || a.ended != 1 {
		t.Errorf("the memory panel heard writings %q and %d ends, want [Expand] and 1", a.writing, a.ended)
	}
	test.Tap(p.Accept)
	if a.m.Draft().Prompt != got || p.Undo.Hidden {
		t.Errorf("Use as prompt: the model's prompt is %q, want %q (Undo shown %v)", a.m.Draft().Prompt, got, !p.Undo.Hidden)
	}
	test.Tap(p.Undo)
	if a.m.Draft().Prompt != "a lighthouse" {
		t.Errorf("Undo: the model's prompt is %q, want the idea back", a.m.Draft().Prompt)
	}

	// Check the picture of job 4, shown on the canvas: the lines name it, the caption sums up.
	img := image.NewNRGBA(image.Rect(0, 0, 64, 48))
	a.shown = Shown{Job: 4, Final: true}
	p.checkPicture(img, "a heron, two reeds", "job 4's image", Key{Job: 4})
	a.pump("Check to finish", func() bool { return !p.Writing() })
	lines := strings.Split(p.Checks.Text, "\n")
	if p.Checks.Hidden || len(lines) != 3 || lines[0] != "Check of job 4's image:" || !strings.HasSuffix(lines[2], " two reeds") {
		t.Errorf("Check lines %q (shown %v)", p.Checks.Text, !p.Checks.Hidden)
	}
	if !strings.HasPrefix(a.caption, "Check: ") || !strings.HasSuffix(a.caption, " two reeds") {
		t.Errorf("the caption %q does not sum up the Check of the picture shown", a.caption)
	}
}

// A writing that does not fit the budget is refused before it starts, saying what it needs; the
// prompt stays; Describe's sources follow the model's condition images; a batch image not yet
// finished offers neither Describe nor Check.
func TestPanelAloneRefusesAndFollowsTheModel(t *testing.T) {
	a := newAlone(t, "", 4e9)
	p := a.p
	a.m.SetPrompt("a lighthouse")
	test.Tap(p.Expand)
	if p.Writing() || !p.SuggestionBox.Hidden || a.m.Draft().Prompt != "a lighthouse" || len(a.writing) != 0 {
		t.Errorf("Expand started on a 4 GB budget (running %v, suggestion shown %v)", p.Writing(), !p.SuggestionBox.Hidden)
	}
	if n := a.m.Notice().Text; !strings.Contains(n, "Expand needs about") || !strings.Contains(n, "GB of memory") {
		t.Errorf("notice %q", n)
	}

	if len(p.Source.Options) != 1 || p.Source.Selected != SourceShown {
		t.Fatalf("sources %q (selected %q), want only the picture shown", p.Source.Options, p.Source.Selected)
	}
	c, err := compose.LoadCondition(generatecase.PicturePNG(t, 96, 64))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.m.AddCondition(c); err != nil {
		t.Fatal(err)
	}
	if len(p.Source.Options) != 2 || p.Source.Options[1] != "Condition image 1" {
		t.Errorf("after adding a condition image the sources are %q", p.Source.Options)
	}
	a.m.RemoveCondition(0)
	if len(p.Source.Options) != 1 {
		t.Errorf("after removing it the sources are %q", p.Source.Options)
	}

	m := p.ImageMenu(nil, "a heron", "batch image 1", Key{Path: "x.png"})
	for _, it := range m.Items {
		if !it.Disabled {
			t.Errorf("%q is offered for a batch image not yet finished", it.Label)
		}
	}
	m = p.ImageMenu(image.NewNRGBA(image.Rect(0, 0, 8, 8)), "", "batch image 1", Key{Path: "x.png"})
	if m.Items[0].Disabled || !m.Items[1].Disabled {
		t.Error("a finished image without a prompt: want Describe on and Check off")
	}
}
