package history

import (
	"fmt"
	"slices"
)

// Group is one row of the history: a batch's images (Batch set, Entries in the batch's order)
// or a single image (Batch empty, one entry).
type Group struct {
	// Batch is the batch's identity (imagefile.BatchSettings.ID); "" for a single image.
	Batch string
	// Count is the batch's size as its images record it (some may be missing: discarded or
	// beyond the scanned PNGs); 1 for a single image.
	Count   int
	Entries []Entry
}

// Groups gathers entries (newest first) into the history's rows, newest first: every image of
// a batch joins its batch's group, placed where the batch's newest image is, in the batch's
// order; every other image (a single, a PNG without a batch, another tool's PNG) is a group
// of its own where it was.
func Groups(entries []Entry) []Group {
	var groups []Group
	at := map[string]int{} // batch ID → its group's place
	for _, e := range entries {
		id := batchID(e)
		if id == "" {
			groups = append(groups, Group{Count: 1, Entries: []Entry{e}})
			continue
		}
		i, ok := at[id]
		if !ok {
			i = len(groups)
			at[id] = i
			groups = append(groups, Group{Batch: id, Count: e.Settings.Batch.Count})
		}
		g := &groups[i]
		g.Entries = append(g.Entries, e)
		g.Count = max(g.Count, e.Settings.Batch.Count)
	}
	for i := range groups {
		if groups[i].Batch != "" {
			slices.SortStableFunc(groups[i].Entries, func(a, b Entry) int {
				return a.Settings.Batch.Index - b.Settings.Batch.Index
			})
		}
	}
	return groups
}

// Title describes a batch group in a few words: "Batch of 4 · seed 7–10", or, for a batch of
// variations of one seed, "Batch of 4 · seed 7 · variations 100–103". A single image's title
// is "".
func (g Group) Title() string {
	if g.Batch == "" || len(g.Entries) == 0 {
		return ""
	}
	title := fmt.Sprintf("Batch of %d · seed %s", g.Count, g.span(func(e Entry) (uint64, bool) { return e.Settings.Seed, true }))
	if v := g.span(func(e Entry) (uint64, bool) { return e.Settings.VariationSeed, e.Settings.VariationStrength > 0 }); v != "" {
		title += " · variations " + v
	}
	if n := len(g.Entries); n < g.Count {
		title += fmt.Sprintf(" (%d here)", n)
	}
	return title
}

// span is the range of one number over the group's entries ("7", "7–10"); "" when no entry has it.
func (g Group) span(of func(Entry) (uint64, bool)) string {
	var lo, hi uint64
	seen := false
	for _, e := range g.Entries {
		v, ok := of(e)
		if !ok {
			continue
		}
		if !seen || v < lo {
			lo = v
		}
		if !seen || v > hi {
			hi = v
		}
		seen = true
	}
	switch {
	case !seen:
		return ""
	case lo == hi:
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func batchID(e Entry) string {
	if e.Settings == nil || e.Settings.Batch == nil {
		return ""
	}
	return e.Settings.Batch.ID
}
