package ml

import "fmt"

// CausalVisibility is the causal mask as an AttnSpec.Visible list for n own rows after a prefix of
// prefix keys: row i sees the prefix and own rows 0..i.
func CausalVisibility(prefix, n int) []int32 {
	vis := make([]int32, n)
	for i := range vis {
		vis[i] = int32(prefix + i + 1)
	}
	return vis
}

// BlockCausalVisibility is Qwen-Image's block-causal mask (spec §6.9) as an AttnSpec.Visible list:
// query q sees key k when q ≥ k, or when both rows belong to the same image (imageIDs[q] ==
// imageIDs[k] ≥ 0). Text rows (id < 0) are causal; an image's rows see everything before the
// image and the whole image. Each image's rows must be contiguous.
func BlockCausalVisibility(imageIDs []int) ([]int32, error) {
	vis := make([]int32, len(imageIDs))
	seen := map[int]bool{}
	for start := 0; start < len(imageIDs); {
		id := imageIDs[start]
		end := start + 1
		for end < len(imageIDs) && imageIDs[end] == id {
			end++
		}
		if id >= 0 {
			if seen[id] {
				return nil, fmt.Errorf("block-causal visibility: the rows of image %d are not contiguous (a second run starts at row %d)", id, start)
			}
			seen[id] = true
		}
		for i := start; i < end; i++ {
			if id < 0 {
				vis[i] = int32(i + 1)
			} else {
				vis[i] = int32(end)
			}
		}
		start = end
	}
	return vis, nil
}
