package imagework

import (
	"image"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"

	"easel/app/maskpaint"
	"easel/app/memplan"
)

// Canvas is the canvas the start image is painted on (the window's centre region), as the
// region uses it.
type Canvas interface {
	// Edit puts the canvas in view showing img (the extended start image) with the mask editor
	// over it, the extension's arrows and caption under it.
	Edit(img image.Image, mask *maskpaint.Mask, ext [4]int, caption string)
	// StopEditing takes the mask editor away; Editing reports whether it is shown.
	StopEditing()
	Editing() bool
	// SetFrame draws the generation frame: crop (in the extended image's pixels; empty: none)
	// labelled with the output's size; a caption other than "" replaces the canvas's caption.
	SetFrame(crop image.Rectangle, label, caption string)
	// SetErase makes a stroke erase (true) or paint; SetBrush sets the brush's diameter in image
	// pixels.
	SetErase(erase bool)
	SetBrush(diameter float64)
	// ShowMask shows or hides the mask's overlay; RedrawMask draws the whole mask again after an
	// edit of all of it (invert, clear, undo).
	ShowMask(on bool)
	RedrawMask()
	// Holds reports whether pos (window coordinates) is on the canvas.
	Holds(pos fyne.Position) bool
}

// Shell is what the region needs from the window around it. Every function runs on the UI
// goroutine unless it says otherwise; none may be nil except where said.
type Shell struct {
	// Do runs f on the UI goroutine.
	Do func(f func())
	// Window is the dialogs' parent; Show shows a dialog on the window's question stack (Esc
	// closes the one on top).
	Window fyne.Window
	Show   func(d dialog.Dialog)
	// PickFile opens the file dialog for one file with one of extensions (starting in folder when
	// it is set) and hands the chosen path to use.
	PickFile func(extensions []string, folder string, use func(path string))
	// Clipboard is the window's clipboard (nil: none); ClipboardFile the path of a file copied in
	// the Finder, or ""; ClipboardImage an image's bytes from the system clipboard, or nil. The
	// last two may be nil.
	Clipboard      func() fyne.Clipboard
	ClipboardFile  func() string
	ClipboardImage func() []byte
	// Remember keeps the recipe and the canvas document as they are, for ⌘Z, before a change
	// named what; MaskEdited counts a mask edit among the undoable edits.
	Remember   func(what string)
	MaskEdited func()
	// DraftChanged follows a change of the canvas document that changes the run (the size, the
	// memory, Generate); Restored follows a recipe restored from an image.
	DraftChanged func()
	Restored     func()
	// ShowingStart says the canvas now shows the start image, not a saved file or a job's
	// picture; ShowFile puts an image file on the canvas.
	ShowingStart func()
	ShowFile     func(path string)
	// Predict is the memory a run of plan needs on this machine (its backend set by the shell).
	Predict func(plan memplan.Plan) memplan.Prediction
	// LoRADirs are where restoring the image at path looks for its LoRAs; OutputFolder is where
	// the saved images are.
	LoRADirs     func(path string) []string
	OutputFolder func() string
	// TakesDrop lets another region take a drop at pos first (true: taken). TakeFiles runs off
	// the UI goroutine over dropped files and takes those that are not pictures (LoRAs, upscalers);
	// it returns the rest and finish, which runs on the UI goroutine once the drop is answered and
	// returns the lines to say and what to do after saying them (nil: nothing). Both may be nil.
	TakesDrop func(pos fyne.Position, paths []string) bool
	TakeFiles func(paths []string) (rest []string, finish func() (lines []string, then func()))
}
