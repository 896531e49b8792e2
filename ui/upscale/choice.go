package upscale

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/upscalers"
)

// LanczosLabel is the choice of no learned upscaler.
const LanczosLabel = "Lanczos (no network)"

// Choice is the Settings dialog's upscaler field: a selector of Lanczos and each usable file of
// the library, with the chosen file's network, scale and licence under it and a plain word for
// the files that are not upscalers Easel runs.
type Choice struct {
	Select  *widget.Select
	About   *widget.Label // the chosen file's network and scale
	Licence *widget.Label // what is known of its terms
	Unused  *widget.Label // the files that cannot be used, in a word each
	Box     *fyne.Container

	entries map[string]upscalers.Entry // by option label
	current string                     // the remembered name the dialog opened with
}

// NewChoice lists lib's files (nil: Lanczos only) with current (settings.Settings.Upscaler)
// selected; a remembered name whose file went away stays chosen, said as missing.
func NewChoice(lib *upscalers.Library, current string) *Choice {
	c := &Choice{entries: map[string]upscalers.Entry{}, current: current}
	options := []string{LanczosLabel}
	var unusable []string
	if lib != nil {
		all, err := lib.List()
		if err != nil {
			unusable = append(unusable, err.Error())
		}
		for _, e := range all {
			if e.Err != nil {
				unusable = append(unusable, e.Name+" (not an upscaler)")
				continue
			}
			options = append(options, e.Name)
			c.entries[e.Name] = e
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
	c.Licence = widget.NewLabel("")
	c.Licence.Truncation = fyne.TextTruncateEllipsis
	c.Licence.Importance = widget.LowImportance
	c.Unused = widget.NewLabel("")
	c.Unused.Truncation = fyne.TextTruncateEllipsis
	c.Unused.Importance = widget.LowImportance
	if len(unusable) > 0 {
		c.Unused.SetText("Not usable: " + strings.Join(unusable, ", "))
	} else {
		c.Unused.Hide()
	}
	c.Select = widget.NewSelect(options, func(string) { c.describe() })
	c.Select.SetSelected(selected)
	c.describe()
	c.Box = container.NewVBox(container.NewBorder(nil, nil, c.Select, nil, c.About), c.Licence, c.Unused)
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

// describe shows the chosen file's network, scale and licence.
func (c *Choice) describe() {
	e, ok := c.entries[c.Select.Selected]
	if !ok {
		c.About.SetText("Lanczos resizes without a network: fast, softer than a learned upscaler.")
		c.Licence.SetText("Add a learned upscaler by dropping its .pth or .safetensors file on the window.")
		return
	}
	c.About.SetText(Describe(e))
	c.Licence.SetText("Licence: " + e.Licence())
}

// Describe is one line about an upscaler file: its network (with its scale) and its size on disk.
func Describe(e upscalers.Entry) string {
	if e.Config == nil {
		return e.Name
	}
	return fmt.Sprintf("%s (%.1f MB)", e.Config.String(), float64(e.Size)/1e6)
}
