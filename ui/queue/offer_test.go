package queue

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"easel/app/compose"
	"easel/app/settings"
	"easel/app/unfinished"
)

// keptThree keeps three jobs in a store of their own and lists them as a new session would.
func keptThree(t *testing.T) (*unfinished.Store, []*unfinished.Pending) {
	t.Helper()
	store, err := unfinished.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, prompt := range []string{"a fox in snow", "a red door", "a kite"} {
		d := compose.NewDraft(settings.Settings{Width: 512, Height: 256, Steps: 3, CFG: 1})
		d.Prompt = prompt
		where := ""
		if i == 2 {
			where = "studio.local"
		}
		if _, err := store.Add(d, uint64(10+i), prompt, where); err != nil {
			t.Fatal(err)
		}
	}
	left, err := store.List()
	if err != nil || len(left) != 3 {
		t.Fatalf("listed %d kept jobs: %v", len(left), err)
	}
	return store, left
}

// TestOfferOneRowPerJob: the offer built alone has a row per kept job (prompt; seed, size, where,
// where it stopped); Discard on a row removes that job from the store and the offer, Resume on a
// row resumes that job alone, and Resume all resumes the rest in order.
func TestOfferOneRowPerJob(t *testing.T) {
	a := test.NewTempApp(t)
	store, left := keptThree(t)
	var resumed [][]string
	o := NewOffer(left, OfferActions{
		Resume: func(ps []*unfinished.Pending) {
			var names []string
			for _, p := range ps {
				names = append(names, p.Label)
			}
			resumed = append(resumed, names)
		},
		Where: func(p *unfinished.Pending) string {
			if p.Where == "" {
				return "this Mac"
			}
			return p.Where
		},
		Problem: func(err error) { t.Errorf("problem: %v", err) },
	}, a.NewWindow("offer"))
	o.Dialog.Show()
	if len(o.Rows.Objects) != 3 || o.ResumeAll.Text != "Resume 3 unfinished jobs" {
		t.Fatalf("%d rows, %q", len(o.Rows.Objects), o.ResumeAll.Text)
	}
	got := labels(o.Rows.Objects[2])
	if len(got) != 2 || got[0] != "a kite" || got[1] != "seed 12 · 512×256 · studio.local · waiting" {
		t.Errorf("the third row says %q", got)
	}
	if got := labels(o.Rows.Objects[0]); got[1] != "seed 10 · 512×256 · this Mac · waiting" {
		t.Errorf("the first row says %q", got)
	}

	test.Tap(buttons(o.Rows.Objects[1])[1]) // Discard "a red door"
	if kept, _ := store.List(); len(kept) != 2 || len(o.Rows.Objects) != 2 || o.ResumeAll.Text != "Resume 2 unfinished jobs" {
		t.Fatalf("after one Discard: %d kept, %d rows, %q", len(kept), len(o.Rows.Objects), o.ResumeAll.Text)
	}
	test.Tap(buttons(o.Rows.Objects[1])[0]) // Resume "a kite"
	if len(resumed) != 1 || strings.Join(resumed[0], ",") != "a kite" || o.ResumeAll.Text != "Resume 1 unfinished job" {
		t.Fatalf("after one Resume: resumed %v, %q", resumed, o.ResumeAll.Text)
	}
	test.Tap(o.ResumeAll)
	if len(resumed) != 2 || strings.Join(resumed[1], ",") != "a fox in snow" {
		t.Errorf("Resume all resumed %v, want the one left", resumed)
	}
	if NewOffer(nil, OfferActions{}, a.NewWindow("none")) != nil {
		t.Error("an offer of no jobs was built")
	}
}

// TestOfferDiscardAll: Discard all removes every job still offered from the store.
func TestOfferDiscardAll(t *testing.T) {
	a := test.NewTempApp(t)
	store, left := keptThree(t)
	o := NewOffer(left, OfferActions{Resume: func([]*unfinished.Pending) { t.Error("resumed") },
		Problem: func(err error) { t.Errorf("problem: %v", err) }}, a.NewWindow("offer"))
	o.Dialog.Show()
	test.Tap(o.DiscardAll)
	if kept, _ := store.List(); len(kept) != 0 {
		t.Errorf("%d jobs kept after Discard all", len(kept))
	}
}
