package upscale

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/upscalers"
)

// LanczosLabel is the choice of no learned upscaler.
const LanczosLabel = "Lanczos (no network)"

// Choice is the Settings dialog's upscaler field, one row: a selector of Lanczos and each usable
// file of the library, the chosen file's network beside it, and Files… listing every file of the
// folder with its network, scale and licence, and a plain word for those that are not upscalers
// Easel runs.
type Choice struct {
	Select *widget.Select
	About  *widget.Label // the chosen file's network and size
	Files  *widget.Button
	Box    *fyne.Container
	// Parent and Show are where Files… shows its list (Show: the window's question stack, so Esc
	// closes it; nil shows it directly over Parent).
	Parent fyne.Window
	Show   func(dialog.Dialog)

	all     []upscalers.Entry
	listErr error
	entries map[string]upscalers.Entry // the usable files, by name
	current string                     // the remembered name the dialog opened with
}

// NewChoice lists lib's files (nil: Lanczos only) with current (settings.Settings.Upscaler)
// selected; a remembered name whose file went away stays chosen, said as missing.
func NewChoice(lib *upscalers.Library, current string) *Choice {
	c := &Choice{entries: map[string]upscalers.Entry{}, current: current}
	options := []string{LanczosLabel}
	if lib != nil {
		c.all, c.listErr = lib.List()
		for _, e := range c.all {
			if e.Err == nil {
				options = append(options, e.Name)
				c.entries[e.Name] = e
			}
		}
	}
	selected := LanczosLabel
	if current != "" {
		selected = current
		if _, ok := c.entries[current]; !ok {
			selected = missingLabel(current)
			options = append(options, selected)
		}
	}
	c.About = widget.NewLabel("")
	c.About.Truncation = fyne.TextTruncateEllipsis
	c.Select = widget.NewSelect(options, func(string) { c.describe() })
	c.Select.SetSelected(selected)
	c.Files = widget.NewButton(c.filesLabel(), c.showFiles)
	c.describe()
	c.Box = container.NewBorder(nil, nil, nil, c.Files, container.NewGridWithColumns(2, c.Select, c.About))
	return c
}

// missingLabel is a remembered upscaler whose file is no longer in the folder.
func missingLabel(name string) string { return name + " (missing: Lanczos is used)" }

// Name is the chosen upscaler for settings.Settings.Upscaler: "" for Lanczos.
func (c *Choice) Name() string {
	switch sel := c.Select.Selected; {
	case sel == LanczosLabel || sel == "":
		return ""
	case sel == missingLabel(c.current):
		return c.current
	default:
		return sel
	}
}

// unusable counts the folder's files that are not upscalers Easel runs.
func (c *Choice) unusable() int { return len(c.all) - len(c.entries) }

// filesLabel is Files…, with how many files cannot be used when some cannot.
func (c *Choice) filesLabel() string {
	if n := c.unusable(); n > 0 {
		return fmt.Sprintf("Files (%d not usable)…", n)
	}
	return "Files…"
}

// describe shows the chosen file's network and size.
func (c *Choice) describe() {
	if e, ok := c.entries[c.Select.Selected]; ok {
		c.About.SetText(Describe(e))
		return
	}
	if c.Name() != "" {
		c.About.SetText("not in the upscalers folder")
		return
	}
	c.About.SetText("resizes without a network")
}

// FilesText is what Files… lists: each file of the folder, usable ones with their network and
// licence, the others with a plain word and why.
func (c *Choice) FilesText() string {
	var b strings.Builder
	if c.listErr != nil {
		fmt.Fprintf(&b, "%v\n\n", c.listErr)
	}
	if len(c.all) == 0 {
		b.WriteString("The upscalers folder has no .pth or .safetensors files yet. Drop one on the window to add it (Real-ESRGAN's files are BSD-3-Clause; community upscalers carry their authors' terms).")
	}
	for i, e := range c.all {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if e.Err != nil {
			fmt.Fprintf(&b, "%s — not usable: %v", e.Name, e.Err)
			continue
		}
		fmt.Fprintf(&b, "%s — %s\nLicence: %s", e.Name, Describe(e), e.Licence())
	}
	return b.String()
}

// showFiles shows FilesText in a dialog.
func (c *Choice) showFiles() {
	if c.Parent == nil {
		return
	}
	text := widget.NewLabel(c.FilesText())
	text.Wrapping = fyne.TextWrapWord
	scroll := container.NewVScroll(text)
	scroll.SetMinSize(fyne.NewSize(480, 240))
	d := dialog.NewCustom("Upscalers", "Close", scroll, c.Parent)
	if c.Show != nil {
		c.Show(d)
	} else {
		d.Show()
	}
}

// Describe is one line about an upscaler file: its network (with its scale) and its size on disk.
func Describe(e upscalers.Entry) string {
	if e.Config == nil {
		return e.Name
	}
	return fmt.Sprintf("%s (%.1f MB)", e.Config.String(), float64(e.Size)/1e6)
}
