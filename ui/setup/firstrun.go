package setup

import (
	"context"
	"errors"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app"
	"easel/app/download"
	"easel/app/modelsetup"
	"easel/app/settings"
)

// NeedsSetup reports whether Easel must set up a model before the main window can work: none is
// configured, or the configured file is missing or cannot run. The reason, or nil, is returned
// too, so the first-run window can say why it is there.
func NeedsSetup(s settings.Settings) (bool, error) {
	err := modelsetup.Usable(s)
	return err != nil, err
}

// NewFirstRunWindow builds the window that gets an artist from no model to a working one: open a
// .cmf, convert a downloaded Hugging Face snapshot, or download the official model. When the model
// is ready and saved in the settings, onReady is called with its path (on the UI goroutine) and
// the window closes itself. reason, when not nil, is why setup is needed (shown at the top).
func NewFirstRunWindow(a fyne.App, store *settings.Store, reason error, onReady func(modelPath string)) fyne.Window {
	return newFirstRun(a, store, reason, modelsetup.OfficialRemote(), onReady).w
}

// firstRun is the first-run window's state. One page is shown at a time; the pages' widgets stay
// reachable here so tests can drive them.
type firstRun struct {
	w       fyne.Window
	store   *settings.Store
	remote  *download.Remote
	reason  error
	onReady func(modelPath string)

	// settled, when not nil, is called on the UI goroutine whenever a background job (a check, a
	// conversion, a download) has finished and the window shows its outcome. Tests wait on it.
	settled func()
	// progressed, when not nil, is called on the UI goroutine after each progress update of a
	// conversion or download. Tests act on it (Cancel, Pause) while the job certainly runs.
	progressed func()

	// loraFolder and loraStore replace the LoRA folder and the LoRA list's store (tests); do runs
	// a function on the UI goroutine (fyne.Do when nil).
	loraFolder string
	loraStore  *settings.LoRAStore
	doFunc     func(func())

	back     *widget.Button     // the current page's Back button
	working  context.CancelFunc // stops the running conversion or download; nil when none runs
	quitting bool               // the window closes once the running job has stopped

	choose *choosePage
	open   *openPage
	conv   *convertPage
	dl     *downloadPage
	ready  *readyPage
}

func newFirstRun(a fyne.App, store *settings.Store, reason error, remote *download.Remote, onReady func(string)) *firstRun {
	fr := &firstRun{w: a.NewWindow(app.Name + " — set up the model"), store: store, remote: remote, reason: reason, onReady: onReady}
	fr.showChoices()
	fr.w.Resize(fyne.NewSize(860, 620))
	fr.w.SetCloseIntercept(fr.closeRequested)
	return fr
}

// closeRequested closes the window, first stopping a running conversion or download (after
// asking) so that no half-written file outlives the app.
func (fr *firstRun) closeRequested() {
	if fr.working == nil {
		fr.w.Close()
		return
	}
	dialog.ShowConfirm("Stop and quit?",
		"A conversion or download is running. Stop it and quit? A download continues where it stopped next time; a stopped conversion leaves no file.",
		func(stop bool) {
			if stop && fr.working != nil {
				fr.quitting = true
				fr.working()
			}
		}, fr.w)
}

// beginWork records the running job's cancel function; Back is disabled until it ends.
func (fr *firstRun) beginWork(cancel context.CancelFunc) {
	fr.working = cancel
	if fr.back != nil {
		fr.back.Disable()
	}
}

// endWork records that the running job has stopped. It returns true when the window was closed
// because the artist asked to quit meanwhile; the caller then leaves the page alone.
func (fr *firstRun) endWork() bool {
	fr.working = nil
	if fr.back != nil {
		fr.back.Enable()
	}
	if fr.quitting {
		fr.w.Close()
		return true
	}
	return false
}

// do runs f on the UI goroutine.
func (fr *firstRun) do(f func()) {
	if fr.doFunc != nil {
		fr.doFunc(f)
		return
	}
	fyne.Do(f)
}

// show replaces the window's page.
func (fr *firstRun) show(page fyne.CanvasObject) {
	fr.w.SetContent(container.NewPadded(page))
}

// relayout lays the page out again after a label's text changed its height (a wrapped label
// that grows does not push its neighbours down by itself).
func (fr *firstRun) relayout() {
	if c := fr.w.Content(); c != nil {
		c.Refresh()
	}
}

// jobDone lays the page out for the job's outcome and reports the finished job to tests; call it
// on the UI goroutine.
func (fr *firstRun) jobDone() {
	fr.relayout()
	if fr.settled != nil {
		fr.settled()
	}
}

// choosePage offers the three ways in.
type choosePage struct {
	openButton, convertButton, downloadButton *widget.Button
	reason                                    *widget.Label
}

func (fr *firstRun) showChoices() {
	p := &choosePage{}
	fr.choose = p
	title := heading("Welcome to " + app.Name)
	intro := widget.NewLabel("Easel makes images with Qwen-Image-2.1 on this computer; nothing you make leaves it. " +
		"It needs the model first: one file of about 13 GB. Choose how you have it.")
	intro.Wrapping = fyne.TextWrapWord
	p.reason = widget.NewLabel(reasonText(fr.reason))
	p.reason.Wrapping = fyne.TextWrapWord
	p.reason.Importance = widget.WarningImportance
	if p.reason.Text == "" {
		p.reason.Hide()
	}

	p.openButton = widget.NewButton("Open a .cmf file…", fr.pickModelFile)
	p.openButton.Importance = widget.HighImportance
	p.convertButton = widget.NewButton("Choose the snapshot folder…", fr.pickSnapshotFolder)
	p.downloadButton = widget.NewButton("Download…", fr.showDownload)

	cards := container.NewGridWithColumns(3,
		choiceCard("I have a model file",
			"A model file (.cmf) you converted or downloaded before. It opens where it is; nothing is copied.", p.openButton),
		choiceCard("I downloaded the snapshot",
			"The Qwen/Qwen-Image-2.1 folder from Hugging Face (about 31 GB). Easel turns it into one model file.", p.convertButton),
		choiceCard("Download it for me",
			"About 31 GB from Hugging Face, resumable, then converted automatically. Non-commercial license.", p.downloadButton),
	)
	where := "Model files go to the models folder of Easel's app-support folder unless you choose another place."
	if dir, err := modelsetup.ModelsDir(); err == nil {
		where = "Converted and downloaded models go to " + dir + " unless you choose another place. You can change the model later in Settings."
	}
	footer := widget.NewLabel(where)
	footer.Wrapping = fyne.TextWrapWord
	fr.show(container.NewBorder(container.NewVBox(title, intro, p.reason, cards), footer, nil, nil))
}

// heading is a page's title.
func heading(text string) *widget.Label {
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.SizeName = theme.SizeNameHeadingText
	return l
}

// choiceCard is one of the three ways in: what it is for, and its button.
func choiceCard(title, text string, button *widget.Button) fyne.CanvasObject {
	body := widget.NewLabel(text)
	body.Wrapping = fyne.TextWrapWord
	return widget.NewCard(title, "", container.NewBorder(nil, button, nil, nil, body))
}

// reasonText says why the first-run window opened when a model had been configured before.
func reasonText(err error) string {
	if err == nil || errors.Is(err, modelsetup.ErrNoModel) {
		return ""
	}
	return fmt.Sprintf("The model in your settings cannot be used: %v", err)
}

// pickModelFile asks for a .cmf file and checks it.
func (fr *firstRun) pickModelFile() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			dialog.ShowError(err, fr.w)
			return
		}
		if r == nil {
			return
		}
		path := r.URI().Path()
		r.Close()
		fr.showOpen(path)
	}, fr.w)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".cmf"}))
	d.Show()
}

// pickSnapshotFolder asks for a snapshot folder and shows what it holds.
func (fr *firstRun) pickSnapshotFolder() {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			dialog.ShowError(err, fr.w)
			return
		}
		if u != nil {
			fr.showConvert(u.Path())
		}
	}, fr.w)
}

// backButton returns to the three choices.
func (fr *firstRun) backButton() *widget.Button {
	fr.back = widget.NewButton("Back", fr.showChoices)
	return fr.back
}

// Start opens the first-run window when the settings name no usable model, and calls openMain
// (which shows the main window) once a model is ready; when the model is fine it calls openMain
// at once. Either way the caller then runs the app (a.Run()). A settings file that cannot be
// read is left to the main window, which reports it.
func Start(a fyne.App, openMain func()) {
	store, err := settings.DefaultStore()
	if err != nil {
		openMain()
		return
	}
	s, err := store.Load()
	if err != nil {
		openMain()
		return
	}
	needed, why := NeedsSetup(s)
	if !needed {
		openMain()
		return
	}
	NewFirstRunWindow(a, store, why, func(string) { openMain() }).Show()
}
