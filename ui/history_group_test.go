package ui

import (
	"fmt"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"easel/app/history"
	"easel/app/imagefile"
)

// A batch's images, saved as they finish, are one group in the history — a header naming the
// batch and its seeds, then its thumbnails in order — while an older single PNG stays on its
// own; tapping one image of the group restores that image's own seed, and the header folds
// the group away and back.
func TestHistoryGroupsABatchAndRestoresOneOfItsImages(t *testing.T) {
	h := newHarness(t, 0)
	s := h.s
	s.model.SetCustomSize(256, 256)
	s.model.SetRandomSeed(false)
	s.model.SetSeed(7)
	s.options.Count.SetText("3")
	test.Tap(s.generateBtn)
	if req := <-h.gen.started; req.Count != 3 || req.Seed != 7 {
		t.Fatalf("submitted a batch of %d from seed %d", req.Count, req.Seed)
	}
	for range 3 * fakeSteps {
		h.gen.step <- struct{}{}
	}
	h.pump("the batch finished and saved", func() bool { return s.model.Current() == 0 && len(s.history.Entries) == 3 })
	s.history.AddScanned([]history.Entry{{Path: "old.png", Settings: &imagefile.Settings{Prompt: "before batches", Seed: 3}}}, nil)

	for _, e := range s.history.Entries[:3] {
		if b := e.Settings.Batch; b == nil || b.Count != 3 || b.ID != s.history.Entries[0].Settings.Batch.ID {
			t.Fatalf("%s records batch %+v, want the batch's identity and a count of 3", e.Path, b)
		}
	}
	rows := s.history.Rows()
	if len(rows) != 2 {
		t.Fatalf("%d history rows, want the batch and the old single", len(rows))
	}
	box := rows[0]
	batch := s.history.Batch(box)
	if batch == nil || len(batch.Thumbs()) != 3 {
		t.Fatalf("the first history row is not the batch of 3 (%T)", rows[0])
	}
	if want := "Batch of 3 · seed 7–9"; batch.Title() != want {
		t.Errorf("the batch's header says %q, want %q", batch.Title(), want)
	}
	if single := s.history.Batch(rows[1]); single != nil || len(s.history.Thumbs()) != 4 {
		t.Errorf("the old PNG is not a single of its own after the batch (%d thumbnails)", len(s.history.Thumbs()))
	}
	for i, o := range batch.Thumbs() {
		if seed := o.Entry().Settings.Seed; seed != 7+uint64(i) {
			t.Errorf("the batch's thumbnail %d is seed %d, want %d", i, seed, 7+i)
		}
	}

	// The second image restores its own seed.
	s.model.SetSeed(0)
	s.model.SetCount(3)
	test.Tap(batch.Thumbs()[1])
	if s.draft().Seed != 8 || s.draft().RandomSeed || s.draft().Count != 1 || s.draft().VariationStrength != 0 {
		t.Errorf("restored seed %d (random %v, count %d, variation %g), want seed 8 alone", s.draft().Seed, s.draft().RandomSeed, s.draft().Count, s.draft().VariationStrength)
	}

	// The header folds the batch away, and back.
	test.Tap(batch.FoldButton())
	if !batch.Folded() {
		t.Error("the folded batch still shows its thumbnails")
	}
	s.history.Render()
	box = s.history.Rows()[0]
	if again := s.history.Batch(box); again == nil || !again.Folded() {
		t.Error("the batch unfolded when the history was listed again")
	} else {
		test.Tap(again.FoldButton())
		if again.Folded() {
			t.Error("the batch does not unfold")
		}
	}
}

// A lone image listed right after a batch is not read as one more member of the group: the
// batch's thumbnails sit indented under their header, the lone image starts at the history's
// edge, and a separator closes the group before it.
func TestHistoryClosesABatchGroupBeforeALoneImage(t *testing.T) {
	h := newHarness(t, 0)
	p := h.s.history
	var es []history.Entry
	for i := range 2 {
		st := &imagefile.Settings{Prompt: "a batch", Seed: uint64(7 + i)}
		st.Batch = &imagefile.BatchSettings{ID: "b1", Index: i, Count: 2}
		es = append(es, history.Entry{Path: fmt.Sprintf("batch-%d.png", i), Settings: st})
	}
	es = append(es, history.Entry{Path: "lone.png", Settings: &imagefile.Settings{Prompt: "alone", Seed: 3}})
	p.AddScanned(es, nil)
	p.Box.Resize(fyne.NewSize(600, 900))

	thumbs := p.Thumbs()
	if len(thumbs) != 3 || thumbs[2].Entry().Path != "lone.png" {
		t.Fatalf("history lists %d thumbnails, want the batch's 2 then lone.png", len(thumbs))
	}
	member, _ := posIn(p.Box, thumbs[0])
	last, _ := posIn(p.Box, thumbs[1])
	lone, _ := posIn(p.Box, thumbs[2])
	if member.X <= lone.X {
		t.Errorf("the batch's thumbnail starts at x=%g, the lone image at x=%g: the group's members are not indented under their header", member.X, lone.X)
	}
	var between bool
	walkObjects(p.Box, func(o fyne.CanvasObject) {
		if sep, ok := o.(*widget.Separator); ok && sep.Visible() {
			at, _ := posIn(p.Box, sep)
			if at.Y > last.Y && at.Y < lone.Y {
				between = true
			}
		}
	})
	if !between {
		t.Error("no separator stands between the batch's last thumbnail and the lone image after it")
	}
}

// posIn is o's position inside root, summing the positions of the containers between them.
func posIn(root fyne.CanvasObject, o fyne.CanvasObject) (fyne.Position, bool) {
	if root == o {
		return fyne.Position{}, true
	}
	var kids []fyne.CanvasObject
	switch r := root.(type) {
	case *fyne.Container:
		kids = r.Objects
	case fyne.Widget:
		kids = test.WidgetRenderer(r).Objects()
	}
	for _, k := range kids {
		if at, ok := posIn(k, o); ok {
			return k.Position().Add(at), true
		}
	}
	return fyne.Position{}, false
}

// walkObjects calls f on every object under root, containers and widgets' parts alike.
func walkObjects(root fyne.CanvasObject, f func(fyne.CanvasObject)) {
	f(root)
	switch r := root.(type) {
	case *fyne.Container:
		for _, k := range r.Objects {
			walkObjects(k, f)
		}
	case fyne.Widget:
		for _, k := range test.WidgetRenderer(r).Objects() {
			walkObjects(k, f)
		}
	}
}
