package setup

import (
	"fmt"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"easel/app/modelsetup"
	"easel/app/settings"
	"easel/engine/lora"
)

// readyPage says the model is set up and hands over to the main window.
type readyPage struct {
	model                     *modelsetup.Model
	status                    *widget.Label
	startButton, deleteButton *widget.Button
	// fast offers a few-step LoRA for fast drafts (nil when the LoRA folder is unknown).
	fast *FastDraftPanel
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
	if dir := fr.loraDir(); dir != "" {
		p.fast = NewFastDraftPanel(fr.remote, dir, fr.addDraftLoRA, fr.do)
		p.fast.settled = fr.jobDone
		items = append(items, widget.NewSeparator(), p.fast.Object())
	}
	fr.show(container.NewVScroll(container.NewVBox(items...)))
}

// loraDir is the LoRA folder fast-draft LoRAs are downloaded to ("" when unknown).
func (fr *firstRun) loraDir() string {
	if fr.loraFolder != "" {
		return fr.loraFolder
	}
	dir, err := settings.LoRADir()
	if err != nil {
		return ""
	}
	return dir
}

// addDraftLoRA puts a downloaded few-step LoRA in the main window's LoRA list (enabled, strength
// 1); the main window reads its preset and offers Draft with it.
func (fr *firstRun) addDraftLoRA(path string, _ *lora.Preset) {
	st := fr.loraStore
	if st == nil {
		var err error
		if st, err = settings.DefaultLoRAStore(); err != nil {
			fr.showError(fmt.Errorf("the LoRA was downloaded to %s but could not be added to the LoRA list: %v; add it with Add LoRA…", path, err))
			return
		}
	}
	ls, err := st.Load()
	if err == nil {
		for _, l := range ls {
			if l.Path == path {
				return
			}
		}
		err = st.Save(append(ls, settings.LoRA{Path: path, Enabled: true, Strength: 1}))
	}
	if err != nil {
		fr.showError(fmt.Errorf("the LoRA was downloaded to %s but could not be added to the LoRA list: %v; add it with Add LoRA…", path, err))
	}
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
