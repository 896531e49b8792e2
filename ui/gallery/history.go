package gallery

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"

	"easel/ui/kit"
)

// History shows past images — this session's first, then the output folder's — as
// thumbnails; a click restores the settings that made one. A batch's images are one group under
// a header ("Batch of 4 · seed 7–10") that folds them away; each still restores its own seed and
// variation.
type History struct {
	act     HistoryActions
	Entries []history.Entry
	rows    *fyne.Container                 // the groups, newest first: runs of singles and batches
	folded  map[string]bool                 // batches whose thumbnails are folded away, by batch ID
	batches map[*fyne.Container]*BatchGroup // the rows that are batches
	note    *widget.Label
	hover   *widget.Label // the prompt, seed and size of the image under the pointer
	problem string        // why some files could not be read, kept under the hint
	Box     fyne.CanvasObject
}

// thumbSize is a history thumbnail's cell.
var thumbSize = fyne.NewSize(72, 72)

// HistoryActions are what the history's images do and say, supplied by the shell.
type HistoryActions struct {
	Folder      func() string                  // where images are saved (said while the list is empty)
	RevealLabel func() string                  // what showing a file is called here ("Show in Finder")
	UseAll      func(history.Entry)            // a click: the image's whole recipe
	Menu        func(history.Entry) *fyne.Menu // a right-click
}

// NewHistory is an empty history.
func NewHistory(act HistoryActions) *History {
	p := &History{act: act, rows: container.NewVBox(), folded: map[string]bool{}, batches: map[*fyne.Container]*BatchGroup{}, note: widget.NewLabel("")}
	p.note.Importance = widget.LowImportance
	p.note.Wrapping = fyne.TextWrapWord
	p.hover = widget.NewLabel(" ")
	p.hover.Truncation = fyne.TextTruncateEllipsis
	p.Box = container.NewVBox(kit.Heading("History"), p.note, p.hover, p.rows)
	p.Render()
	return p
}

// AddSession puts a just-saved image first.
func (p *History) AddSession(e history.Entry) {
	p.Entries = append([]history.Entry{e}, p.Entries...)
	p.Render()
}

// Remove takes the image at path out of the list (moved to the Trash).
func (p *History) Remove(path string) {
	out := p.Entries[:0]
	for _, e := range p.Entries {
		if e.Path != path {
			out = append(out, e)
		}
	}
	p.Entries = out
	p.Render()
}

// PutBack lists an image again at its place by time (newest first).
func (p *History) PutBack(e history.Entry) {
	i := 0
	for i < len(p.Entries) && p.Entries[i].ModTime.After(e.ModTime) {
		i++
	}
	p.Entries = append(p.Entries[:i], append([]history.Entry{e}, p.Entries[i:]...)...)
	p.Render()
}

// AddScanned appends the output folder's images.
func (p *History) AddScanned(es []history.Entry, errs []error) {
	p.Entries = append(p.Entries, es...)
	if len(errs) > 0 {
		p.problem = fmt.Sprintf(" %d file(s) in the output folder could not be read (first: %v).", len(errs), errs[0])
	}
	p.Render()
}

func (p *History) Render() {
	var rows []fyne.CanvasObject
	p.batches = map[*fyne.Container]*BatchGroup{}
	var singles *fyne.Container // the run of singles being filled
	for _, g := range history.Groups(p.Entries) {
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
	if len(p.Entries) == 0 {
		p.note.SetText("Images you make are saved to " + p.act.Folder() + " and listed here." + p.problem)
	} else {
		p.note.SetText("Newest first. Click an image to use its whole recipe; right-click for its prompt or seed alone, Vary, Refine, " + p.act.RevealLabel() + ", Copy or Move to Trash." + p.problem)
	}
}

// thumb is an image's thumbnail: a click uses its recipe, hovering says what it is.
func (p *History) thumb(e history.Entry) *Thumb {
	b := newThumb(e, p.act.UseAll, p.act.Menu)
	b.hover = func(in bool) {
		if in {
			p.hover.SetText(DescribeEntry(e))
		} else {
			p.hover.SetText(" ")
		}
	}
	return b
}

// BatchGroup is one batch in the history: its row (box), header and images' thumbnails.
type BatchGroup struct {
	box    *fyne.Container
	batch  string
	title  *widget.Label
	fold   *widget.Button
	thumbs *fyne.Container
}

// batchRow is a batch's group: a header with its size and seeds (wrapping, so a long seed never
// widens the window) and a button that folds its thumbnails away, then the thumbnails in the
// batch's order, indented under the header, and a separator that closes the group.
func (p *History) batchRow(g history.Group) *BatchGroup {
	b := &BatchGroup{batch: g.Batch, title: widget.NewLabel(g.Title()), thumbs: container.NewGridWrap(thumbSize)}
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
func (b *BatchGroup) show(folded bool) {
	if folded {
		b.fold.SetText("▸")
		b.thumbs.Hide()
	} else {
		b.fold.SetText("▾")
		b.thumbs.Show()
	}
}

// Thumbs are every thumbnail listed, in order (a folded batch's too).
func (p *History) Thumbs() []*Thumb {
	var out []*Thumb
	for _, row := range p.rows.Objects {
		grid, ok := row.(*fyne.Container)
		if !ok {
			continue
		}
		if b := p.batches[grid]; b != nil {
			grid = b.thumbs
		}
		for _, o := range grid.Objects {
			if tb, ok := o.(*Thumb); ok {
				out = append(out, tb)
			}
		}
	}
	return out
}

// Thumb is a tappable thumbnail with a context menu.
type Thumb struct {
	widget.BaseWidget
	entry history.Entry
	onTap func(history.Entry)
	menu  func(history.Entry) *fyne.Menu
	hover func(in bool) // nil: nothing on hover
	img   *canvas.Image
}

// MouseIn, MouseMoved and MouseOut say what the image is while the pointer is over it.
func (b *Thumb) MouseIn(*desktop.MouseEvent) {
	if b.hover != nil {
		b.hover(true)
	}
}

func (b *Thumb) MouseMoved(*desktop.MouseEvent) {}

func (b *Thumb) MouseOut() {
	if b.hover != nil {
		b.hover(false)
	}
}

func newThumb(e history.Entry, onTap func(history.Entry), menu func(history.Entry) *fyne.Menu) *Thumb {
	b := &Thumb{entry: e, onTap: onTap, menu: menu}
	if e.Thumb != nil {
		b.img = canvas.NewImageFromImage(kit.OverChecker(e.Thumb, 6))
	} else {
		b.img = canvas.NewImageFromImage(nil)
	}
	b.img.FillMode = canvas.ImageFillContain
	b.ExtendBaseWidget(b)
	return b
}

func (b *Thumb) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(b.img) }

// Tapped restores the image's settings.
func (b *Thumb) Tapped(*fyne.PointEvent) { b.onTap(b.entry) }

// TappedSecondary opens the image's menu (restore, show in the Finder or folder, copy).
func (b *Thumb) TappedSecondary(ev *fyne.PointEvent) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(b); c != nil {
		widget.ShowPopUpMenuAtPosition(b.menu(b.entry), c, ev.AbsolutePosition)
	}
}

// Rows are the history's rows, newest first: runs of singles and batches.
func (p *History) Rows() []fyne.CanvasObject { return p.rows.Objects }

// Batch is the batch a row holds (nil for a run of singles).
func (p *History) Batch(row fyne.CanvasObject) *BatchGroup {
	c, _ := row.(*fyne.Container)
	return p.batches[c]
}

// Title is the batch's header ("Batch of 3 · seed 7–9").
func (b *BatchGroup) Title() string { return b.title.Text }

// Thumbs are the batch's thumbnails, in its order.
func (b *BatchGroup) Thumbs() []*Thumb {
	var out []*Thumb
	for _, o := range b.thumbs.Objects {
		if t, ok := o.(*Thumb); ok {
			out = append(out, t)
		}
	}
	return out
}

// Folded reports whether the batch's thumbnails are folded away.
func (b *BatchGroup) Folded() bool { return !b.thumbs.Visible() }

// FoldButton is the header's fold button.
func (b *BatchGroup) FoldButton() *widget.Button { return b.fold }

// Entry is the image the thumbnail stands for.
func (b *Thumb) Entry() history.Entry { return b.entry }

// DescribeEntry is a history image's hover text: prompt, seed and size.
func DescribeEntry(e history.Entry) string {
	if e.Settings == nil {
		return filepath.Base(e.Path) + " (no Easel settings)"
	}
	p := strings.Join(strings.Fields(e.Settings.Prompt), " ")
	if r := []rune(p); len(r) > 60 {
		p = string(r[:59]) + "…"
	}
	if p == "" {
		p = "(no prompt)"
	}
	return fmt.Sprintf("%s · seed %d · %d×%d", p, e.Settings.Seed, e.Settings.Width, e.Settings.Height)
}
