package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"
)

// historyPanel shows past images — this session's first, then the output folder's — as
// thumbnails; a click restores the settings that made one.
type historyPanel struct {
	s       *studio
	entries []history.Entry
	grid    *fyne.Container
	note    *widget.Label
	problem string // why some files could not be read, kept under the hint
	box     fyne.CanvasObject
}

func newHistoryPanel(s *studio) *historyPanel {
	p := &historyPanel{s: s, grid: container.NewGridWrap(fyne.NewSize(72, 72)), note: widget.NewLabel("")}
	p.note.Importance = widget.LowImportance
	p.note.Wrapping = fyne.TextWrapWord
	p.box = container.NewVBox(heading("History"), p.note, p.grid)
	p.render()
	return p
}

// addSession puts a just-saved image first.
func (p *historyPanel) addSession(e history.Entry) {
	p.entries = append([]history.Entry{e}, p.entries...)
	p.render()
}

// addScanned appends the output folder's images.
func (p *historyPanel) addScanned(es []history.Entry, errs []error) {
	p.entries = append(p.entries, es...)
	if len(errs) > 0 {
		p.problem = fmt.Sprintf(" %d file(s) in the output folder could not be read (first: %v).", len(errs), errs[0])
	}
	p.render()
}

func (p *historyPanel) render() {
	objs := make([]fyne.CanvasObject, 0, len(p.entries))
	for _, e := range p.entries {
		objs = append(objs, newThumbButton(e, p.s.restore, p.s.entryMenu))
	}
	p.grid.Objects = objs
	p.grid.Refresh()
	if len(p.entries) == 0 {
		p.note.SetText("Images you make are saved to " + p.s.deps.Settings.OutputFolder + " and listed here." + p.problem)
	} else {
		p.note.SetText("Click an image to restore its settings; right-click it to " + p.s.deps.Desktop.Label() + " or Copy image." + p.problem)
	}
}

// thumbButton is a tappable thumbnail with a context menu.
type thumbButton struct {
	widget.BaseWidget
	entry history.Entry
	onTap func(history.Entry)
	menu  func(history.Entry) *fyne.Menu
	img   *canvas.Image
}

func newThumbButton(e history.Entry, onTap func(history.Entry), menu func(history.Entry) *fyne.Menu) *thumbButton {
	b := &thumbButton{entry: e, onTap: onTap, menu: menu}
	if e.Thumb != nil {
		b.img = canvas.NewImageFromImage(overChecker(e.Thumb, 6))
	} else {
		b.img = canvas.NewImageFromImage(nil)
	}
	b.img.FillMode = canvas.ImageFillContain
	b.ExtendBaseWidget(b)
	return b
}

func (b *thumbButton) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.img) }

// Tapped restores the image's settings.
func (b *thumbButton) Tapped(*fyne.PointEvent) { b.onTap(b.entry) }

// TappedSecondary opens the image's menu (restore, show in the Finder or folder, copy).
func (b *thumbButton) TappedSecondary(ev *fyne.PointEvent) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(b); c != nil {
		widget.ShowPopUpMenuAtPosition(b.menu(b.entry), c, ev.AbsolutePosition)
	}
}
