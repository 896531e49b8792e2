package setup

import (
	"fmt"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/modelsetup"
)

// readyPage says the model is set up and hands over to the main window.
type readyPage struct {
	model                     *modelsetup.Model
	status                    *widget.Label
	startButton, deleteButton *widget.Button
}

func (fr *firstRun) showReady(m *modelsetup.Model, snapshot string) {
	p := &readyPage{model: m}
	fr.ready = p
	title := heading("The model is ready")
	p.status = widget.NewLabel(describeModel(m) + "\n" + m.Path + "\nSaved in the settings; change it any time in Settings.")
	p.status.Wrapping = fyne.TextWrapBreak
	p.startButton = widget.NewButton("Start making images", func() {
		if fr.onReady != nil {
			fr.onReady(m.Path)
		}
		fr.w.Close()
	})
	p.startButton.Importance = widget.HighImportance
	items := []fyne.CanvasObject{title, p.status}
	if snapshot != "" {
		size := modelsetup.FormatBytes(modelsetup.FolderBytes(snapshot))
		p.deleteButton = widget.NewButton("Delete the downloaded snapshot ("+size+")", func() { fr.deleteSnapshot(p, snapshot, size) })
		note := widget.NewLabel(fmt.Sprintf("The downloaded snapshot in %s is no longer needed to make images. Delete it to get the space back, or keep it to convert again with another profile.", snapshot))
		note.Wrapping = fyne.TextWrapWord
		items = append(items, note)
	}
	buttons := container.NewHBox(p.startButton)
	if p.deleteButton != nil {
		buttons.Add(p.deleteButton)
	}
	items = append(items, buttons)
	fr.show(container.NewVBox(items...))
}

// deleteSnapshot removes the downloaded snapshot after asking.
func (fr *firstRun) deleteSnapshot(p *readyPage, dir, size string) {
	dialog.ShowConfirm("Delete the snapshot?", "This deletes "+dir+" and gives back "+size+". The model file stays.", func(ok bool) {
		if !ok {
			return
		}
		if err := os.RemoveAll(dir); err != nil {
			fr.showError(fmt.Errorf("could not delete %s: %v; delete the folder yourself", dir, err))
			return
		}
		p.deleteButton.SetText("Snapshot deleted")
		p.deleteButton.Disable()
	}, fr.w)
}

// showError shows an error in a dialog over the window.
func (fr *firstRun) showError(err error) {
	dialog.ShowError(err, fr.w)
}
