package ui

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
)

// conditionsPanel lists the condition images in their order, each with its thumbnail, the size
// it will be encoded at, and buttons to move it left or right or remove it.
type conditionsPanel struct {
	s     *window
	list  *fyne.Container
	count *widget.Label
	box   fyne.CanvasObject
}

func newConditionsPanel(s *window) *conditionsPanel {
	p := &conditionsPanel{s: s, list: container.NewVBox(), count: widget.NewLabel("")}
	add := widget.NewButtonWithIcon("Add images…", theme.FolderOpenIcon(), s.pickImages)
	paste := widget.NewButtonWithIcon("Paste", theme.ContentPasteIcon(), func() {
		if !s.pasteImage(s.clipboard(), true) {
			s.say("The clipboard holds no image and no image file path.")
		}
	})
	hint := widget.NewLabel("Drop, paste or add up to ten; the prompt calls them “image 1”, “image 2”… in this order.")
	hint.Wrapping = fyne.TextWrapWord
	hint.Importance = widget.LowImportance
	p.box = container.NewVBox(
		container.NewBorder(nil, nil, nil, p.count),
		container.NewGridWithColumns(2, add, paste),
		hint, p.list,
	)
	p.refresh()
	return p
}

// refresh rebuilds the rows from the draft.
func (p *conditionsPanel) refresh() {
	conds := p.s.draft().Conditions
	p.count.SetText(fmt.Sprintf("%d of %d", len(conds), compose.MaxConditions))
	rows := make([]fyne.CanvasObject, 0, len(conds))
	for i, c := range conds {
		rows = append(rows, p.row(i, c, len(conds)))
	}
	p.list.Objects = rows
	p.list.Refresh()
	if len(conds) > 0 && p.s.sections != nil {
		p.s.sections.Open(sectionConditions) // what was just added is in view
	}
}

func (p *conditionsPanel) row(i int, c compose.Condition, n int) fyne.CanvasObject {
	thumb := canvas.NewImageFromImage(kit.OverChecker(history.Thumbnail(c.Image, 96), 6))
	thumb.FillMode = canvas.ImageFillContain
	thumb.SetMinSize(fyne.NewSize(56, 56))
	name := widget.NewLabel(fmt.Sprintf("%d · %s", i+1, c.Name))
	name.Truncation = fyne.TextTruncateEllipsis
	size := widget.NewLabel(fmt.Sprintf("%d×%d, encoded at %d×%d", c.Image.Rect.Dx(), c.Image.Rect.Dy(), c.EncodedW, c.EncodedH))
	size.Importance = widget.LowImportance
	size.Truncation = fyne.TextTruncateEllipsis
	left := widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { p.s.moveCondition(i, -1) })
	right := widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { p.s.moveCondition(i, +1) })
	remove := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() { p.s.removeCondition(i) })
	if i == 0 {
		left.Disable()
	}
	if i == n-1 {
		right.Disable()
	}
	buttons := container.NewHBox(left, right, remove)
	return container.NewBorder(nil, nil, thumb, nil, container.NewVBox(container.NewBorder(nil, nil, nil, buttons, name), size))
}
