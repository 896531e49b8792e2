package ui

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/imagefile"
	"easel/app/imagework"
	"easel/app/settings"
	"easel/app/upscalers"
	"easel/ui/canvasarea"
	"easel/ui/kit"
)

// upscalerCase is a tiny upscaler file of the repository's reference cases.
func upscalerCase(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the upscaler case %s is missing: %v", name, err)
	}
	return p
}

// upscalersFolder points Easel's data folder at a temporary one and returns its upscalers
// folder, with the given files copied in.
func upscalersFolder(t *testing.T, files ...string) string {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir()) // macOS keeps the data folder under the home folder
	dir, err := settings.UpscalersDir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// finishedCell puts a finished w×h picture (a gradient with transparency) in the window's
// contact sheet, as a batch's first image with its recipe, saved beside the output folder.
func finishedCell(h *harness, w, hgt int, opaque bool) (*image.NRGBA, *imagefile.Settings) {
	img := image.NewNRGBA(image.Rect(0, 0, w, hgt))
	for y := range hgt {
		for x := range w {
			a := uint8(160 + x%96)
			if opaque {
				a = 255
			}
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / w), uint8(y * 255 / hgt), uint8((x + y) * 7), a})
		}
	}
	set := &imagefile.Settings{Prompt: "a heron in the reeds", Seed: 4, Width: w, Height: hgt, Steps: 20}
	h.s.sheet.Begin("a heron", []uint64{4}, nil)
	h.s.sheet.SetLiveDraft(h.s.draft()) // the recipe a second pass starts from
	h.s.sheet.Finished(0, img, img)
	h.s.sheet.Cell(0).Set = set
	src := filepath.Join(h.dir, "source.png") // where the batch saved it (not the output folder)
	if err := imagefile.WriteFile(src, img, set); err != nil {
		h.t.Fatal(err)
	}
	h.s.sheet.Saved(0, src)
	return img, set
}

// labelWith says whether a label among o's laid-out objects starts with text.
func labelWith(o fyne.CanvasObject, text string) bool {
	for _, c := range test.LaidOutObjects(o) {
		if l, ok := c.(*widget.Label); ok && strings.HasPrefix(l.Text, text) {
			return true
		}
	}
	return false
}

// readPNG decodes the PNG at path.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// pngsIn lists the PNGs in dir.
func pngsIn(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The gallery cell's "Upscale ×2 with <chosen>" runs the learned upscaler Settings names and saves
// into the history a PNG whose pixels are the upscaler's own (app/upscalers run directly on the
// same picture) and whose metadata keeps the recipe and names the upscaler and its network.
func TestGalleryUpscaleWithTheChosenUpscalerSavesItsPicture(t *testing.T) {
	file := upscalerCase(t, "upscale_rrdb_x2.pth")
	upscalersFolder(t, file)
	h := newHarness(t, 0)
	h.s.deps.Settings.Upscaler = "upscale_rrdb_x2"
	img, set := finishedCell(h, 40, 24, false)
	cell := h.s.sheet.Cell(0)

	menuItem(t, h.s.cellMenu(cell), "Upscale ×2 with upscale_rrdb_x2").Action()
	if !labelWith(h.s.sheet.Box, "Upscale ×2 with upscale_rrdb_x2: upscaling in one piece") {
		t.Error("the sheet does not show the upscale's memory prediction")
	}
	h.pump("the upscale saved", func() bool { return !h.s.upscales.Running() })
	if !strings.Contains(h.s.message.Text, "upscaled ×2 with upscale_rrdb_x2 to 80×48") {
		t.Fatalf("notice after the upscale: %q", h.s.message.Text)
	}
	saved := pngsIn(t, h.s.deps.Settings.OutputFolder)
	if len(saved) != 1 || len(h.s.history.Entries) != 1 || h.s.history.Entries[0].Path != saved[0] {
		t.Fatalf("saved %v; the history lists %d images", saved, len(h.s.history.Entries))
	}

	r, err := upscalers.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, _, err := r.Upscale(context.Background(), img, upscalers.Request{Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := readPNG(t, saved[0])
	if got.Bounds() != want.Bounds() {
		t.Fatalf("the saved picture is %v, the upscaler makes %v", got.Bounds(), want.Bounds())
	}
	for y := range want.Rect.Dy() {
		for x := range want.Rect.Dx() {
			if g, w := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA), want.NRGBAAt(x, y); g != w {
				t.Fatalf("pixel (%d,%d): saved %v, the upscaler makes %v", x, y, g, w)
			}
		}
	}
	md, err := imagefile.ReadFile(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	up := md.Settings.Upscale
	if md.Settings == nil || md.Settings.Prompt != set.Prompt || md.Settings.Seed != set.Seed || up == nil {
		t.Fatalf("the PNG's recipe %+v does not keep the source's with the upscale", md.Settings)
	}
	if up.Upscaler != "upscale_rrdb_x2" || up.Network != r.Config().String() || up.Factor != 2 || up.Width != 80 || up.Height != 48 {
		t.Errorf("the PNG records the upscale as %+v", *up)
	}
}

// Esc or Cancel while a learned upscale runs stops it between tiles: nothing is saved and the
// notice says so. While it runs the memory panel shows its prediction and Cancel is on.
func TestGalleryUpscaleCancels(t *testing.T) {
	for _, how := range []string{"Esc", "Cancel"} {
		t.Run(how, func(t *testing.T) {
			upscalersFolder(t, upscalerCase(t, "upscale_rrdb_x2.pth"))
			h := newHarness(t, 0)
			h.s.deps.Settings.Upscaler = "upscale_rrdb_x2"
			h.s.upscales.Runners.Budget = 1 // the smallest tiles: 32², so the 96×64 picture takes several
			finishedCell(h, 96, 64, false)
			if !h.s.cancelBtn.Disabled() {
				t.Fatal("Cancel is on before anything runs")
			}
			menuItem(t, h.s.cellMenu(h.s.sheet.Cell(0)), "Upscale ×2 with upscale_rrdb_x2").Action()
			if h.s.cancelBtn.Disabled() {
				t.Error("Cancel is off while the upscale runs")
			}
			if title := h.s.memory.Title.Text; title != "Memory — predicted for an upscale ×2 with upscale_rrdb_x2" {
				t.Errorf("the memory panel's title while the upscale runs: %q", title)
			}
			h.pump("the first tile", func() bool {
				if strings.HasPrefix(h.s.progress.Stage.Text, "Upscaling with upscale_rrdb_x2: tile 1 of ") {
					if how == "Esc" {
						h.s.escapeKey()
					} else {
						test.Tap(h.s.cancelBtn)
					}
					return true
				}
				return false
			})
			h.pump("the upscale stopped", func() bool { return !h.s.upscales.Running() })
			if !strings.Contains(h.s.message.Text, "cancelled; nothing was saved") {
				t.Errorf("notice after %s: %q", how, h.s.message.Text)
			}
			if saved := pngsIn(t, h.s.deps.Settings.OutputFolder); len(saved) != 0 {
				t.Errorf("a cancelled upscale saved %v", saved)
			}
			if !h.s.cancelBtn.Disabled() || strings.Contains(h.s.memory.Title.Text, "upscale") {
				t.Errorf("after the upscale: Cancel on %v, the memory panel's title %q", !h.s.cancelBtn.Disabled(), h.s.memory.Title.Text)
			}
		})
	}
}

// A dropped upscaler file is asked about first: Esc adds nothing; Add copies it into the
// upscalers folder, where Settings then lists it.
func TestDroppedUpscalerAsksThenAdds(t *testing.T) {
	file := upscalerCase(t, "upscale_rrdb_x4.pth")
	dir := upscalersFolder(t)
	h := newHarness(t, 0)
	asked := func() bool { return len(h.s.questions.open) == 1 }

	h.s.work.DropFiles([]string{file}, false)
	h.pump("the question", asked)
	h.s.escapeKey()
	if len(h.s.questions.open) != 0 {
		t.Fatal("Esc left the question open")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Esc still added %v", ents)
	}

	h.s.work.DropFiles([]string{file}, false)
	h.pump("the question again", asked)
	if !labelWith(h.w.Canvas().Overlays().Top(), "upscale_rrdb_x4.pth is a learned upscaler: RRDBNet ×4") {
		t.Error("the question does not say what the file is")
	}
	add := buttonIn(h.w.Canvas().Overlays().Top(), "Add")
	if add == nil {
		t.Fatal("the question has no Add button")
	}
	test.Tap(add)
	h.pump("the file added", func() bool { return strings.Contains(h.s.message.Text, "Added the upscaler upscale_rrdb_x4") })
	es, err := upscalers.New(dir).Usable()
	if err != nil || len(es) != 1 || es[0].Name != "upscale_rrdb_x4" || es[0].Scale() != 4 {
		t.Fatalf("the upscalers folder holds %+v (%v)", es, err)
	}
	if d := h.s.draft(); len(d.Conditions) != 0 || len(d.LoRAs) != 0 {
		t.Error("the dropped upscaler was also taken as a condition image or a LoRA")
	}
}

// A dropped .pth that is not an upscaler gets a message naming it and what works; nothing is
// added or asked.
func TestDroppedNonUpscalerFileGetsAMessage(t *testing.T) {
	dir := upscalersFolder(t)
	h := newHarness(t, 0)
	bad := filepath.Join(h.dir, "notes.pth")
	if err := os.WriteFile(bad, []byte("not a PyTorch file at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.s.work.DropFiles([]string{bad}, false)
	h.pump("the message", func() bool { return strings.Contains(h.s.message.Text, "notes.pth was not added as an upscaler") })
	if !strings.Contains(h.s.message.Text, "RRDBNet") {
		t.Errorf("the message does not say which files work: %q", h.s.message.Text)
	}
	if len(h.s.questions.open) != 0 {
		t.Error("a file that is not an upscaler was asked about")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the folder gained %v", ents)
	}
}

// With a learned upscaler chosen, the hi-res pass's offer names it and predicts its memory, and
// the pass starts from the upscaler's picture (hires.FirstStage run directly on the same image)
// and records it as A1111's hr_upscaler.
func TestHiresPassStartsFromTheChosenUpscaler(t *testing.T) {
	file := upscalerCase(t, "upscale_rrdb_x2.safetensors")
	upscalersFolder(t, file)
	h := newHarness(t, 0)
	h.s.deps.Settings.Upscaler = "upscale_rrdb_x2"
	img, _ := finishedCell(h, 64, 64, true)
	sheet := h.s.sheet
	test.Tap(sheet.Cell(0))
	test.Tap(sheet.Button("Upscale ×2"))
	if !strings.Contains(h.s.offerText, "First stage: upscale_rrdb_x2 (upscaling in one piece") {
		t.Fatalf("the offer says %q (notice %q)", h.s.offerText, h.s.message.Text)
	}
	test.Tap(findButton(t, h.w.Canvas().Overlays().Top(), "Upscale ×2"))
	req := pumpUntil(h, "the pass submitted", h.gen.started)
	// The pass's size is the offer's; the job fits its start image to the size it runs at.
	var pw, ph int
	if _, err := fmt.Sscanf(h.s.offerText[strings.Index(h.s.offerText, ": ")+2:], "%d×%d", &pw, &ph); err != nil || pw <= 64 {
		t.Fatalf("the offer %q has no size above the picture's (%v)", h.s.offerText, err)
	}
	if req.Init == nil {
		t.Fatal("the pass has no start image")
	}
	r, err := upscalers.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	first, _, err := r.Upscale(context.Background(), img, upscalers.Request{Width: pw, Height: ph})
	if err != nil {
		t.Fatal(err)
	}
	want := imagework.Fit(first, req.Width, req.Height)
	if got := req.Init.Image; got.Rect != want.Rect || string(got.Pix) != string(want.Pix) {
		t.Fatalf("the pass (%d×%d) does not start from the upscaler's %d×%d picture", req.Width, req.Height, pw, ph)
	}
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the pass saved", func() bool { return h.s.model.Current() == 0 && len(h.s.history.Entries) == 1 })
	if hs := h.s.history.Entries[0].Settings.Hires; hs == nil || hs.Upscaler != "upscale_rrdb_x2" {
		t.Errorf("the pass's PNG records hires %+v", hs)
	}
}

// The Settings dialog with an upscaler of a long name chosen and a file that is not one, the
// question a dropped upscaler gets, and the sheet after a learned upscale fit a 1280×800 and a
// 1440×900 screen with nothing overlapping, and the Settings form wraps no text.
func TestUpscalersFitTheScreen(t *testing.T) {
	const long = "4x_NMKD-Superscale-SP_178000_G-a-very-long-community-upscaler-name"
	dir := upscalersFolder(t)
	b, err := os.ReadFile(upscalerCase(t, "upscale_rrdb_x2.pth"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{long + ".pth": b, long + "-broken.pth": []byte("half")} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Store = &settings.Store{Path: filepath.Join(h.dir, "settings.json")}
		d.Settings.Upscaler = long
		if err := d.Store.Save(d.Settings); err != nil {
			t.Fatal(err)
		}
	})
	h.s.showSettings()
	top := h.w.Canvas().Overlays().Top()
	if top == nil || !labelWith(top, "RRDBNet ×2") {
		t.Fatal("the Settings dialog does not describe the chosen upscaler")
	}
	assertLayoutFits(t, h.w, "Settings with a long upscaler chosen")
	if bad := wrappedInForms(top, false, "settings"); len(bad) > 0 {
		t.Errorf("wrapped text in the Settings form: %v", bad)
	}
	files := buttonIn(top, "Files (1 not usable)…")
	if files == nil {
		t.Fatal("the Settings dialog has no Files… saying one file is not usable")
	}
	test.Tap(files)
	if len(h.s.questions.open) != 2 {
		t.Fatalf("Files… opened %d dialogs on the question stack, want the list over Settings", len(h.s.questions.open))
	}
	assertLayoutFits(t, h.w, "the upscalers folder's list")
	h.s.escapeKey()
	h.s.escapeKey()
	if len(h.s.questions.open) != 0 {
		t.Fatal("Esc twice did not close the list and Settings")
	}

	h.s.work.DropFiles([]string{upscalerCase(t, "upscale_rrdb_x4.safetensors")}, false)
	h.pump("the question", func() bool { return len(h.s.questions.open) == 1 })
	assertLayoutFits(t, h.w, "the question a dropped upscaler gets")
	h.s.escapeKey()

	finishedCell(h, 48, 32, false)
	h.s.area.Show(canvasarea.Batch)
	menuItem(t, h.s.cellMenu(h.s.sheet.Cell(0)), "Upscale ×4 with "+long).Action()
	assertLayoutFits(t, h.w, "the memory panel predicting a learned upscale")
	h.pump("the upscale saved", func() bool { return !h.s.upscales.Running() })
	if !strings.Contains(h.s.message.Text, "upscaled ×4 with "+long) {
		t.Fatalf("notice: %q", h.s.message.Text)
	}
	assertLayoutFits(t, h.w, "the sheet after a learned upscale")
}

// A history image's menu upscales it too: ×4 with the chosen upscaler (a ×2 network run twice)
// reads the picture from its file and saves the upscaler's own picture beside it, named.
func TestHistoryImageUpscalesWithTheChosenUpscaler(t *testing.T) {
	file := upscalerCase(t, "upscale_rrdb_x2.pth")
	upscalersFolder(t, file)
	h := newHarness(t, 0)
	h.s.deps.Settings.Upscaler = "upscale_rrdb_x2"
	src, set := finishedCell(h, 20, 12, false)
	e, err := h.s.deps.History.Save(src, set, time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	menuItem(t, menuItem(t, h.s.actions.Menu(e), "Upscale").ChildMenu, "×4 with upscale_rrdb_x2").Action()
	h.pump("the upscale saved", func() bool { return !h.s.upscales.Running() })
	if !strings.Contains(h.s.message.Text, filepath.Base(e.Path)+" upscaled ×4 with upscale_rrdb_x2 to 80×48") {
		t.Fatalf("notice: %q", h.s.message.Text)
	}
	var out string
	for _, p := range pngsIn(t, h.s.deps.Settings.OutputFolder) {
		if p != e.Path {
			out = p
		}
	}
	if out == "" {
		t.Fatal("nothing was saved beside the history image")
	}
	r, err := upscalers.Open(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	want, _, err := r.Upscale(context.Background(), kit.NRGBA(readPNG(t, e.Path)), upscalers.Request{Scale: 4})
	if err != nil {
		t.Fatal(err)
	}
	if got := kit.NRGBA(readPNG(t, out)); got.Rect != want.Rect || string(got.Pix) != string(want.Pix) {
		t.Fatal("the saved picture is not the upscaler's")
	}
	md, err := imagefile.ReadFile(out)
	if err != nil || md.Settings == nil || md.Settings.Upscale == nil || md.Settings.Upscale.Upscaler != "upscale_rrdb_x2" || md.Settings.Prompt != set.Prompt {
		t.Fatalf("the PNG records %+v (%v)", md, err)
	}
}
