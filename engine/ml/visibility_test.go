package ml

import "testing"

// allowed is spec §6.9's mask written literally: (q ≥ k) or (same image, id ≥ 0).
func allowed(ids []int, q, k int) bool {
	return q >= k || (ids[q] == ids[k] && ids[q] >= 0)
}

func TestBlockCausalVisibilityMatchesTheMaskDefinition(t *testing.T) {
	layouts := [][]int{
		{-1, -1, -1},
		{0, 0, 0, 0},
		{-1, -1, 0, 0, 0, 0, -1, 1, 1, 1, 1},
		{-1, 0, 0, 0, 0, 1, 1, 1, 1, -1, -1, 2, 2, 2, 2},
		{0, 0, 0, 0, 1, 1, 1, 1},
	}
	for _, ids := range layouts {
		vis, err := BlockCausalVisibility(ids)
		if err != nil {
			t.Fatalf("%v: %v", ids, err)
		}
		for q := range ids {
			for k := range ids {
				if got := k < int(vis[q]); got != allowed(ids, q, k) {
					t.Errorf("layout %v: query %d key %d visible=%v, the mask says %v", ids, q, k, got, allowed(ids, q, k))
				}
			}
		}
	}
}

func TestBlockCausalVisibilityRejectsSplitImages(t *testing.T) {
	if _, err := BlockCausalVisibility([]int{0, 0, -1, 0}); err == nil {
		t.Fatal("an image whose rows are split by text was accepted")
	}
}

func TestCausalVisibility(t *testing.T) {
	vis := CausalVisibility(3, 4)
	for i, v := range vis {
		if int(v) != 3+i+1 {
			t.Fatalf("row %d sees %d keys, want %d", i, v, 3+i+1)
		}
	}
}
