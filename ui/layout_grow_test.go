package ui

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// grownRunes is how long every grown text is at least: longer than any line the column or a
// dialog can show at either screen size, as a long file name, a long prompt or an error with a
// path in it is.
const grownRunes = 180

// grownText is s made long the way real texts get long: its own words repeated (a prompt, a file
// name, an error), or, for an empty text, a long file name.
func grownText(s string) string {
	if strings.TrimSpace(s) == "" {
		return "a-very-long-file-name-for-a-reference-photograph-taken-on-holiday-in-the-mountains-at-dusk-with-the-lantern-lit-1234567890.png"
	}
	out := s
	for len([]rune(out)) < grownRunes {
		out += " " + s
	}
	return out
}

// longestSeed is the widest seed a value line shows (the largest uint64; a typed seed may be
// any of them), and longCount the widest other whole number (steps, images, seconds, megabytes).
const (
	longestSeed = "18446744073709551615"
	longCount   = "8888"
)

// longNumbers is a value line (one the code formats to show whole: "seed 42 · 4 images",
// "0.20", "3 s in all") at its widest: every seed (six digits or more) the longest seed, every
// other whole number four digits, decimals as they are; an empty line a seed alone.
func longNumbers(s string) string {
	if strings.TrimSpace(s) == "" {
		return longestSeed
	}
	var b strings.Builder
	r := []rune(s)
	for i := 0; i < len(r); {
		if r[i] < '0' || r[i] > '9' {
			b.WriteRune(r[i])
			i++
			continue
		}
		j := i
		for j < len(r) && r[j] >= '0' && r[j] <= '9' {
			j++
		}
		switch {
		case i > 0 && r[i-1] == '.':
			b.WriteString(string(r[i:j])) // a decimal's places
		case j-i >= 6:
			b.WriteString(longestSeed)
		default:
			b.WriteString(longCount)
		}
		i = j
	}
	return b.String()
}

// grown is the long text a label holding s gets: any length at all where the label wraps or
// ends in an ellipsis (the code made room for a long text), its numbers at their widest where
// it does neither (the code formats a value to show whole), and s itself for a fixed word.
func grown(s string, wrap fyne.TextWrap, trunc fyne.TextTruncation) string {
	switch {
	case wrap != fyne.TextWrapOff || trunc != fyne.TextTruncateOff:
		return grownText(s)
	case s != "" && sourceLiteral(s):
		return s
	}
	return longNumbers(s)
}

// sourceLiteral says whether s is written as it stands in the window's source; it panics if the
// source cannot be read (the test must not quietly grow fewer texts).
func sourceLiteral(s string) bool {
	lits, err := sourceLiterals()
	if err != nil {
		panic(fmt.Sprintf("reading the window's string constants: %v", err))
	}
	return lits[s]
}

// sourceLiterals are the string constants written in the window's source (package ui and the
// region packages under it, tests left out), read once.
var sourceLiterals = sync.OnceValues(func() (map[string]bool, error) {
	lits := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
				if s, err := strconv.Unquote(b.Value); err == nil {
					lits[s] = true
				}
			}
			return true
		})
		return nil
	})
	if err == nil && len(lits) == 0 {
		err = fmt.Errorf("no Go files under %q", ".")
	}
	return lits, err
})

// growTexts sets every text shown under o whose content the window writes at run time to a long
// text (grown) and returns what puts the texts back. Those texts are every visible widget.Label
// and widget.RichText outside the controls, and every canvas.Text the window's own widgets draw
// (a widget that derives its caption again when laid out, as a meter fitting its bar, keeps
// its own): the notices, prompt help's suggestion and checks, the
// queue and resume rows, the memory and strip labels, the Size and plan lines, the cell captions,
// the dialogs' messages, the fields' values. The words a widget draws of its own (a form row's
// name, a button's, a check's or a section header's title) are fixed, and an entry's text is the
// artist's, which the entry scrolls; those are left as they are.
func growTexts(o fyne.CanvasObject) (restore func()) {
	var undo []func()
	var grow func(o fyne.CanvasObject)
	grow = func(o fyne.CanvasObject) {
		if o == nil || !o.Visible() {
			return
		}
		switch v := o.(type) {
		case *widget.Label:
			was := v.Text
			v.SetText(grown(was, v.Wrapping, v.Truncation))
			undo = append(undo, func() { v.SetText(was) })
			return
		case *widget.RichText:
			was := make([]string, len(v.Segments))
			for i, seg := range v.Segments {
				if t, ok := seg.(*widget.TextSegment); ok {
					was[i] = t.Text
					t.Text = grown(t.Text, v.Wrapping, v.Truncation)
				}
			}
			v.Refresh()
			undo = append(undo, func() {
				for i, seg := range v.Segments {
					if t, ok := seg.(*widget.TextSegment); ok && i < len(was) {
						t.Text = was[i]
					}
				}
				v.Refresh()
			})
			return
		case *canvas.Text:
			// Drawn by one of the window's own widgets (a cell's caption); a widget that derives
			// its text again when laid out (a meter fitting its caption) keeps its own.
			was := v.Text
			v.Text = grown(was, fyne.TextWrapOff, fyne.TextTruncateOff)
			v.Refresh()
			undo = append(undo, func() { v.Text = was; v.Refresh() })
			return
		case *widget.Form:
			for _, it := range v.Items {
				grow(it.Widget)
			}
			return
		case *widget.Accordion:
			for _, it := range v.Items {
				if it.Open {
					grow(it.Detail)
				}
			}
			return
		case fyne.Focusable, *widget.Button, *widget.Hyperlink, *widget.ProgressBar:
			// Controls: their words are fixed, an entry's are the artist's own.
			return
		}
		kids, _ := children(o)
		for _, c := range kids {
			grow(c)
		}
	}
	grow(o)
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
}

// textCuts lists the texts under o that clip their text without an ellipsis: cut with nothing
// to say there is more. (A text whose letters run out of its object, a label that neither wraps
// nor ends in an ellipsis given less room than its text or a wrapping one given less height than
// its lines, is found by the layout walk: its lines stick out of their parent.) A text that ends
// in an ellipsis may be as narrow as its container makes it: that is how it says there is more.
func textCuts(o fyne.CanvasObject, path string) []string {
	var out []string
	var walk func(o fyne.CanvasObject, path string)
	walk = func(o fyne.CanvasObject, path string) {
		if o == nil || !o.Visible() {
			return
		}
		var wrap fyne.TextWrap
		var trunc fyne.TextTruncation
		var full fyne.Size
		switch v := o.(type) {
		case *widget.Label:
			wrap, trunc = v.Wrapping, v.Truncation
			full = (&widget.Label{Text: v.Text, TextStyle: v.TextStyle, SizeName: v.SizeName}).MinSize()
		case *widget.RichText:
			wrap, trunc = v.Wrapping, v.Truncation
			full = widget.NewRichText(v.Segments...).MinSize()
		case fyne.Focusable:
			return // an entry scrolls its text on purpose
		default:
			kids, _ := children(o)
			for _, c := range kids {
				walk(c, path+" > "+describe(c))
			}
			return
		}
		if size := o.Size(); trunc == fyne.TextTruncateClip && wrap == fyne.TextWrapOff && size.Width > layoutSlack && full.Width > size.Width+layoutSlack {
			out = append(out, fmt.Sprintf("%s (%.0f wide) clips its %.0f-wide text without an ellipsis", path, size.Width, full.Width))
		}
	}
	walk(o, path)
	return out
}

// unreachable lists the controls among want that an artist cannot reach under root laid out in
// win: one hidden, squashed below its own height, outside the window, or inside a scroll whose
// content does not hold it (scrolling would not bring it into view).
func unreachable(root fyne.CanvasObject, win rect, want map[fyne.CanvasObject]string) []string {
	found := map[fyne.CanvasObject]bool{}
	var out []string
	var walk func(o fyne.CanvasObject, at, reach rect)
	walk = func(o fyne.CanvasObject, at, reach rect) {
		if name, ok := want[o]; ok {
			found[o] = true
			min := o.MinSize()
			switch {
			case o.Size().Height+layoutSlack < min.Height || o.Size().Width+layoutSlack < min.Width:
				out = append(out, fmt.Sprintf("%s is squashed to %.0f×%.0f (it needs %.0f×%.0f)", name, o.Size().Width, o.Size().Height, min.Width, min.Height))
			case !reach.contains(at):
				out = append(out, fmt.Sprintf("%s at %v lies outside what can be brought into view %v", name, at, reach))
			}
		}
		inner := reach
		if sc, ok := o.(*container.Scroll); ok && sc.Content != nil {
			// Everything in the scroll's content can be scrolled to, within the scroll's place.
			c := sc.Content
			p, s := c.Position(), c.Size()
			content := rect{at.x0 + p.X, at.y0 + p.Y, at.x0 + p.X + s.Width, at.y0 + p.Y + s.Height}
			inner = reach.intersect(at)
			switch sc.Direction {
			case container.ScrollVerticalOnly:
				inner.y0, inner.y1 = content.y0, content.y1
			case container.ScrollHorizontalOnly:
				inner.x0, inner.x1 = content.x0, content.x1
			case container.ScrollBoth:
				inner = content
			}
		}
		kids, _ := children(o)
		for _, c := range kids {
			if c == nil || !c.Visible() {
				continue
			}
			p, s := c.Position(), c.Size()
			walk(c, rect{at.x0 + p.X, at.y0 + p.Y, at.x0 + p.X + s.Width, at.y0 + p.Y + s.Height}, inner)
		}
	}
	p, s := root.Position(), root.Size()
	walk(root, rect{p.X, p.Y, p.X + s.Width, p.Y + s.Height}, win)
	for o, name := range want {
		if !found[o] {
			out = append(out, name+" is not shown")
		}
	}
	return out
}

// sectionHeaders are the header buttons of every open accordion under o, named by their titles.
func sectionHeaders(o fyne.CanvasObject, into map[fyne.CanvasObject]string) {
	if o == nil || !o.Visible() {
		return
	}
	if a, ok := o.(*widget.Accordion); ok {
		for _, c := range test.WidgetRenderer(a).Objects() {
			if b, ok := c.(*widget.Button); ok && b.Visible() {
				into[b] = fmt.Sprintf("the section header %q", b.Text)
			}
		}
	}
	kids, _ := children(o)
	for _, c := range kids {
		sectionHeaders(c, into)
	}
}

// assertGrownLayoutFits is assertLayoutFits with every run-time text of the window and its
// dialogs grown long (growTexts), at each screen size: the window still fits with nothing
// outside its parent, its scroll or the window and no tiled siblings overlapping
// (layoutProblems); no text is cut (textCuts); and Generate, Cancel and every section header
// can be reached (unreachable). The texts are put back afterwards.
func assertGrownLayoutFits(t *testing.T, s *window, what string) {
	t.Helper()
	w := s.win
	for _, size := range []fyne.Size{screen1280, screen1440} {
		where := fmt.Sprintf("%s, every text grown, at %.0f×%.0f", what, size.Width, size.Height)
		if ps := layoutProblems(w, size); len(ps) > 0 {
			t.Errorf("%s: laid out at the screen's size before growing: %s", where, strings.Join(ps, "; "))
		}
		roots := append([]fyne.CanvasObject{w.Content()}, w.Canvas().Overlays().List()...)
		// The texts change in place, and the window is laid out again only where a minimum size
		// changed, as the desktop driver does frame after frame: a container that does not
		// measure itself again keeps its old layout, and what grew draws outside it.
		mins := minSizes{}
		for _, r := range roots {
			mins.record(r)
		}
		var restores []func()
		for _, r := range roots {
			restores = append(restores, growTexts(r))
		}
		for _, r := range roots {
			if !mins.settle(r) {
				t.Errorf("%s: the layout does not settle: each frame measures something new", where)
			}
		}
		for _, p := range placementProblems(w, size) {
			t.Errorf("%s: %s", where, p)
		}
		for i, r := range roots {
			name := "window"
			if i > 0 {
				name = "dialog"
			}
			for _, p := range textCuts(r, name) {
				t.Errorf("%s: %s", where, p)
			}
		}
		controls := map[fyne.CanvasObject]string{s.generateBtn: "Generate", s.cancelBtn: "Cancel"}
		sectionHeaders(w.Content(), controls)
		win := rect{0, 0, size.Width, size.Height}
		for _, p := range unreachable(w.Content(), win, controls) {
			t.Errorf("%s: %s", where, p)
		}
		for i := len(restores) - 1; i >= 0; i-- {
			restores[i]()
		}
		for _, r := range roots {
			mins.settle(r)
		}
	}
}

// minSizes are the minimum sizes the driver last measured, object by object.
type minSizes map[fyne.CanvasObject]fyne.Size

// record measures every visible object under o.
func (m minSizes) record(o fyne.CanvasObject) {
	if o == nil || !o.Visible() {
		return
	}
	m[o] = o.MinSize()
	kids, _ := children(o)
	for _, c := range kids {
		m.record(c)
	}
}

// frame does what the desktop driver does before drawing a frame: it measures every visible
// object under o and lays out again each parent of one whose minimum size changed (or that is
// new); a parent laid out resizes its children, which lay themselves out. It says whether any
// minimum size changed.
func (m minSizes) frame(o fyne.CanvasObject) bool {
	if o == nil || !o.Visible() {
		return false
	}
	kids, _ := children(o)
	dirty := false
	for _, c := range kids {
		if m.frame(c) {
			dirty = true
		}
	}
	if dirty {
		switch v := o.(type) {
		case *fyne.Container:
			if v.Layout != nil {
				v.Layout.Layout(v.Objects, v.Size())
			}
		case fyne.Widget:
			test.WidgetRenderer(v).Layout(v.Size())
		}
	}
	min := o.MinSize()
	old, seen := m[o]
	m[o] = min
	return !seen || old != min
}

// settle runs frames until no minimum size changes, and says whether that happened within a few.
func (m minSizes) settle(o fyne.CanvasObject) bool {
	for range 8 {
		if !m.frame(o) {
			return true
		}
	}
	return false
}
