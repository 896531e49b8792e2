package imagework

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/compose"
	"easel/app/imagefile"
	"easel/app/maskpaint"
	"easel/app/memplan"
	"easel/app/settings"

	"easel/ui/model"
)

// fakeCanvas records what the region asks of the canvas.
type fakeCanvas struct {
	editing  bool
	shown    image.Image
	ext      [4]int
	caption  string
	crop     image.Rectangle
	label    string
	erase    bool
	diameter float64
	maskOn   bool
	redrawn  int
}

func (c *fakeCanvas) Edit(img image.Image, _ *maskpaint.Mask, ext [4]int, caption string) {
	c.editing, c.shown, c.ext, c.caption = true, img, ext, caption
}
func (c *fakeCanvas) StopEditing()  { c.editing = false }
func (c *fakeCanvas) Editing() bool { return c.editing }
func (c *fakeCanvas) SetFrame(crop image.Rectangle, label, caption string) {
	c.crop, c.label = crop, label
	if caption != "" {
		c.caption = caption
	}
}
func (c *fakeCanvas) SetErase(erase bool)       { c.erase = erase }
func (c *fakeCanvas) SetBrush(diameter float64) { c.diameter = diameter }
func (c *fakeCanvas) ShowMask(on bool)          { c.maskOn = on }
func (c *fakeCanvas) RedrawMask()               { c.redrawn++ }
func (c *fakeCanvas) Holds(fyne.Position) bool  { return false }

// bench is the region built alone: a model, a fake canvas, a test window and a shell that
// records what it was asked.
type bench struct {
	t        *testing.T
	dir      string
	m        *model.Window
	canvas   *fakeCanvas
	r        *Region
	win      fyne.Window
	calls    chan func() // what the region hands to the UI goroutine
	remember []string
	shown    []dialog.Dialog
	clip     []byte
	files    []string // ShowFile's paths
	restored int
}

func newBench(t *testing.T) *bench {
	t.Helper()
	test.NewTempApp(t)
	b := &bench{t: t, dir: t.TempDir(), canvas: &fakeCanvas{}, calls: make(chan func(), 16)}
	b.m = model.New(compose.NewDraft(settings.Defaults()))
	b.win = test.NewTempWindow(t, nil)
	b.r = New(b.m, b.canvas, Shell{
		Do:     func(f func()) { b.calls <- f },
		Window: b.win,
		Show: func(d dialog.Dialog) {
			b.shown = append(b.shown, d)
			d.Show()
		},
		PickFile:       func([]string, string, func(string)) { t.Error("no file dialog in these tests") },
		Clipboard:      func() fyne.Clipboard { return nil },
		ClipboardImage: func() []byte { return b.clip },
		Remember:       func(what string) { b.remember = append(b.remember, what) },
		MaskEdited:     func() {},
		DraftChanged:   func() {},
		Restored:       func() { b.restored++ },
		ShowingStart:   func() {},
		ShowFile:       func(path string) { b.files = append(b.files, path) },
		Predict:        func(memplan.Plan) memplan.Prediction { return memplan.Prediction{} },
		LoRADirs:       func(string) []string { return nil },
		OutputFolder:   func() string { return b.dir },
	})
	b.win.SetContent(b.r.Box())
	b.win.Resize(fyne.NewSize(340, 900))
	return b
}

// pump runs what the region handed to the UI goroutine until cond holds.
func (b *bench) pump(what string, cond func() bool) {
	b.t.Helper()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case f := <-b.calls:
			f()
		case <-deadline:
			b.t.Fatalf("waited a minute for %s", what)
		}
	}
}

// picture is a w×h PNG's bytes.
func picture(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (b *bench) writePNG(name string, w, h int) string {
	path := filepath.Join(b.dir, name)
	if err := os.WriteFile(path, picture(b.t, w, h), 0o644); err != nil {
		b.t.Fatal(err)
	}
	return path
}

func (b *bench) condition(name string, w, h int) compose.Condition {
	c, err := compose.LoadCondition(b.writePNG(name, w, h))
	if err != nil {
		b.t.Fatal(err)
	}
	return c
}

// The section shows the start image the model holds, and its controls change the model and the
// canvas: the mask's state and undo, the brush, the eraser, the overlay, the extension and its
// reset, the fit; removing the start image says how to take it back.
func TestSectionFollowsTheStartImage(t *testing.T) {
	b := newBench(t)
	p := b.r.panel
	if !p.details.Hidden || !p.show.Disabled() {
		t.Fatal("without a start image the section shows its controls")
	}
	b.r.SetStart(b.condition("photo.png", 320, 256))
	if p.name.Text != "Start from · photo.png" || p.size.Text != "320×256" || p.details.Hidden || !p.accordion.Items[0].Open {
		t.Fatalf("the section shows %q %q (details hidden %v)", p.name.Text, p.size.Text, p.details.Hidden)
	}
	if !b.canvas.editing || b.canvas.shown.Bounds().Dx() != 320 || !strings.Contains(b.canvas.caption, "photo.png") {
		t.Fatalf("the canvas edits %v a %v image, caption %q", b.canvas.editing, b.canvas.shown.Bounds(), b.canvas.caption)
	}
	if b.canvas.label == "" {
		t.Error("no generation frame on the start image")
	}
	if !p.undo.Disabled() || !strings.HasPrefix(p.maskState.Text, "No mask") {
		t.Errorf("a new mask: undo on %v, state %q", !p.undo.Disabled(), p.maskState.Text)
	}

	mask := b.m.Canvas().Start.Mask
	mask.Begin()
	mask.Stroke(maskpaint.Point{X: 10, Y: 10}, maskpaint.Point{X: 60, Y: 10}, 8, false)
	mask.End()
	b.r.MaskChanged()
	if p.undo.Disabled() || !strings.Contains(p.maskState.Text, "covers") {
		t.Errorf("after a stroke: undo off %v, state %q", p.undo.Disabled(), p.maskState.Text)
	}
	test.Tap(p.undo)
	if !mask.Empty() || b.canvas.redrawn == 0 {
		t.Errorf("Undo left paint (empty %v) or did not redraw the canvas", mask.Empty())
	}
	p.brush.SetValue(100)
	p.tool.SetSelected(eraserLabel)
	p.showMask.SetChecked(false)
	if b.canvas.diameter != 100 || !b.canvas.erase || b.canvas.maskOn {
		t.Errorf("the canvas's brush %v, erase %v, overlay %v", b.canvas.diameter, b.canvas.erase, b.canvas.maskOn)
	}

	b.r.ExtendSide(model.SideRight)
	if b.m.Canvas().Extend != [4]int{0, 0, ExtendStep, 0} || b.canvas.shown.Bounds().Dx() != 320+ExtendStep {
		t.Fatalf("extension %v, canvas %v", b.m.Canvas().Extend, b.canvas.shown.Bounds())
	}
	if !strings.Contains(p.extendInfo.Text, "+64 right") || p.strengthV.Text != "1.00 · extending" || !p.strength.Disabled() ||
		p.fit.Selected != FitFollowLabel || !p.fit.Disabled() || p.resetExt.Disabled() {
		t.Errorf("extended: %q, strength %q (off %v), fit %q (off %v)", p.extendInfo.Text, p.strengthV.Text, p.strength.Disabled(), p.fit.Selected, p.fit.Disabled())
	}
	test.Tap(p.resetExt)
	if b.m.Canvas().Extend != [4]int{} || p.strength.Disabled() || p.strengthV.Text != "0.60" || p.fit.Selected != FitCoverLabel {
		t.Errorf("after Reset: extension %v, strength %q (off %v), fit %q", b.m.Canvas().Extend, p.strengthV.Text, p.strength.Disabled(), p.fit.Selected)
	}
	p.fit.SetSelected(FitFollowLabel)
	if !b.m.Canvas().FollowImage {
		t.Error("choosing the fit left the model's")
	}

	test.Tap(p.remove)
	if b.m.Canvas().Start != nil || b.canvas.editing || len(b.remember) != 1 || !strings.Contains(b.remember[0], "photo.png") {
		t.Errorf("after remove: start %v, editing %v, undo steps %q", b.m.Canvas().Start != nil, b.canvas.editing, b.remember)
	}
	if n := b.m.Notice(); n.Kind != model.NoticeInfo || !strings.Contains(n.Text, "Back to text to image") {
		t.Errorf("the notice after removing: %+v", n)
	}
}

// An extension past the model's largest side or the memory budget is refused with the reason;
// the model keeps the extension it had.
func TestExtendRefusals(t *testing.T) {
	b := newBench(t)
	b.r.ExtendSide(model.SideTop)
	if !strings.Contains(b.m.Notice().Text, "needs a start image") {
		t.Errorf("extending without a start image says %q", b.m.Notice().Text)
	}
	b.r.SetStart(b.condition("wide.png", 4032, 512))
	b.r.ExtendSide(model.SideLeft)
	b.r.ExtendSide(model.SideLeft)
	if b.m.Canvas().Extend[model.SideLeft] != ExtendStep || !strings.Contains(b.m.Notice().Text, "at most 4096") {
		t.Errorf("past 4096: extension %v, notice %q", b.m.Canvas().Extend, b.m.Notice().Text)
	}
	b.r.sh.Predict = func(memplan.Plan) memplan.Prediction { return memplan.Prediction{Budget: 1e9, Peak: 2e9} }
	b.r.ExtendSide(model.SideBottom)
	if b.m.Canvas().Extend[model.SideBottom] != 0 || !strings.Contains(b.m.Notice().Text, "needs about") {
		t.Errorf("past the budget: extension %v, notice %q", b.m.Canvas().Extend, b.m.Notice().Text)
	}
}

// Paste in the section takes the clipboard's picture as the start image, else the image file its
// text names; other text gets a message.
func TestPasteAStartImage(t *testing.T) {
	b := newBench(t)
	cb := test.NewClipboard()
	cb.SetContent("just some words")
	if !b.r.pasteStart(cb) || b.m.Canvas().Start != nil || !strings.Contains(b.m.Notice().Text, "is not an image file") {
		t.Fatalf("pasting words: start %v, notice %q", b.m.Canvas().Start != nil, b.m.Notice().Text)
	}
	cb.SetContent(b.writePNG("copied.png", 96, 64))
	if !b.r.pasteStart(cb) {
		t.Fatal("a pasted image path was not taken")
	}
	b.pump("the pasted file", func() bool { return b.m.Canvas().Start != nil })
	if b.m.Canvas().Start.Image.Name != "copied.png" {
		t.Errorf("start image %q", b.m.Canvas().Start.Image.Name)
	}
	b.clip = picture(t, 64, 48)
	if !b.r.pasteStart(cb) || !strings.HasPrefix(b.m.Canvas().Start.Image.Name, "pasted image") || b.m.Canvas().Start.Image.Image.Rect.Dx() != 64 {
		t.Errorf("the clipboard's picture was not taken: %+v", b.m.Canvas().Start.Image.Name)
	}
}

// A picture pasted on the window is the start image with a notice that says how to take it back
// (an undo step named for it); text while typing that names no file is left to the text field.
func TestPastedPictureIsTheStartImageWithUndo(t *testing.T) {
	b := newBench(t)
	b.clip = picture(t, 96, 64)
	if !b.r.PasteAsStart(nil, false) {
		t.Fatal("the clipboard's picture was not taken")
	}
	st := b.m.Canvas().Start
	if st == nil || st.Image.Image.Rect.Dx() != 96 || len(b.m.Draft().Conditions) != 0 {
		t.Fatalf("after the paste: start %v, %d condition images", st != nil, len(b.m.Draft().Conditions))
	}
	if n := b.m.Notice(); n.Kind != model.NoticeSuccess || !strings.Contains(n.Text, "is the start image") || !strings.Contains(n.Text, undoKeyName()) {
		t.Errorf("the paste's notice: %+v", n)
	}
	if len(b.remember) != 1 || b.remember[0] != "pasting "+st.Image.Name {
		t.Errorf("undo steps %q", b.remember)
	}
	b.clip = nil
	cb := test.NewClipboard()
	cb.SetContent("a quiet harbour")
	if b.r.PasteAsStart(cb, true) {
		t.Error("typed text that names no file was taken as a picture")
	}
}

// A dropped PNG that carries settings asks what it is for; Esc (the shell hides the question)
// changes nothing; Use as start image, Use as condition image and Restore the recipe do what they
// say, each once.
func TestDroppedEaselPNGAsks(t *testing.T) {
	b := newBench(t)
	ours := filepath.Join(b.dir, "made.png")
	writeEaselPNG(t, ours, 80, 48)
	b.m.SetPrompt("my prompt")
	ask := func() *dialog.CustomDialog {
		t.Helper()
		asked := b.r.RestoreQuestion()
		b.r.DropFiles([]string{ours}, false)
		b.pump("the restore question", func() bool { return b.r.RestoreQuestion() != asked })
		return b.r.RestoreQuestion()
	}
	ask().Hide() // Esc: the shell hides the question on top
	if b.m.Draft().Prompt != "my prompt" || len(b.m.Draft().Conditions) != 0 || b.m.Canvas().Start != nil || b.restored != 0 {
		t.Fatalf("after Esc: prompt %q, %d conditions, start %v", b.m.Draft().Prompt, len(b.m.Draft().Conditions), b.m.Canvas().Start != nil)
	}
	answer := func(button string) {
		t.Helper()
		ask()
		test.Tap(findButton(t, b.win.Canvas().Overlays().Top(), button))
	}
	answer("Use as start image")
	if st := b.m.Canvas().Start; st == nil || st.Image.Name != "made.png" || st.Image.Image.Rect.Dx() != 80 || b.m.Draft().Prompt != "my prompt" {
		t.Fatalf("used as the start image: start %v, prompt %q", st != nil, b.m.Draft().Prompt)
	}
	answer("Use as condition image")
	if c := b.m.Draft().Conditions; len(c) != 1 || c[0].Name != "made.png" {
		t.Fatalf("used as a condition image: %d conditions", len(c))
	}
	answer("Restore the recipe")
	if b.m.Draft().Prompt != "an owl" || b.restored != 1 || len(b.files) != 1 || b.files[0] != ours {
		t.Errorf("restored: prompt %q, restored %d, shown %q", b.m.Draft().Prompt, b.restored, b.files)
	}
	if len(b.shown) != 4 {
		t.Errorf("%d questions went through the shell's stack, want 4", len(b.shown))
	}
}

// writeEaselPNG writes a w×h PNG that carries Easel's settings (the prompt "an owl").
func writeEaselPNG(t *testing.T, path string, w, h int) {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	set := &imagefile.Settings{Prompt: "an owl", Width: 1024, Height: 1024, Steps: 12, CFG: 3, Seed: 99, Sampler: "Euler"}
	if err := imagefile.WriteFile(path, img, set); err != nil {
		t.Fatal(err)
	}
}

// findButton finds the button labelled text under o.
func findButton(t *testing.T, o fyne.CanvasObject, text string) *widget.Button {
	t.Helper()
	var found *widget.Button
	for _, c := range test.LaidOutObjects(o) {
		if bt, ok := c.(*widget.Button); ok && bt.Text == text {
			found = bt
		}
	}
	if found == nil {
		t.Fatalf("no %q button", text)
	}
	return found
}

// The section follows the canvas document whoever changes it: a start image, strength, fit,
// feather and grow set through the model's actions show in it at once.
func TestSectionFollowsTheModel(t *testing.T) {
	b := newBench(t)
	p := b.r.panel
	b.m.SetStart(b.condition("kite.png", 200, 100))
	b.m.SetStrength(0.35)
	b.m.SetFollowImage(true)
	b.m.SetFeather(10)
	b.m.SetGrow(6)
	if p.name.Text != "Start from · kite.png" || p.strengthV.Text != "0.35" || p.fit.Selected != FitFollowLabel ||
		p.featherV.Text != "10 px" || p.growV.Text != "6 px" || !strings.Contains(p.extendInfo.Text, "192×96") {
		t.Errorf("the section shows %q, strength %q, fit %q, feather %q, grow %q, %q", p.name.Text, p.strengthV.Text, p.fit.Selected, p.featherV.Text, p.growV.Text, p.extendInfo.Text)
	}
	if b.m.Canvas().Strength != 0.35 || b.m.Canvas().Feather != 10 {
		t.Errorf("showing the model's values changed them: %+v", b.m.Canvas())
	}
	b.m.RemoveStart()
	if !p.details.Hidden || !p.show.Disabled() {
		t.Error("the section still shows a removed start image's controls")
	}
}
