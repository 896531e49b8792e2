package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"easel/app/jobs"
	"easel/engine/convert"
	"easel/engine/imageio"
	"easel/engine/pipeline"
	"easel/internal/generatecase"
	"easel/internal/tinysnapshot"
)

// Expand, Describe, Use as prompt, Undo, Stop and Check in the window, on the untied tiny model
// (its random weights write words; the tied one writes only whitespace).
func TestPromptHelpExpandDescribeAndCheck(t *testing.T) {
	model := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	h := newHarnessWith(t, 0, func(_ *harness, d *Deps) { d.Settings.Model = model })
	h.patience = 3 * time.Minute
	p := h.s.help
	idle := func() bool { return !p.Writing() }

	// Expand streams into a suggestion; Use as prompt takes it; Undo restores the idea.
	h.s.prompt.Text.SetText("a lighthouse")
	test.Tap(p.Expand)
	if p.Stop.Hidden || !p.Expand.Disabled() {
		t.Error("while writing, Stop is not offered or Expand is not disabled")
	}
	if title := h.s.memory.Title.Text; !strings.Contains(title, "writing (Expand)") {
		t.Errorf("while writing, the memory panel says %q, want the writing's memory", title)
	}
	if text := h.s.strip.Memory.Text(); !strings.HasPrefix(text, "Writing ") {
		t.Errorf("while writing, the strip says %q, want the writing's peak", text)
	}
	h.pump("Expand to finish", idle)
	if title := h.s.memory.Title.Text; !strings.Contains(title, "predicted") {
		t.Errorf("after writing, the memory panel says %q, want the draft's prediction back", title)
	}
	got := strings.TrimSpace(p.Suggestion.Text)
	if got == "" || p.SuggestionBox.Hidden || !strings.Contains(p.Status.Text, "tokens") {
		t.Fatalf("after Expand: suggestion %q (shown %v), status %q", got, !p.SuggestionBox.Hidden, p.Status.Text)
	}
	test.Tap(p.Accept)
	if h.s.draft().Prompt != got || p.Undo.Hidden {
		t.Errorf("Use as prompt: prompt %q, want the suggestion %q (undo offered: %v)", h.s.draft().Prompt, got, !p.Undo.Hidden)
	}
	test.Tap(p.Undo)
	if h.s.draft().Prompt != "a lighthouse" {
		t.Errorf("Undo: prompt %q, want the idea back", h.s.draft().Prompt)
	}

	// Stop leaves the prompt as it was. The writer is held so the stop comes before any token.
	release := p.HoldWriter()
	test.Tap(p.Expand)
	test.Tap(p.Stop)
	release()
	h.pump("the stopped Expand to end", idle)
	if h.s.draft().Prompt != "a lighthouse" || !strings.Contains(p.Status.Text, "stopped") || !p.SuggestionBox.Hidden {
		t.Errorf("after Stop: prompt %q, status %q, suggestion shown %v", h.s.draft().Prompt, p.Status.Text, !p.SuggestionBox.Hidden)
	}

	// Describe a condition image, then use it as the prompt.
	path := generatecase.PicturePNG(t, 96, 64)
	img, err := imageio.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	h.s.addLoaded([]loadedCondition{{c: mustCondition(t, path)}})
	p.Source.SetSelected("Condition image 1")
	test.Tap(p.Describe)
	h.pump("Describe to finish", idle)
	desc := strings.TrimSpace(p.Suggestion.Text)
	if desc == "" || !strings.HasPrefix(p.Status.Text, "Describe:") {
		t.Fatalf("after Describe: suggestion %q, status %q", desc, p.Status.Text)
	}
	test.Tap(p.Accept)
	if h.s.draft().Prompt != desc {
		t.Errorf("Use as prompt after Describe: prompt %q, want %q", h.s.draft().Prompt, desc)
	}

	// A finished picture is not checked while Check is off in Settings.
	done := jobs.Job{ID: 3, State: jobs.Done, Request: pipeline.Request{Prompt: "a red lighthouse, two boats"}, Result: &pipeline.Result{Image: img}}
	p.Finished(done)
	if p.Writing() || !p.Checks.Hidden {
		t.Fatal("a finished picture was checked with Check images off in Settings")
	}
	// Check, when on in Settings, lists a verdict per element of the finished picture's prompt;
	// a picture finished while one is being checked (a batch) is checked after it.
	on := h.s.deps.Settings
	on.CheckImages = true
	h.s.settingsSaved(on)
	p.Finished(jobs.Job{ID: 2, State: jobs.Done, Request: pipeline.Request{Prompt: "a dog"}, Result: &pipeline.Result{Image: img}})
	p.Finished(done)
	if p.Waiting() != 1 {
		t.Errorf("%d Checks wait behind the first, want 1", p.Waiting())
	}
	h.pump("both Checks to finish", func() bool { return idle() && p.Waiting() == 0 })
	lines := strings.Split(p.Checks.Text, "\n")
	if p.Checks.Hidden || len(lines) != 3 || lines[0] != "Check of job 3's image:" || !strings.HasSuffix(lines[1], " a red lighthouse") || !strings.HasSuffix(lines[2], " two boats") {
		t.Errorf("Check lines %q (shown %v)", p.Checks.Text, !p.Checks.Hidden)
	}
	lines = lines[1:]
	// On demand: the picture shown, against the prompt as it is now.
	h.s.prompt.Text.SetText("a red lighthouse, two boats, a dog")
	test.Tap(p.CheckNow)
	h.pump("Check picture to finish", idle)
	if n := len(strings.Split(p.Checks.Text, "\n")); n != 4 || !strings.HasSuffix(p.Checks.Text, " a dog") {
		t.Errorf("Check picture: %q, want a heading and three lines ending with the dog", p.Checks.Text)
	}
	p.SuggestionBox.Show()
	if m := h.w.Content().MinSize(); m.Width > 1400 || m.Height > 860 {
		t.Errorf("with the suggestion and the checks shown the window's minimum size is %v, more than the 1400×860 it opens at", m)
	}
	for _, l := range lines {
		if m := strings.SplitN(l, " ", 2)[0]; m != "✓" && m != "✗" && m != "?" {
			t.Errorf("Check line %q does not start with ✓, ✗ or ?", l)
		}
	}
}

// A writing that does not fit the memory budget is refused before it starts, saying what it
// needs; the prompt stays as it was.
func TestPromptHelpRefusesWhatDoesNotFit(t *testing.T) {
	h := newHarness(t, 4e9)
	p := h.s.help
	h.s.prompt.Text.SetText("a lighthouse")
	test.Tap(p.Expand)
	if p.Writing() || !p.SuggestionBox.Hidden || h.s.draft().Prompt != "a lighthouse" {
		t.Errorf("Expand started on a 4 GB budget (running %v, suggestion shown %v)", p.Writing(), !p.SuggestionBox.Hidden)
	}
	if msg := h.s.message.Text; !strings.Contains(msg, "Expand needs about") || !strings.Contains(msg, "GB of memory") {
		t.Errorf("message %q", msg)
	}
}
