package ui

import (
	"easel/ui/imagework"
	"fmt"
	"image"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"easel/app/grid"
	"easel/app/unfinished"
	"easel/engine/safetensors"

	"easel/ui/canvasarea"
)

// The screens the window must fit: a 13" laptop and a 15" one (points, as the window counts).
var (
	screen1280 = fyne.NewSize(1280, 800)
	screen1440 = fyne.NewSize(1440, 900)
)

// layoutSlack absorbs float rounding in layouts (a fraction of a point), nothing more.
const layoutSlack = 0.5

// rect is an object's place on the window, in window coordinates.
type rect struct{ x0, y0, x1, y1 float32 }

func (r rect) String() string {
	return fmt.Sprintf("(%.0f,%.0f)-(%.0f,%.0f)", r.x0, r.y0, r.x1, r.y1)
}

func (r rect) empty() bool { return r.x1-r.x0 <= layoutSlack || r.y1-r.y0 <= layoutSlack }

func (r rect) contains(o rect) bool {
	return o.x0 >= r.x0-layoutSlack && o.y0 >= r.y0-layoutSlack && o.x1 <= r.x1+layoutSlack && o.y1 <= r.y1+layoutSlack
}

func (r rect) intersect(o rect) rect {
	return rect{max(r.x0, o.x0), max(r.y0, o.y0), min(r.x1, o.x1), min(r.y1, o.y1)}
}

// layoutProblems lays the window's content out at size as the desktop driver does (every
// container and widget again, top down, so labels whose text changed are measured anew) and
// lists what is wrong with it:
//   - the content's minimum size exceeds size (the desktop window would grow past the screen);
//   - a visible object lies outside its parent (a row drawn over the next one, a label's text over
//     a button) or outside the window; inside a scroll, only the part in view counts;
//   - two visible siblings of a tiling container (boxes, grids, borders, forms, splits) overlap.
//
// Containers contain their children and stacks pile them up on purpose, so only siblings of
// tiling layouts are compared.
func layoutProblems(w fyne.Window, size fyne.Size) []string {
	var out []string
	w.Resize(size)
	if !relayoutSettled(w.Content()) {
		out = append(out, "the window's layout does not settle: each pass moves or resizes something again")
	}
	// Dialogs (the resume offer, the close question) lie over the content, within the window.
	for _, o := range w.Canvas().Overlays().List() {
		o.Resize(size)
		if !relayoutSettled(o) {
			out = append(out, "a dialog's layout does not settle: each pass moves or resizes something again")
		}
	}
	return append(out, placementProblems(w, size)...)
}

// placementProblems lists what is wrong with the window at size as it is laid out now.
func placementProblems(w fyne.Window, size fyne.Size) []string {
	var out []string
	content := w.Content()
	pad := theme.Padding()
	if m := content.MinSize().Add(fyne.NewSquareSize(2 * pad)); m.Width > size.Width+layoutSlack || m.Height > size.Height+layoutSlack {
		out = append(out, fmt.Sprintf("the window's minimum size %.0f×%.0f exceeds the %.0f×%.0f screen", m.Width, m.Height, size.Width, size.Height))
	}
	win := rect{0, 0, size.Width, size.Height}
	pos := content.Position()
	walkLayout(content, rect{pos.X, pos.Y, pos.X + content.Size().Width, pos.Y + content.Size().Height}, win, win, "window", &out)
	for _, o := range w.Canvas().Overlays().List() {
		p := o.Position()
		walkLayout(o, rect{p.X, p.Y, p.X + o.Size().Width, p.Y + o.Size().Height}, win, win, "dialog", &out)
	}
	return out
}

// relayout lays out every container and widget again, top down, at the size each has.
func relayout(o fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	switch v := o.(type) {
	case *fyne.Container:
		if v.Layout != nil {
			v.Layout.Layout(v.Objects, v.Size())
		}
		for _, c := range v.Objects {
			relayout(c)
		}
	case fyne.Widget:
		r := test.WidgetRenderer(v)
		r.Layout(v.Size())
		for _, c := range r.Objects() {
			relayout(c)
		}
	}
}

// relayoutSettled lays o out again until nothing moves or changes size, as the desktop driver
// does frame after frame (a wrapped text's height follows the width its first pass gave it, so
// its container measures it again on the next one), and says whether it settled within a few
// passes.
func relayoutSettled(o fyne.CanvasObject) bool {
	before := placements(o, nil)
	for range 8 {
		relayout(o)
		after := placements(o, nil)
		if slices.Equal(before, after) {
			return true
		}
		before = after
	}
	return false
}

// placements lists the position and size of every visible object under o, in walking order.
func placements(o fyne.CanvasObject, into []float32) []float32 {
	if o == nil || !o.Visible() {
		return into
	}
	p, s := o.Position(), o.Size()
	into = append(into, p.X, p.Y, s.Width, s.Height)
	kids, _ := children(o)
	for _, c := range kids {
		into = placements(c, into)
	}
	return into
}

// children are what o draws inside itself, relative to o, and whether they pile up on purpose
// (stacks, free layouts, widget renderers' parts) rather than tile.
func children(o fyne.CanvasObject) (objs []fyne.CanvasObject, tiled bool) {
	switch v := o.(type) {
	case *fyne.Container:
		if v.Layout == nil {
			return v.Objects, false
		}
		name := fmt.Sprintf("%T", v.Layout)
		tiled = !strings.Contains(name, "stack") && !strings.Contains(name, "center") && !strings.Contains(name, "dialog") && !strings.Contains(name, "custompadded") && !strings.Contains(name, "padded")
		return v.Objects, tiled
	case fyne.Widget:
		objs = test.WidgetRenderer(v).Objects()
		_, isForm := v.(*widget.Form)
		_, isSplit := v.(*container.Split)
		return objs, isForm || isSplit
	}
	return nil, false
}

// decoration says whether o is drawn around its owner on purpose (shadows, focus lines).
func decoration(o fyne.CanvasObject) bool {
	name := fmt.Sprintf("%T", o)
	return strings.Contains(name, "Shadow") || strings.Contains(name, "shadow")
}

func describe(o fyne.CanvasObject) string {
	name := fmt.Sprintf("%T", o)
	switch v := o.(type) {
	case *widget.Label:
		return fmt.Sprintf("%s %q", name, clip(v.Text))
	case *widget.Button:
		return fmt.Sprintf("%s %q", name, clip(v.Text))
	case *widget.Check:
		return fmt.Sprintf("%s %q", name, clip(v.Text))
	case *widget.Entry:
		return fmt.Sprintf("%s %q", name, clip(v.Text))
	}
	return name
}

func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:39]) + "…"
	}
	return s
}

// drawnText is where a text's letters are: renderers often give a text more room than it uses
// (the rest is blank), so the text's own width, placed by its alignment, is what is drawn.
func drawnText(t *canvas.Text) (fyne.Position, fyne.Size) {
	p, s, m := t.Position(), t.Size(), t.MinSize()
	if m.Width >= s.Width {
		return p, fyne.NewSize(m.Width, s.Height)
	}
	switch t.Alignment {
	case fyne.TextAlignCenter:
		p.X += (s.Width - m.Width) / 2
	case fyne.TextAlignTrailing:
		p.X += s.Width - m.Width
	}
	return p, fyne.NewSize(m.Width, s.Height)
}

// walkLayout checks o's children against o (at, in window coordinates), the part in view (view)
// and the window (win).
func walkLayout(o fyne.CanvasObject, at, view, win rect, path string, out *[]string) {
	kids, tiled := children(o)
	inner := view
	if _, ok := o.(*container.Scroll); ok {
		inner = view.intersect(at)
	}
	var placed []rect
	var shown []fyne.CanvasObject
	for _, c := range kids {
		if c == nil || !c.Visible() || decoration(c) {
			continue
		}
		if _, blank := c.(*layout.Spacer); blank {
			continue // draws nothing (a dialog's place for an icon it does not have)
		}
		p, s := c.Position(), c.Size()
		if t, ok := c.(*canvas.Text); ok {
			p, s = drawnText(t)
		}
		r := rect{at.x0 + p.X, at.y0 + p.Y, at.x0 + p.X + s.Width, at.y0 + p.Y + s.Height}
		if r.empty() {
			continue
		}
		seen := r.intersect(inner)
		if seen.empty() {
			continue // scrolled out of view
		}
		where := path + " > " + describe(c)
		if sc, scrolling := o.(*container.Scroll); scrolling {
			// A scroll shows the rest of its content along the directions it scrolls; across
			// the others, what does not fit is cut off.
			across := r
			switch sc.Direction {
			case container.ScrollVerticalOnly:
				across.y0, across.y1 = at.y0, at.y1
			case container.ScrollHorizontalOnly:
				across.x0, across.x1 = at.x0, at.x1
			case container.ScrollBoth:
				across = at
			}
			if !at.contains(across) {
				*out = append(*out, fmt.Sprintf("%s at %v is cut off by its scroll %v (widest: %s)", where, r, at, widest(c, at.x1-at.x0, at.y1-at.y0)))
			}
		} else if !at.contains(r) {
			*out = append(*out, fmt.Sprintf("%s at %v sticks out of its parent %v", where, r, at))
		} else if !win.contains(seen) {
			*out = append(*out, fmt.Sprintf("%s at %v lies outside the window %v", where, seen, win))
		}
		if tiled {
			for i, q := range placed {
				if both := r.intersect(q); !both.empty() {
					*out = append(*out, fmt.Sprintf("%s at %v overlaps its sibling %s at %v", where, r, describe(shown[i]), q))
				}
			}
			placed, shown = append(placed, r), append(shown, c)
		}
		walkLayout(c, r, inner, win, where, out)
	}
}

// widest names the deepest object under o whose minimum size exceeds w×h: what makes o too big.
func widest(o fyne.CanvasObject, w, h float32) string {
	kids, _ := children(o)
	var big fyne.CanvasObject
	for _, c := range kids {
		if c == nil || !c.Visible() {
			continue
		}
		if m := c.MinSize(); (m.Width > w+layoutSlack || m.Height > h+layoutSlack) && (big == nil || m.Width > big.MinSize().Width) {
			big = c
		}
	}
	if big == nil {
		return describe(o) + fmt.Sprintf(" (min %.0f×%.0f)", o.MinSize().Width, o.MinSize().Height)
	}
	return describe(o) + " > " + widest(big, w, h)
}

// assertLayoutFits fails the test with every layout problem of the window at each screen size.
func assertLayoutFits(t *testing.T, w fyne.Window, what string) {
	t.Helper()
	for _, size := range []fyne.Size{screen1280, screen1440} {
		for _, p := range layoutProblems(w, size) {
			t.Errorf("%s at %.0f×%.0f: %s", what, size.Width, size.Height, p)
		}
	}
}

// The window fits a 1280×800 and a 1440×900 screen, with nothing drawn outside it or over
// something else, through what makes it grow: long file names, a start image extended and
// restored, every section open, a batch of 16 on the sheet (a 4×4 grid of results) and in the
// history, Explore's grid, a seven-line error, the restore question, prompt help's suggestion and
// the resume offer.
//
// In each of those states, at each size, it is checked twice: as it is (assertLayoutFits), and
// with every text the window writes at run time grown long (assertGrownLayoutFits, growTexts):
// the notices, prompt help's suggestion and checks, the queue and resume rows, the memory and
// strip lines, the Size and plan lines, the cell captions, the dialogs' messages. A text that
// wraps or ends in an ellipsis gets 180 characters or more; a value line that does neither gets
// its numbers at their widest (a 20-digit seed, four-digit counts); a fixed word written as it
// stands in the source (a heading) keeps its length. With the texts grown, the window is laid
// out again only where a minimum size changed, as the desktop driver does frame after frame,
// until it settles, and the check fails on anything hidden or cut:
//   - the window's minimum size beyond the screen;
//   - an object outside its parent, its scroll (across the direction it scrolls) or the window,
//     which includes a text's letters drawn past its object (a label that neither wraps nor ends
//     in an ellipsis given less room than its text, a wrapped one given fewer lines' height
//     than it needs: a section that did not measure itself again);
//   - tiled siblings overlapping;
//   - a text clipped without an ellipsis;
//   - Generate, Cancel or a section's header hidden, squashed or out of the window's or the
//     column's reach.
//
// A text ending in an ellipsis may be as narrow as its container makes it; that is allowed.
func TestWindowFitsTheScreenThroughEveryState(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	// fits checks the window as it is and with every run-time text grown long.
	fits := func(what string) {
		t.Helper()
		assertLayoutFits(t, h.w, what)
		assertGrownLayoutFits(t, s, what)
	}
	fits("the new window")

	long := "a-very-long-file-name-for-a-reference-photograph-taken-on-holiday-in-the-mountains"
	s.work.AddFiles([]string{h.writePNG(long+"-1.png", 96, 64), h.writePNG(long+"-2.png", 64, 96)})
	h.pump("the condition images", func() bool { return len(s.draft().Conditions) == 2 })
	s.loras.Add([]string{h.writeLoRA(long + "-style.safetensors")})
	s.work.SetStart(mustCondition(t, h.writePNG(long+"-start.png", 256, 256)))
	s.work.ExtendSide(sideRight)
	openEverySection(s)
	fits("long names, an extended start image, every section open")

	// The extended image made and restored.
	test.Tap(s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the saved image", func() bool { return len(s.history.Entries) == 1 })
	s.restore(s.history.Entries[0])
	openEverySection(s)
	fits("a restored extended image")

	// A batch of 16.
	s.work.RemoveStart()
	s.model.SetCustomSize(256, 256)
	s.options.Count.SetText("16")
	fits("Images set to 16")
	test.Tap(s.generateBtn)
	<-h.gen.started
	go func() {
		for range 16 * fakeSteps {
			h.gen.step <- struct{}{}
		}
	}()
	h.pump("the batch of 16 saved", func() bool { return len(s.history.Entries) == 17 })
	openEverySection(s)
	fits("a batch of 16 on the sheet and in the history")
	s.options.Count.SetText("1")
	fits("Images set back to 1")

	// Explore open with three axes set and a 4×4 grid of results on its sheet.
	e := s.explore
	specs := [3]string{"seed=1-4", "steps=2,3,4,5", "cfg=3,4"}
	for i, spec := range specs {
		name, values, _ := strings.Cut(spec, "=")
		e.SetAxis(i, name, values)
	}
	g, err := grid.Parse(specs, grid.Context{})
	if err != nil || g.PerGrid() != 16 || e.Button().Disabled() {
		t.Fatalf("three axes: %v (%d cells a grid), the section says %q", err, g.PerGrid(), e.Info())
	}
	pictures := map[int]*image.NRGBA{}
	for i := range 16 {
		pictures[i] = image.NewNRGBA(image.Rect(0, 0, 256, 256))
	}
	e.Sheet.Draw(g, pictures)
	s.area.Show(canvasarea.Grid)
	openEverySection(s)
	fits("Explore open with three axes and a 4×4 grid on its sheet")

	// A seven-line error in the notices' place: it scrolls there, Generate stays where a
	// one-line notice leaves it.
	s.say("Settings restored.")
	relayout(h.w.Content())
	before := fyne.CurrentApp().Driver().AbsolutePositionForObject(s.generateBtn)
	s.sayKind(noticeError, "%s", strings.Repeat("Job 9 failed: the other machine stopped answering during the job.\n", 7))
	fits("a seven-line error notice")
	if after := fyne.CurrentApp().Driver().AbsolutePositionForObject(s.generateBtn); after.Y != before.Y {
		t.Errorf("a seven-line notice moved Generate from y %v to %v", before.Y, after.Y)
	}
	s.quiet()

	// The question what a dropped Easel PNG is for, with its four answers.
	s.work.AskRestore(h.writePNG(long+"-made.png", 32, 32), func(imagework.PNGUse) {})
	fits("the restore question")
	s.escapeKey()

	// Prompt help's suggestion showing a long text.
	s.help.Suggestion.SetText(strings.Repeat("a lighthouse on a basalt cliff at dusk, gulls over the surf, warm light in the lantern room, ", 12))
	s.help.SuggestionBox.Show()
	fits("prompt help's suggestion with a long text")
	// The everyday block stays in view under the prompt with a Describe result and a Check open:
	// Size and Steps are on screen at 1280×800 with the column at its top.
	s.help.Checks.SetText("Check of the picture shown:\n" + strings.Repeat("✓ a red lighthouse on the cliff\n", 8))
	s.help.Checks.Show()
	h.w.Resize(screen1280)
	relayout(h.w.Content())
	s.column.ScrollToTop()
	d := fyne.CurrentApp().Driver()
	bottom := d.AbsolutePositionForObject(s.column).Y + s.column.Size().Height
	for name, o := range map[string]fyne.CanvasObject{"Size": s.options.SizeSelect, "Steps": s.options.Steps} {
		if y := d.AbsolutePositionForObject(o).Y + o.Size().Height; y > bottom {
			t.Errorf("with a suggestion and a Check open, %s is below the fold (%v > %v)", name, y, bottom)
		}
	}

	// The offer to resume unfinished jobs, with long labels.
	store, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		d := s.draft()
		d.Prompt = fmt.Sprintf("%s %d", strings.Repeat("a very long prompt about a harbour town in winter ", 4), i)
		if _, err := store.Add(d, uint64(1000000000000+i), jobLabel(d.Prompt, uint64(1000000000000+i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	s.deps.Unfinished = store
	s.keeping.OfferResume()
	if s.keeping.Offer() == nil {
		t.Fatal("no resume offer for three kept jobs")
	}
	fits("the resume offer")
}

// openEverySection opens every folding section of the window.
func openEverySection(s *window) {
	var open func(o fyne.CanvasObject)
	open = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Accordion:
			v.MultiOpen = true
			v.OpenAll()
		case *fyne.Container:
			for _, c := range v.Objects {
				open(c)
			}
		}
		if w, ok := o.(fyne.Widget); ok {
			for _, c := range test.WidgetRenderer(w).Objects() {
				open(c)
			}
		}
	}
	open(s.win.Content())
}

// writeLoRA writes a one-tensor LoRA file (read for its name and metadata only) and returns its path.
func (h *harness) writeLoRA(name string) string {
	h.t.Helper()
	path := filepath.Join(h.dir, name)
	if err := safetensors.WriteFile(path, []*safetensors.Tensor{safetensors.F32Tensor("transformer.img_in.lora_A.weight", []int{1, 64}, make([]float32, 64))}, nil); err != nil {
		h.t.Fatal(err)
	}
	return path
}

// wrappedInForms lists the word-wrapped labels inside forms under o: a form does not measure a
// wrapped label again when its text changes, so a longer text draws over the rows under it
// (DESIGN §8, broken item 4: the Extend row over the LoRAs header).
func wrappedInForms(o fyne.CanvasObject, inForm bool, path string) []string {
	var out []string
	if l, ok := o.(*widget.Label); ok && inForm && l.Visible() && l.Wrapping != fyne.TextWrapOff {
		out = append(out, path)
	}
	_, isForm := o.(*widget.Form)
	kids, _ := children(o)
	if _, isLabel := o.(*widget.Label); isLabel {
		kids = nil
	}
	for _, c := range kids {
		if c != nil && c.Visible() {
			out = append(out, wrappedInForms(c, inForm || isForm, path+" > "+describe(c))...)
		}
	}
	return out
}

// After restoring an extended image (and through painting and extending), no form row holds a
// wrapped text, and the window lays out within the screen.
func TestRestoredExtendedImageKeepsItsRowsApart(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.work.SetStart(mustCondition(t, h.writePNG("a-start-image-with-a-long-name.png", 256, 256)))
	s.work.ExtendSide(sideRight)
	s.work.ExtendSide(sideTop)
	test.Tap(s.generateBtn)
	<-h.gen.started
	for range fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.gen.release <- struct{}{}
	h.pump("the saved image", func() bool { return len(s.history.Entries) == 1 })
	s.work.RemoveStart()
	s.restore(s.history.Entries[0])
	openEverySection(s)
	for _, p := range wrappedInForms(h.w.Content(), false, "window") {
		t.Errorf("a wrapped text in a form row: %s", p)
	}
	assertLayoutFits(t, h.w, "a restored extended image")
	if fit := fitChoice(t, s.work.Box()); !showsLabel(s.work.Box(), "1.00 · extending") || !fit.Disabled() || fit.Selected != imagework.FitFollowLabel {
		t.Errorf("the extended image shows fit %q (off: %v) and not strength 1.00 · extending; the run uses 1 and the image's size",
			fit.Selected, fit.Disabled())
	}
}

// Removing the start image gives its room back: Work on an image is as tall as it was before an
// image was added, and the next section follows it at once (issue #29's 400-px gap).
func TestRemovingTheStartImageLeavesNoGap(t *testing.T) {
	h := newHarness(t, 64e9)
	s := h.s
	s.work.Box().(*widget.Accordion).Open(0)
	before := s.work.Box().MinSize().Height
	s.work.SetStart(mustCondition(t, h.writePNG("start.png", 256, 256)))
	if with := s.work.Box().MinSize().Height; with <= before {
		t.Fatalf("with a start image the section is %.0f tall, no taller than without (%.0f)", with, before)
	}
	s.work.RemoveStart()
	if after := s.work.Box().MinSize().Height; after > before+layoutSlack {
		t.Errorf("after removing the start image the section is %.0f tall, %.0f before it was added", after, before)
	}
	h.w.Resize(screen1280)
	relayout(h.w.Content())
	d := fyne.CurrentApp().Driver()
	gap := d.AbsolutePositionForObject(s.sections).Y - (d.AbsolutePositionForObject(s.work.Box()).Y + s.work.Box().Size().Height)
	if gap > 2*theme.Padding() {
		t.Errorf("a %.0f-px gap between Work on an image and the next section", gap)
	}
}

// A new window's prompt help shows no empty line (the status line, before any writing, left a
// blank row under the source menu).
func TestPromptHelpHasNoBlankRow(t *testing.T) {
	h := newHarness(t, 64e9)
	var walk func(o fyne.CanvasObject, path string)
	walk = func(o fyne.CanvasObject, path string) {
		if o == nil || !o.Visible() {
			return
		}
		if l, ok := o.(*widget.Label); ok {
			if strings.TrimSpace(l.Text) == "" {
				t.Errorf("an empty label is shown: %s", path)
			}
			return
		}
		if c, ok := o.(*fyne.Container); ok {
			for _, k := range c.Objects {
				walk(k, path+" > "+describe(k))
			}
		}
	}
	walk(h.s.help.Box, "prompt help")
}
