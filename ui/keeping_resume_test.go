package ui

import (
	"bytes"
	"context"
	"easel/ui/recipe"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/jobs"
	"easel/app/memplan"
	"easel/app/unfinished"
	"easel/engine/convert"
	"easel/engine/pipeline"
	"easel/internal/tinymodel"
)

// holdAtStep is the window's generator, except that the run of prompt stops at step: it waits
// there until its job is stopped (the window closing stands for the process ending mid-job).
type holdAtStep struct {
	jobs.Generator
	prompt  string
	step    int
	reached atomic.Bool
	poke    func()
}

func (g *holdAtStep) Run(ctx context.Context, req pipeline.Request, events chan<- pipeline.Event) (*pipeline.Result, error) {
	if strings.Contains(req.Prompt, g.prompt) {
		on := req.OnStep
		req.OnStep = func(s pipeline.StepState) {
			if on != nil {
				on(s)
			}
			if s.Step == g.step {
				g.reached.Store(true)
				g.poke() // a UI call, so the test's pump looks again
				<-ctx.Done()
			}
		}
	}
	return g.Generator.Run(ctx, req, events)
}

var resumePrompts = []string{"a paper crane", "a fox in snow", "a red door"}

// resumeWindow opens the window on the tiny model with jobs kept in store, running on gen.
func resumeWindow(t *testing.T, model string, gen jobs.Generator, store *unfinished.Store) *harness {
	h := newHarnessWith(t, 64e9, func(h *harness, d *Deps) {
		d.Generator, d.Unfinished = gen, store
		d.Settings.Model = model
		g, err := memplan.GeometryOf(model)
		if err != nil {
			t.Fatal(err)
		}
		d.Geometry = g
	})
	h.patience = 5 * time.Minute // a hang guard: real runs are slow on a loaded 2-core machine
	return h
}

// queueThree queues the three prompts, 256×256, 3 steps, seeds 11, 12, 13.
func queueThree(h *harness) {
	h.s.options.SizeSelect.SetSelected(recipe.SizeCustomLabel)
	h.s.options.CustomW.SetText("256")
	h.s.options.CustomH.SetText("256")
	h.s.options.Steps.SetText("3")
	h.s.options.SeedMode.SetSelected("Fixed")
	for i, p := range resumePrompts {
		h.s.options.SeedEntry.SetText(strconv.Itoa(11 + i))
		h.s.prompt.Text.SetText(p)
		test.Tap(h.s.generateBtn)
	}
}

// savedPixels are the history's images by prompt.
func savedPixels(t *testing.T, h *harness) map[string][]byte {
	out := map[string][]byte{}
	for _, e := range h.s.history.Entries {
		data, err := os.ReadFile(e.Path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Settings.Prompt] = nrgbaPix(img)
	}
	return out
}

// TestWindowResumesUnfinishedJobs: a queue of three jobs whose process stops in the second
// (after its second step's checkpoint); a new window offers "Resume 2 unfinished jobs", and the
// resumed jobs' pictures equal an uninterrupted window's bit for bit, leaving nothing kept; on
// another stop, Discard removes every kept job and checkpoint.
func TestWindowResumesUnfinishedJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the tiny model")
	}
	model := tinymodel.Path(t, convert.Options{Profile: convert.ProfileF16})
	gen := &jobs.ModelGenerator{Path: model}
	t.Cleanup(func() { gen.Close() })

	whole, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := resumeWindow(t, model, gen, whole)
	queueThree(h)
	h.pump("three jobs saved", func() bool { return len(h.s.history.Entries) == 3 })
	want := savedPixels(t, h)
	h.closeWindow()
	if left, _ := whole.List(); len(left) != 0 {
		t.Fatalf("%d jobs kept after all were saved", len(left))
	}

	support := t.TempDir()
	stopping := func() *harness {
		store, err := unfinished.Open(support)
		if err != nil {
			t.Fatal(err)
		}
		held := &holdAtStep{Generator: gen, prompt: resumePrompts[1], step: 2}
		h := resumeWindow(t, model, held, store)
		held.poke = func() { h.calls <- func() {} }
		queueThree(h)
		h.pump("the second job at step 2", func() bool { return held.reached.Load() || len(h.s.history.Entries) > 1 })
		if !held.reached.Load() {
			t.Fatal("the second job never stopped at step 2")
		}
		h.pump("the first job saved", func() bool { return len(h.s.history.Entries) == 1 })
		h.closeWindow() // the process ends here
		return h
	}
	stopping()
	store, _ := unfinished.Open(support)
	h = resumeWindow(t, model, gen, store)
	if h.s.keeping.Offer() == nil || h.s.keeping.Offer().ResumeAll.Text != "Resume 2 unfinished jobs" {
		t.Fatalf("the new window offers %v", h.s.keeping.Offer().ResumeAll)
	}
	rows := offerRowTexts(h.s.keeping.Offer().Rows)
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "a fox in snow | seed 12 · ") || !strings.Contains(rows[0], " · "+thisMachine()+" · step ") || !strings.HasSuffix(rows[0], " of 3") ||
		!strings.HasPrefix(rows[1], "a red door | seed 13 · ") || !strings.HasSuffix(rows[1], " · waiting") {
		t.Errorf("the offer's rows are %q; want one per job: the second job's step and the third waiting", rows)
	}
	test.Tap(h.s.keeping.Offer().ResumeAll)
	h.pump("the two resumed jobs saved", func() bool { return len(h.s.history.Entries) == 2 })
	got := savedPixels(t, h)
	for _, p := range resumePrompts[1:] {
		if !bytes.Equal(got[p], want[p]) {
			t.Errorf("%q resumed differs from the uninterrupted run", p)
		}
	}
	h.closeWindow()
	if left, _ := store.List(); len(left) != 0 {
		t.Errorf("%d jobs kept after the resumed ones were saved", len(left))
	}

	stopping()
	h = resumeWindow(t, model, gen, store)
	if h.s.keeping.Offer().DiscardAll == nil {
		t.Fatal("no offer after the second stop")
	}
	test.Tap(h.s.keeping.Offer().DiscardAll)
	entries, _ := os.ReadDir(filepath.Join(support, "unfinished"))
	if len(entries) != 0 {
		t.Errorf("left after Discard: %v", entries)
	}
}

// nrgbaPix is a decoded PNG's pixels as non-premultiplied RGBA bytes.
func nrgbaPix(img image.Image) []byte {
	b := img.Bounds()
	out := make([]byte, 0, 4*b.Dx()*b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			out = append(out, c.R, c.G, c.B, c.A)
		}
	}
	return out
}

// offerRowTexts is each row of the resume offer as "prompt | facts".
func offerRowTexts(rows *fyne.Container) []string {
	var out []string
	for _, r := range rows.Objects {
		var labels []string
		var walk func(o fyne.CanvasObject)
		walk = func(o fyne.CanvasObject) {
			switch v := o.(type) {
			case *widget.Label:
				labels = append(labels, v.Text)
			case *fyne.Container:
				for _, c := range v.Objects {
					walk(c)
				}
			}
		}
		walk(r)
		out = append(out, strings.Join(labels, " | "))
	}
	return out
}
