package history

import (
	"path/filepath"
	"testing"
	"time"

	"easel/app/imagefile"
)

func batchEntry(path, id string, index, count int, seed uint64) Entry {
	return Entry{Path: path, Settings: &imagefile.Settings{Prompt: "a fox", Seed: seed,
		Batch: &imagefile.BatchSettings{ID: id, Index: index, Count: count}}}
}

// A batch's images (saved as they finish, so listed newest first and interleaved with a single
// made meanwhile) form one group in the batch's order at the place of its newest image; the
// single, an old PNG without a batch and another tool's PNG stay groups of their own.
func TestGroupsGatherABatchAndKeepSingles(t *testing.T) {
	entries := []Entry{ // newest first
		{Path: "single-new.png", Settings: &imagefile.Settings{Seed: 99}},
		batchEntry("b-3.png", "B", 2, 3, 22),
		batchEntry("a-2.png", "A", 1, 3, 8),
		{Path: "single-mid.png", Settings: &imagefile.Settings{Seed: 50}},
		batchEntry("b-1.png", "B", 0, 3, 20),
		batchEntry("a-3.png", "A", 2, 3, 9),
		batchEntry("b-2.png", "B", 1, 3, 21),
		batchEntry("a-1.png", "A", 0, 3, 7),
		{Path: "old.png", Settings: &imagefile.Settings{Seed: 3}}, // written before batches were recorded
		{Path: "foreign.png"},                                     // another tool's PNG
	}
	groups := Groups(entries)
	var got [][]string
	for _, g := range groups {
		var paths []string
		for _, e := range g.Entries {
			paths = append(paths, e.Path)
		}
		got = append(got, paths)
	}
	want := [][]string{
		{"single-new.png"},
		{"b-1.png", "b-2.png", "b-3.png"},
		{"a-1.png", "a-2.png", "a-3.png"},
		{"single-mid.png"},
		{"old.png"},
		{"foreign.png"},
	}
	if len(got) != len(want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("groups %v, want %v", got, want)
		}
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("groups %v, want %v", got, want)
			}
		}
	}
	if groups[1].Batch != "B" || groups[1].Count != 3 || groups[0].Batch != "" || groups[4].Batch != "" {
		t.Errorf("groups %+v: want batch B of 3 second, the single and the old PNG without a batch", groups)
	}
	if title := groups[1].Title(); title != "Batch of 3 · seed 20–22" {
		t.Errorf("title %q, want %q", title, "Batch of 3 · seed 20–22")
	}
	if title := groups[0].Title(); title != "" {
		t.Errorf("a single's title %q, want none", title)
	}
}

// A batch of variations names its one seed and its variation seeds; a batch with images missing
// (one discarded) says how many are here.
func TestGroupTitleOfVariationsAndMissingImages(t *testing.T) {
	var entries []Entry
	for i := range 2 {
		e := batchEntry("v.png", "V", i, 4, 7)
		e.Settings.VariationSeed, e.Settings.VariationStrength = 100+uint64(i), 0.2
		entries = append(entries, e)
	}
	g := Groups(entries)
	if len(g) != 1 {
		t.Fatalf("%d groups, want 1", len(g))
	}
	if want := "Batch of 4 · seed 7 · variations 100–101 (2 here)"; g[0].Title() != want {
		t.Errorf("title %q, want %q", g[0].Title(), want)
	}
}

// The batch identity survives the PNG: images saved with it and scanned back group again, and
// each keeps its own seed.
func TestScannedBatchGroupsAgain(t *testing.T) {
	dir := t.TempDir()
	s := New(dir)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 3 {
		set := &imagefile.Settings{Prompt: "an owl", Seed: 7 + uint64(i), Width: 8, Height: 8, Steps: 1, CFG: 1,
			Batch: &imagefile.BatchSettings{ID: "20261201-090000-7", Index: i, Count: 3}}
		if _, err := s.Save(testImage(8, 8), set, t0.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Save(testImage(8, 8), &imagefile.Settings{Prompt: "alone", Seed: 1, Width: 8, Height: 8, Steps: 1, CFG: 1}, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	entries, errs := New(dir).Scan()
	if len(errs) > 0 || len(entries) != 4 {
		t.Fatalf("scan: %d entries, errors %v", len(entries), errs)
	}
	groups := Groups(entries)
	var batch *Group
	for i := range groups {
		if groups[i].Batch != "" {
			if batch != nil {
				t.Fatalf("groups %+v: want one batch", groups)
			}
			batch = &groups[i]
		}
	}
	if len(groups) != 2 || batch == nil || len(batch.Entries) != 3 {
		t.Fatalf("groups %+v: want the batch of 3 and the single", groups)
	}
	for i, e := range batch.Entries {
		if e.Settings.Seed != 7+uint64(i) || e.Settings.Batch.Index != i || filepath.Dir(e.Path) != dir {
			t.Errorf("image %d of the batch: seed %d, index %d, want seed %d", i, e.Settings.Seed, e.Settings.Batch.Index, 7+i)
		}
	}
}
