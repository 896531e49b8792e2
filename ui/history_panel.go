package ui

import (
	"fmt"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"

	"easel/ui/canvasarea"

	"easel/ui/kit"
)

// historyPanel shows past images — this session's first, then the output folder's — as
// thumbnails; a click restores the settings that made one. A batch's images are one group under
// a header ("Batch of 4 · seed 7–10") that folds them away; each still restores its own seed and
// variation.
type historyPanel struct {
	s       *window
	entries []history.Entry
	rows    *fyne.Container                 // the groups, newest first: runs of singles and batches
	folded  map[string]bool                 // batches whose thumbnails are folded away, by batch ID
	batches map[*fyne.Container]*batchGroup // the rows that are batches
	note    *widget.Label
	hover   *widget.Label // the prompt, seed and size of the image under the pointer
	problem string        // why some files could not be read, kept under the hint
	box     fyne.CanvasObject
}

// thumbSize is a history thumbnail's cell.
var thumbSize = fyne.NewSize(72, 72)

func newHistoryPanel(s *window) *historyPanel {
	p := &historyPanel{s: s, rows: container.NewVBox(), folded: map[string]bool{}, batches: map[*fyne.Container]*batchGroup{}, note: widget.NewLabel("")}
	p.note.Importance = widget.LowImportance
	p.note.Wrapping = fyne.TextWrapWord
	p.hover = widget.NewLabel(" ")
	p.hover.Truncation = fyne.TextTruncateEllipsis
	p.box = container.NewVBox(kit.Heading("History"), p.note, p.hover, p.rows)
	p.render()
	return p
}

// addSession puts a just-saved image first.
func (p *historyPanel) addSession(e history.Entry) {
	p.entries = append([]history.Entry{e}, p.entries...)
	p.render()
}

// remove takes the image at path out of the list (moved to the Trash).
func (p *historyPanel) remove(path string) {
	out := p.entries[:0]
	for _, e := range p.entries {
		if e.Path != path {
			out = append(out, e)
		}
	}
	p.entries = out
	p.render()
}

// putBack lists an image again at its place by time (newest first).
func (p *historyPanel) putBack(e history.Entry) {
	i := 0
	for i < len(p.entries) && p.entries[i].ModTime.After(e.ModTime) {
		i++
	}
	p.entries = append(p.entries[:i], append([]history.Entry{e}, p.entries[i:]...)...)
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
			singles.Objects = append(singles.Objects, p.thumb(g.Entries[0]))
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
		p.note.SetText("Newest first. Click an image to use its whole recipe; right-click for its prompt or seed alone, Vary, Refine, " + p.s.deps.Desktop.Label() + ", Copy or Move to Trash." + p.problem)
	}
}

// thumb is an image's thumbnail: a click uses its recipe, hovering says what it is.
func (p *historyPanel) thumb(e history.Entry) *thumbButton {
	b := newThumbButton(e, p.s.useAll, p.s.entryMenu)
	b.hover = func(in bool) {
		if in {
			p.hover.SetText(describeEntry(e))
		} else {
			p.hover.SetText(" ")
		}
	}
	return b
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
// batch's order, indented under the header, and a separator that closes the group.
func (p *historyPanel) batchRow(g history.Group) *batchGroup {
	b := &batchGroup{batch: g.Batch, title: widget.NewLabel(g.Title()), thumbs: container.NewGridWrap(thumbSize)}
	b.title.Wrapping = fyne.TextWrapWord
	b.title.TextStyle.Bold = true
	for _, e := range g.Entries {
		b.thumbs.Objects = append(b.thumbs.Objects, p.thumb(e))
	}
	b.fold = widget.NewButton("", func() {
		p.folded[g.Batch] = !p.folded[g.Batch]
		b.show(p.folded[g.Batch])
	})
	b.fold.Importance = widget.LowImportance
	b.show(p.folded[g.Batch])
	// The thumbnails sit indented under the header, in line with its title, and a separator closes
	// the group, so an image listed after it never reads as one more member.
	indent := canvas.NewRectangle(color.Transparent)
	indent.SetMinSize(fyne.NewSize(b.fold.MinSize().Width, 0))
	b.box = container.NewVBox(container.NewBorder(nil, nil, b.fold, nil, b.title),
		container.NewBorder(nil, nil, indent, nil, b.thumbs), widget.NewSeparator())
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
	hover func(in bool) // nil: nothing on hover
	img   *canvas.Image
}

// MouseIn, MouseMoved and MouseOut say what the image is while the pointer is over it.
func (b *thumbButton) MouseIn(*desktop.MouseEvent) {
	if b.hover != nil {
		b.hover(true)
	}
}

func (b *thumbButton) MouseMoved(*desktop.MouseEvent) {}

func (b *thumbButton) MouseOut() {
	if b.hover != nil {
		b.hover(false)
	}
}

func newThumbButton(e history.Entry, onTap func(history.Entry), menu func(history.Entry) *fyne.Menu) *thumbButton {
	b := &thumbButton{entry: e, onTap: onTap, menu: menu}
	if e.Thumb != nil {
		b.img = canvas.NewImageFromImage(canvasarea.OverChecker(e.Thumb, 6))
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
