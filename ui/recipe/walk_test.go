package recipe

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// labels are the texts of the labels under o, in order.
func labels(o fyne.CanvasObject) []string {
	var out []string
	walk(o, func(o fyne.CanvasObject) {
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l.Text)
		}
	})
	return out
}

// buttons are the buttons under o, in order.
func buttons(o fyne.CanvasObject) []*widget.Button {
	var out []*widget.Button
	walk(o, func(o fyne.CanvasObject) {
		if b, ok := o.(*widget.Button); ok {
			out = append(out, b)
		}
	})
	return out
}

// walk calls f on o and every object in its containers, depth first.
func walk(o fyne.CanvasObject, f func(fyne.CanvasObject)) {
	f(o)
	if c, ok := o.(*fyne.Container); ok {
		for _, child := range c.Objects {
			walk(child, f)
		}
	}
}
