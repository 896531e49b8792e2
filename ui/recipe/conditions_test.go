package recipe

import (
	"image"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
)

// TestConditionsFollowTheDraft: the section built alone shows a row per condition image of the
// draft with its number, name and encoded size; its buttons ask the shell to move and remove
// (the first cannot move left, the last not right); the rows follow the draft and are rebuilt only
// when the images change, bringing the section into view when images came.
func TestConditionsFollowTheDraft(t *testing.T) {
	test.NewTempApp(t)
	m := newModel()
	shown, removed := 0, -1
	var moved [2]int
	p := NewConditions(m, ConditionsActions{
		Move:   func(i, d int) { moved = [2]int{i, d}; m.MoveCondition(i, d) },
		Remove: func(i int) { removed = i; m.RemoveCondition(i) },
		Shown:  func() { shown++ },
	})
	if p.Count.Text != "0 of 10" || len(p.List.Objects) != 0 {
		t.Fatalf("no images: %q, %d rows", p.Count.Text, len(p.List.Objects))
	}
	for _, name := range []string{"cat.png", "hat.png"} {
		if err := m.AddCondition(compose.Condition{Name: name, Image: image.NewNRGBA(image.Rect(0, 0, 64, 32)), EncodedW: 448, EncodedH: 224}); err != nil {
			t.Fatal(err)
		}
	}
	if p.Count.Text != "2 of 10" || len(p.List.Objects) != 2 || shown != 2 {
		t.Fatalf("two images: %q, %d rows, shown %d times", p.Count.Text, len(p.List.Objects), shown)
	}
	if got := labels(p.List.Objects[1]); len(got) != 2 || got[0] != "2 · hat.png" || got[1] != "64×32, encoded at 448×224" {
		t.Errorf("the second row says %q", got)
	}
	first := buttons(p.List.Objects[0])
	if !first[0].Disabled() || first[1].Disabled() || !buttons(p.List.Objects[1])[1].Disabled() {
		t.Error("the first image can move left or the last right")
	}
	rows := p.List.Objects[0]
	m.SetPrompt("image 1 wearing image 2")
	if p.List.Objects[0] != rows {
		t.Error("a prompt change rebuilt the rows")
	}
	test.Tap(first[1]) // the first to the right
	if moved != [2]int{0, 1} || labels(p.List.Objects[0])[0] != "1 · hat.png" {
		t.Errorf("moved %v; the first row says %q", moved, labels(p.List.Objects[0])[0])
	}
	test.Tap(buttons(p.List.Objects[1])[2])
	if removed != 1 || len(p.List.Objects) != 1 || p.Count.Text != "1 of 10" {
		t.Errorf("removed %d: %d rows, %q", removed, len(p.List.Objects), p.Count.Text)
	}
}
