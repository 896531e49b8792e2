package ui

import "testing"

// The main menu offers Studio… (beside Settings…).
func TestMainMenuOffersStudio(t *testing.T) {
	h := newHarness(t, 16e9)
	for _, m := range h.w.MainMenu().Items {
		for _, it := range m.Items {
			if it.Label == "Studio…" && it.Action != nil {
				return
			}
		}
	}
	t.Fatal("the main menu has no Studio… item")
}
