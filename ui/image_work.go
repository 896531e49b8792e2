package ui

import (
	"image"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"

	"easel/app/compose"
	"easel/app/maskpaint"
	"easel/app/memplan"
	"easel/app/upscalers"

	"easel/ui/canvasarea"
	"easel/ui/imagework"
	"easel/ui/upscale"
)

// The shell's wiring of the image-work region (ui/imagework): what the region needs of the
// window, and the canvas it paints on.

// newImageWork builds the image-work region over the window's model and canvas.
func newImageWork(s *window) *imagework.Region {
	return imagework.New(s.model, canvasPort{s}, imagework.Shell{
		Do:        func(f func()) { s.deps.Do(f) },
		Window:    s.win,
		Show:      s.show,
		PickFile:  s.pickFile,
		Clipboard: s.clipboard,
		ClipboardFile: func() string {
			if s.deps.ClipboardFile == nil {
				return ""
			}
			return s.deps.ClipboardFile()
		},
		ClipboardImage: func() []byte {
			if s.deps.ClipboardImage == nil {
				return nil
			}
			return s.deps.ClipboardImage()
		},
		Remember:     s.remember,
		MaskEdited:   func() { s.edits++; s.maskEdits = s.edits },
		DraftChanged: s.draftChanged,
		Restored:     s.draftRestored,
		ShowingStart: func() { s.canvasJob = 0; s.setShownFile("") },
		ShowFile:     s.showFile,
		Predict: func(p memplan.Plan) memplan.Prediction {
			p.Metal = hasMetal && s.draft().Backend != "cpu"
			return memplan.Predict(s.deps.Geometry, p, s.deps.Budget)
		},
		LoRADirs:     s.loraDirs,
		OutputFolder: func() string { return s.deps.Settings.OutputFolder },
		TakesDrop:    func(pos fyne.Position, paths []string) bool { return s.help.TakesDrop(pos, paths) },
		TakeFiles:    s.takeDroppedFiles,
	})
}

// takeDroppedFiles takes the dropped files that are not pictures (off the UI goroutine): upscaler
// files, asked about once the drop is answered (ui/upscale), and LoRAs, added then.
func (s *window) takeDroppedFiles(paths []string) ([]string, func() ([]string, func())) {
	var rest, loras, refused []string
	var ups []upscalers.Entry
	for _, p := range paths {
		if upscale.Dropped(p, &ups, &refused) {
			continue
		}
		if strings.EqualFold(filepath.Ext(p), ".safetensors") {
			loras = append(loras, p)
			continue
		}
		rest = append(rest, p)
	}
	return rest, func() ([]string, func()) {
		var lines []string
		if len(loras) > 0 {
			lines = append(lines, s.loras.Add(loras))
		}
		return append(lines, refused...), func() { s.upscales.AskAdd(ups) }
	}
}

// clipboard is the window's clipboard (nil in tests without one).
func (s *window) clipboard() fyne.Clipboard {
	if a := fyne.CurrentApp(); a != nil {
		return a.Clipboard()
	}
	return nil
}

// jobDraft is the draft a run is made from: the recipe with the canvas document's start image.
func (s *window) jobDraft() compose.Draft { return imagework.JobDraft(s.draft(), s.doc()) }

// outputWithExtend is the size the draft makes over the start image extended by ext.
func (s *window) outputWithExtend(ext [4]int) (w, h int, err error) {
	return imagework.OutputSize(s.draft(), s.doc(), ext)
}

// canvasPort is the canvas (ui/canvasarea) as the image-work region paints on it.
type canvasPort struct{ s *window }

func (c canvasPort) Edit(img image.Image, mask *maskpaint.Mask, ext [4]int, caption string) {
	if c.s.area != nil {
		c.s.area.Show(canvasarea.Canvas) // painting needs the canvas in view
	}
	b := img.Bounds()
	c.s.canvas.StartEditing(canvasarea.FrameFinal(img), b.Dx(), b.Dy(), mask, ext, caption)
}

func (c canvasPort) StopEditing() { c.s.canvas.StopEditing() }

func (c canvasPort) Editing() bool { return c.s.canvas != nil && c.s.canvas.Editing }

func (c canvasPort) SetFrame(crop image.Rectangle, label, caption string) {
	c.s.canvas.Editor.SetFrame(crop, label)
	if caption != "" {
		c.s.canvas.Caption.SetText(caption)
	}
}

func (c canvasPort) SetErase(erase bool)       { c.s.canvas.Editor.Erase = erase }
func (c canvasPort) SetBrush(diameter float64) { c.s.canvas.Editor.Radius = diameter / 2 }
func (c canvasPort) ShowMask(on bool)          { c.s.canvas.ShowOverlay(on) }
func (c canvasPort) RedrawMask()               { c.s.canvas.Editor.RefreshAll() }

func (c canvasPort) Holds(pos fyne.Position) bool {
	o := c.s.canvas.Box
	if o == nil || !o.Visible() {
		return false
	}
	at := fyne.CurrentApp().Driver().AbsolutePositionForObject(o)
	sz := o.Size()
	return pos.X >= at.X && pos.Y >= at.Y && pos.X < at.X+sz.Width && pos.Y < at.Y+sz.Height
}
