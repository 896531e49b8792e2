package ui

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"easel/app/history"
	"easel/app/imagefile"
	"easel/engine/convert"
	"easel/engine/imageio"
	"easel/internal/generatecase"
	"easel/internal/tinysnapshot"
	"easel/ui/prompthelp"
)

// Describe and Check against prompt from a history image's menu and a batch image's menu, and
// Describe of a file dropped on the prompt-help panel, on the untied tiny model; a drop anywhere
// else still adds a condition image, and a dropped non-image says what to drop.
func TestDescribeAndCheckFromMenusAndDrop(t *testing.T) {
	model := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	picture := generatecase.PicturePNG(t, 96, 64)
	img, err := imageio.Load(picture)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarnessWith(t, 0, func(h *harness, d *Deps) {
		d.Settings.Model = model
		d.ScanHistory = true
		set := &imagefile.Settings{Prompt: "a heron, two reeds", Width: 96, Height: 64, Steps: 8, CFG: 1, Seed: 4}
		if _, err := history.New(d.History.Folder).Save(img, set, time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
	})
	h.patience = 3 * time.Minute
	p := h.s.help
	idle := func() bool { return !p.Writing() }
	h.pump("the folder scan", func() bool { return len(h.s.history.Thumbs()) == 1 })
	e := h.s.history.Thumbs()[0].Entry()

	// Check against prompt on a history image: its own prompt, headed by its file name; the
	// image is on the canvas, so the canvas's caption sums the answers up beside it.
	test.Tap(h.s.history.Thumbs()[0])
	h.pump("the history image on the canvas", func() bool { return h.s.canvas.IsFinal && h.s.actions.Shown() == e.Path })
	menuItem(t, h.s.actions.Menu(e), prompthelp.MenuCheck).Action()
	h.pump("the history image's Check", idle)
	lines := strings.Split(p.Checks.Text, "\n")
	if p.Checks.Hidden || len(lines) != 3 || lines[0] != "Check of "+filepath.Base(e.Path)+":" || !strings.HasSuffix(lines[1], " a heron") || !strings.HasSuffix(lines[2], " two reeds") {
		t.Errorf("Check of the history image: %q (shown %v)", p.Checks.Text, !p.Checks.Hidden)
	}
	caption := h.s.canvas.Caption.Text
	if !strings.HasPrefix(caption, "Check: ") || !strings.Contains(caption, " a heron · ") || !strings.HasSuffix(caption, " two reeds") {
		t.Errorf("the canvas's caption %q does not sum up the Check of the image it shows", caption)
	}

	// Describe a history image, then Use as prompt.
	menuItem(t, h.s.actions.Menu(e), prompthelp.MenuDescribe).Action()
	h.pump("the history image's Describe", idle)
	desc := strings.TrimSpace(p.Suggestion.Text)
	if desc == "" || p.SuggestionBox.Hidden || !strings.HasPrefix(p.Status.Text, "Describe:") {
		t.Fatalf("after Describe from the menu: suggestion %q (shown %v), status %q", desc, !p.SuggestionBox.Hidden, p.Status.Text)
	}
	p.Accept.OnTapped()
	if h.s.draft().Prompt != desc {
		t.Errorf("Use as prompt: prompt %q, want %q", h.s.draft().Prompt, desc)
	}

	// A PNG from another tool records no prompt: Check is offered but off.
	if it := menuItem(t, h.s.actions.Menu(history.Entry{Path: picture}), prompthelp.MenuCheck); !it.Disabled {
		t.Error("Check against prompt is on for an image that records no prompt")
	}

	// A batch image's menu: off while it is waiting, then Check against its own prompt.
	sheet := h.s.newBatch().Sheet
	sheet.Begin("a heron", []uint64{4}, nil)
	cell := sheet.Cell(0)
	if m := h.s.cellMenu(cell); !menuItem(t, m, prompthelp.MenuCheck).Disabled || !menuItem(t, m, prompthelp.MenuDescribe).Disabled {
		t.Error("a waiting batch image offers Describe or Check")
	}
	sheet.Finished(0, img, img)
	cell.Set = &imagefile.Settings{Prompt: "a heron, two reeds, a boat"}
	menuItem(t, h.s.cellMenu(cell), prompthelp.MenuCheck).Action()
	h.pump("the batch image's Check", idle)
	if lines := strings.Split(p.Checks.Text, "\n"); len(lines) != 4 || lines[0] != "Check of batch image 1:" || !strings.HasSuffix(lines[3], " a boat") {
		t.Errorf("Check of the batch image: %q", p.Checks.Text)
	}
	if h.s.canvas.Caption.Text != caption {
		t.Errorf("the Check of a batch image not on the canvas changed its caption to %q", h.s.canvas.Caption.Text)
	}

	// A file dropped on the prompt-help panel is described, not added as a condition image.
	p.Suggestion.SetText("")
	h.s.work.Drop(centreOf(p.Box), []fyne.URI{storage.NewFileURI(picture)})
	h.pump("the dropped file's Describe", idle)
	if strings.TrimSpace(p.Suggestion.Text) == "" || len(h.s.draft().Conditions) != 0 || h.s.doc().Start != nil {
		t.Errorf("after a drop on the panel: suggestion %q, %d condition images, start image %v", p.Suggestion.Text, len(h.s.draft().Conditions), h.s.doc().Start != nil)
	}
	// A non-image dropped there says what to drop and writes nothing.
	bad := filepath.Join(t.TempDir(), "notes.png")
	if err := os.WriteFile(bad, []byte("not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.s.work.Drop(centreOf(p.Box), []fyne.URI{storage.NewFileURI(bad)})
	if p.Writing() || !strings.Contains(h.s.message.Text, "notes.png") || !strings.Contains(h.s.message.Text, "Choose an image file") {
		t.Errorf("a dropped non-image: writing %v, message %q", p.Writing(), h.s.message.Text)
	}
	// Dropped elsewhere (the prompt), the file is a condition image as before.
	h.s.work.Drop(centreOf(h.s.prompt.Box), []fyne.URI{storage.NewFileURI(picture)})
	h.pump("the condition image", func() bool { return len(h.s.draft().Conditions) == 1 })

	// A right-click on a finished batch cell opens its menu. (Last: the test driver places
	// objects in the newest window, so a second window would move the drops above.)
	sw := test.NewTempWindow(t, sheet.Box)
	sheet.Box.Show()
	sw.Resize(fyne.NewSize(400, 400))
	test.TapSecondary(cell)
	if top := sw.Canvas().Overlays().Top(); top == nil || !strings.Contains(test.RenderObjectToMarkup(top), prompthelp.MenuCheck) {
		t.Error("a right-click on a finished batch image shows no menu with " + prompthelp.MenuCheck)
	} else {
		sw.Canvas().Overlays().Remove(top)
	}
}

// With "Check each image against its prompt" on in Settings, a job's finished image is checked
// against the job's prompt, the answers listed under Check picture and summed up in the canvas's
// caption beside the image.
func TestCheckEachImageWhenOnInSettings(t *testing.T) {
	model := generatecase.Model(t, tinysnapshot.Permutation{A: 7907, B: 5}, convert.ProfileCortiq)
	h := newHarnessWith(t, 0, func(_ *harness, d *Deps) {
		d.Settings.Model, d.Settings.CheckImages = model, true
		d.Settings.Width, d.Settings.Height = 256, 256
	})
	h.patience = 3 * time.Minute
	p := h.s.help
	h.s.prompt.Text.SetText("a heron, two reeds")
	test.Tap(h.s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the finished image's Check", func() bool { return !p.Checks.Hidden && !p.Writing() })
	lines := strings.Split(p.Checks.Text, "\n")
	if want := "Check of job " + strconv.Itoa(int(h.s.canvasJob)) + "'s image:"; len(lines) != 3 || lines[0] != want || !strings.HasSuffix(lines[2], " two reeds") {
		t.Errorf("Check of the finished image: %q, want %q and a line per element", p.Checks.Text, want)
	}
	if c := h.s.canvas.Caption.Text; !strings.HasPrefix(c, "Check: ") || !strings.HasSuffix(c, " two reeds") {
		t.Errorf("the canvas's caption %q does not sum up the Check of the image it shows", c)
	}
}
