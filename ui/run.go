// Package ui holds Easel's Fyne windows and widgets. It reads state from app/ and sends it
// commands; nothing here does inference.
package ui

import (
	fyneapp "fyne.io/fyne/v2/app"

	"easel/app"
)

// Run opens the main window and blocks until it is closed.
func Run() {
	a := fyneapp.NewWithID(app.ID)
	w := NewMainWindow(a)
	w.ShowAndRun()
}
