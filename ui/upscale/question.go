package upscale

import (
	"fmt"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/upscalers"
)

// AddQuestion asks whether to add the dropped upscaler e (what upscalers.Inspect found) to the
// upscalers folder: its network, scale, size and licence, and where it goes. answer hears the
// artist's yes or no (no for Esc, when shown through the window's question stack).
func AddQuestion(e upscalers.Entry, folder string, parent fyne.Window, answer func(add bool)) dialog.Dialog {
	text := widget.NewLabel(fmt.Sprintf("%s is a learned upscaler: %s.\nLicence: %s\n\nAdd it to the upscalers folder (%s)? It is copied there; choose it in Settings, Upscaler.",
		filepath.Base(e.Path), Describe(e), e.Licence(), folder))
	text.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("Add this upscaler?", "Add", "Not now", text, answer, parent)
	d.Resize(fyne.NewSize(520, 0))
	return d
}

// Refusal is the message for a dropped .pth or .safetensors file that is not an upscaler Easel
// runs (err is upscalers.Inspect's sentence): nothing was added, and what would work instead.
func Refusal(path string, err error) string {
	return fmt.Sprintf("%s was not added as an upscaler: %v. Easel runs RRDBNet (ESRGAN, Real-ESRGAN, 4x-UltraSharp, NMKD Superscale) and SRVGGNetCompact (realesr-general) files.",
		filepath.Base(path), err)
}

// Added is the message once an upscaler file is in the folder.
func Added(e upscalers.Entry) string {
	return fmt.Sprintf("Added the upscaler %s (%s). Choose it in Settings, Upscaler; the gallery's right-click Upscale offers it.", e.Name, Describe(e))
}
