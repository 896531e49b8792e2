package recipe

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/history"

	"easel/ui/kit"
	"easel/ui/model"
)

// ConditionsActions are what the condition images' section asks of the shell: Add chooses image
// files, Paste takes the clipboard's image, Move and Remove change the list (the shell keeps
// what follows the images, such as the prompt help's sources), Shown brings the section into
// view after images were added. Any may be nil.
type ConditionsActions struct {
	Add, Paste func()
	Move       func(i, delta int)
	Remove     func(i int)
	Shown      func()
}

// Conditions lists the draft's condition images in their order, each with its thumbnail, the
// size it will be encoded at, and buttons to move it left or right or remove it. It follows the
// model's draft: the rows are rebuilt only when the images change.
type Conditions struct {
	Box   fyne.CanvasObject
	Count *widget.Label
	List  *fyne.Container
	act   ConditionsActions
	shown []compose.Condition // the images the rows show
	m     *model.Window
}

// NewConditions builds the section over m's draft.
func NewConditions(m *model.Window, act ConditionsActions) *Conditions {
	p := &Conditions{Count: widget.NewLabel(""), List: container.NewVBox(), act: act, m: m}
	add := widget.NewButtonWithIcon("Add images…", theme.FolderOpenIcon(), func() { call(act.Add) })
	paste := widget.NewButtonWithIcon("Paste", theme.ContentPasteIcon(), func() { call(act.Paste) })
	hint := widget.NewLabel("Drop, paste or add up to ten; the prompt calls them “image 1”, “image 2”… in this order.")
	hint.Wrapping = fyne.TextWrapWord
	hint.Importance = widget.LowImportance
	p.Box = container.NewVBox(
		container.NewBorder(nil, nil, nil, p.Count),
		container.NewGridWithColumns(2, add, paste),
		hint, p.List,
	)
	p.show(m.Draft().Conditions, true)
	m.Observe(model.DraftChanged, func(model.Change) { p.show(m.Draft().Conditions, false) })
	return p
}

func call(f func()) {
	if f != nil {
		f()
	}
}

// show rebuilds the rows when conds differ from the images shown (always when all).
func (p *Conditions) show(conds []compose.Condition, all bool) {
	if !all && sameConditions(conds, p.shown) {
		return
	}
	p.shown = conds
	p.Count.SetText(fmt.Sprintf("%d of %d", len(conds), compose.MaxConditions))
	rows := make([]fyne.CanvasObject, 0, len(conds))
	for i, c := range conds {
		rows = append(rows, p.row(i, c, len(conds)))
	}
	p.List.Objects = rows
	p.List.Refresh()
	if len(conds) > 0 && !all {
		call(p.act.Shown) // what was just added is in view
	}
}

// sameConditions says whether a and b are the same images in the same order.
func sameConditions(a, b []compose.Condition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Image != b[i].Image {
			return false
		}
	}
	return true
}

func (p *Conditions) row(i int, c compose.Condition, n int) fyne.CanvasObject {
	thumb := canvas.NewImageFromImage(kit.OverChecker(history.Thumbnail(c.Image, 96), 6))
	thumb.FillMode = canvas.ImageFillContain
	thumb.SetMinSize(fyne.NewSize(56, 56))
	name := widget.NewLabel(fmt.Sprintf("%d · %s", i+1, c.Name))
	name.Truncation = fyne.TextTruncateEllipsis
	size := widget.NewLabel(fmt.Sprintf("%d×%d, encoded at %d×%d", c.Image.Rect.Dx(), c.Image.Rect.Dy(), c.EncodedW, c.EncodedH))
	size.Importance = widget.LowImportance
	size.Truncation = fyne.TextTruncateEllipsis
	left := widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { p.move(i, -1) })
	right := widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { p.move(i, +1) })
	remove := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
		if p.act.Remove != nil {
			p.act.Remove(i)
		}
	})
	if i == 0 {
		left.Disable()
	}
	if i == n-1 {
		right.Disable()
	}
	buttons := container.NewHBox(left, right, remove)
	return container.NewBorder(nil, nil, thumb, nil, container.NewVBox(container.NewBorder(nil, nil, nil, buttons, name), size))
}

func (p *Conditions) move(i, delta int) {
	if p.act.Move != nil {
		p.act.Move(i, delta)
	}
}
