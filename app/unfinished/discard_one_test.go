package unfinished

import (
	"slices"
	"testing"

	"easel/app/compose"
	"easel/app/settings"
)

// TestDiscardOneKeepsTheOthers: each kept job is listed once with where it was rendering, and
// discarding one removes it alone.
func TestDiscardOneKeepsTheOthers(t *testing.T) {
	appSupport := t.TempDir()
	s, err := Open(appSupport)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []struct{ prompt, where string }{{"a lighthouse", ""}, {"a fox in snow", "mini.local:7860"}, {"a red door", ""}}
	for i, j := range jobs {
		d := compose.NewDraft(settings.Settings{})
		d.Prompt = j.prompt
		if _, err := s.Add(d, uint64(i+1), j.prompt, j.where); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := Open(appSupport)
	if err != nil {
		t.Fatal(err)
	}
	left, err := s2.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range left {
		got = append(got, p.Label+"@"+p.Where)
	}
	if want := []string{"a lighthouse@", "a fox in snow@mini.local:7860", "a red door@"}; !slices.Equal(got, want) {
		t.Fatalf("listed %q, want %q", got, want)
	}
	if err := left[1].Discard(); err != nil {
		t.Fatal(err)
	}
	left, err = s2.List()
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, p := range left {
		got = append(got, p.Label)
	}
	if want := []string{"a lighthouse", "a red door"}; !slices.Equal(got, want) {
		t.Errorf("after discarding one: %q, want %q", got, want)
	}
}
