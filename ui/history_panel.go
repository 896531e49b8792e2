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
// thumbnails; a click restores the settings that made one. A batch's images are one group under
// a header ("Batch of 4 · seed 7–10") that folds them away; each still restores its own seed and
// variation.
type historyPanel struct {
	s       *studio
	entries []history.Entry
	rows    *fyne.Container                 // the groups, newest first: runs of singles and batches
	folded  map[string]bool                 // batches whose thumbnails are folded away, by batch ID
	batches map[*fyne.Container]*batchGroup // the rows that are batches
	note    *widget.Label
	problem string // why some files could not be read, kept under the hint
	box     fyne.CanvasObject
}

// thumbSize is a history thumbnail's cell.
var thumbSize = fyne.NewSize(72, 72)

func newHistoryPanel(s *studio) *historyPanel {
	p := &historyPanel{s: s, rows: container.NewVBox(), folded: map[string]bool{}, batches: map[*fyne.Container]*batchGroup{}, note: widget.NewLabel("")}
	p.note.Importance = widget.LowImportance
	p.note.Wrapping = fyne.TextWrapWord
	p.box = container.NewVBox(heading("History"), p.note, p.rows)
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
	var rows []fyne.CanvasObject
	p.batches = map[*fyne.Container]*batchGroup{}
	var singles *fyne.Container // the run of singles being filled
	for _, g := range history.Groups(p.entries) {
		if g.Batch == "" {
			if singles == nil {
				singles = container.NewGridWrap(thumbSize)
				rows = append(rows, singles)
			}
			singles.Objects = append(singles.Objects, newThumbButton(g.Entries[0], p.s.restore, p.s.entryMenu))
			continue
		}
		singles = nil
		b := p.batchRow(g)
		p.batches[b.box] = b
		rows = append(rows, b.box)
	}
	p.rows.Objects = rows
	p.rows.Refresh()
	if len(p.entries) == 0 {
		p.note.SetText("Images you make are saved to " + p.s.deps.Settings.OutputFolder + " and listed here." + p.problem)
	} else {
		p.note.SetText("Click an image to restore its settings; right-click it to " + p.s.deps.Desktop.Label() + " or Copy image." + p.problem)
	}
}

// batchGroup is one batch in the history: its row (box), header and images' thumbnails.
type batchGroup struct {
	box    *fyne.Container
	batch  string
	title  *widget.Label
	fold   *widget.Button
	thumbs *fyne.Container
}

// batchRow is a batch's group: a header with its size and seeds (wrapping, so a long seed never
// widens the window) and a button that folds its thumbnails away, then the thumbnails in the
// batch's order.
func (p *historyPanel) batchRow(g history.Group) *batchGroup {
	b := &batchGroup{batch: g.Batch, title: widget.NewLabel(g.Title()), thumbs: container.NewGridWrap(thumbSize)}
	b.title.Wrapping = fyne.TextWrapWord
	b.title.TextStyle.Bold = true
	for _, e := range g.Entries {
		b.thumbs.Objects = append(b.thumbs.Objects, newThumbButton(e, p.s.restore, p.s.entryMenu))
	}
	b.fold = widget.NewButton("", func() {
		p.folded[g.Batch] = !p.folded[g.Batch]
		b.show(p.folded[g.Batch])
	})
	b.fold.Importance = widget.LowImportance
	b.show(p.folded[g.Batch])
	b.box = container.NewVBox(container.NewBorder(nil, nil, b.fold, nil, b.title), b.thumbs)
	return b
}

// show folds the batch's thumbnails away or shows them.
func (b *batchGroup) show(folded bool) {
	if folded {
		b.fold.SetText("▸")
		b.thumbs.Hide()
	} else {
		b.fold.SetText("▾")
		b.thumbs.Show()
	}
}

// thumbs are every thumbnail listed, in order (a folded batch's too).
func (p *historyPanel) thumbs() []*thumbButton {
	var out []*thumbButton
	for _, row := range p.rows.Objects {
		grid, ok := row.(*fyne.Container)
		if !ok {
			continue
		}
		if b := p.batches[grid]; b != nil {
			grid = b.thumbs
		}
		for _, o := range grid.Objects {
			if tb, ok := o.(*thumbButton); ok {
				out = append(out, tb)
			}
		}
	}
	return out
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
