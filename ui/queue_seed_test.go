package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// A queued job with a long prompt shows its whole seed at 1280 wide: the prompt gives way (an
// ellipsis), the seed part does not.
func TestQueueRowShowsTheWholeSeed(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.options.SeedMode.SetSelected("Fixed")
	s.options.SeedEntry.SetText("4294967295")
	s.prompt.Text.SetText(strings.Repeat("a lighthouse on a basalt cliff at dusk, gulls over the surf ", 3))
	test.Tap(s.generateBtn)
	<-h.gen.started
	test.Tap(s.generateBtn) // a second, queued
	h.pump("the two jobs listed", func() bool { return strings.Count(queueText(h), "seed 4294967295") == 2 })
	h.w.Resize(screen1280)
	relayout(h.w.Content())
	var seeds []*widget.Label
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok && strings.HasPrefix(l.Text, "seed ") {
			seeds = append(seeds, l)
		}
		if c, ok := o.(*fyne.Container); ok {
			for _, k := range c.Objects {
				walk(k)
			}
		}
	}
	walk(s.queueList.Rows)
	if len(seeds) != 2 {
		t.Fatalf("%d queue rows show a seed, want 2:\n%s", len(seeds), queueText(h))
	}
	for _, l := range seeds {
		if l.Text != "seed 4294967295" || l.Truncation != fyne.TextTruncateOff || l.Size().Width+layoutSlack < l.MinSize().Width {
			t.Errorf("the queue row's seed %q is %.0f wide, needs %.0f", l.Text, l.Size().Width, l.MinSize().Width)
		}
	}
}
