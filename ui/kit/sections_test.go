package kit

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// An open section whose text grows is measured again: the column gives it the new height (a bare
// accordion keeps the height it first measured until something refreshes it).
func TestRemeasuredSectionsFollowTheirContent(t *testing.T) {
	test.NewTempApp(t)
	label := widget.NewLabel("one line")
	a := widget.NewAccordion(widget.NewAccordionItem("Section", label))
	a.Open(0)
	sections := Remeasured(a)
	before, oneLine := sections.MinSize(), label.MinSize().Height
	label.SetText(strings.Repeat("a line\n", 6) + "the last line")
	after := sections.MinSize()
	if want := before.Height + label.MinSize().Height - oneLine; after.Height != want {
		t.Errorf("with seven lines the sections are %.1f high, %.1f with one: want %.1f", after.Height, before.Height, want)
	}
	label.SetText("one line")
	if back := sections.MinSize(); back != before {
		t.Errorf("with one line again the sections measure %v, %v before", back, before)
	}
}
