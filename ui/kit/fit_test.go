package kit

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

// A text that fits stays whole; a longer one ends in an ellipsis and fits; nothing fits in no room.
func TestFitTextEndsInAnEllipsis(t *testing.T) {
	test.NewTempApp(t)
	const size = 12
	whole := "seed 4294967295"
	width := fyne.MeasureText(whole, size, fyne.TextStyle{}).Width
	if got := FitText(whole, size, width); got != whole {
		t.Errorf("a text that fits became %q", got)
	}
	long := "seed 18446744073709551615"
	got := FitText(long, size, width)
	if !strings.HasSuffix(got, "…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("a long text became %q, want its start and an ellipsis", got)
	}
	if w := fyne.MeasureText(got, size, fyne.TextStyle{}).Width; w > width {
		t.Errorf("%q is %.1f wide, more than %.1f", got, w, width)
	}
	if got := FitText(long, size, 0); got != "" {
		t.Errorf("with no room the text became %q", got)
	}
}
