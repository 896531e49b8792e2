package kit

import "fyne.io/fyne/v2"

// FitText shortens text with an ellipsis until it fits width at size points, so a caption drawn
// by hand (a bar's, a cell's) never draws past its place; text that fits is returned whole.
func FitText(text string, size, width float32) string {
	if fyne.MeasureText(text, size, fyne.TextStyle{}).Width <= width {
		return text
	}
	r := []rune(text)
	for len(r) > 0 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; fyne.MeasureText(t, size, fyne.TextStyle{}).Width <= width {
			return t
		}
	}
	return ""
}
