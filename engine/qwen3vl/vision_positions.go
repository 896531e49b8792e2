package qwen3vl

// mergeWindowOrder lists an image's patches (row, col) in the order the image processor emits
// them and the vision tower keeps them: 2×2 merge windows row-major, and inside each window its
// patches row-major, repeated for every frame.
func mergeWindowOrder(frames, h, w, merge int) [][2]int {
	out := make([][2]int, 0, frames*h*w)
	for range frames {
		for br := 0; br < h/merge; br++ {
			for bc := 0; bc < w/merge; bc++ {
				for ir := range merge {
					for ic := range merge {
						out = append(out, [2]int{br*merge + ir, bc*merge + ic})
					}
				}
			}
		}
	}
	return out
}

// linspace32 is torch.linspace(start, end, steps) in float32: the first half counts up from start,
// the second half down from end, with step (end − start)/(steps − 1) rounded to float32.
func linspace32(start, end float32, steps int) []float32 {
	out := make([]float32, steps)
	if steps == 1 {
		out[0] = start
		return out
	}
	step := (end - start) / float32(steps-1)
	for i := range out {
		if i < steps/2 {
			out[i] = start + step*float32(i)
		} else {
			out[i] = end - step*float32(steps-1-i)
		}
	}
	return out
}

// interpolatedPositions is the vision tower's position embedding for one image of h×w patches
// (fast_pos_embed_interpolate, spec §10.4): the side×side table sampled bilinearly at
// linspace(0, side−1, h) × linspace(0, side−1, w), in float32 as the reference computes it, rows
// in merge-window order. table holds the dequantized [side², C] embeddings.
func interpolatedPositions(table []float32, side, C, frames, h, w, merge int) []float32 {
	hs, ws := linspace32(0, float32(side-1), h), linspace32(0, float32(side-1), w)
	rowMajor := make([]float32, h*w*C)
	for r, hy := range hs {
		h0 := int(hy)
		h1 := min(h0+1, side-1)
		dh := hy - float32(h0)
		for c, wx := range ws {
			w0 := int(wx)
			w1 := min(w0+1, side-1)
			dw := wx - float32(w0)
			corners := [4]int{h0*side + w0, h0*side + w1, h1*side + w0, h1*side + w1}
			weights := [4]float32{(1 - dh) * (1 - dw), (1 - dh) * dw, dh * (1 - dw), dh * dw}
			dst := rowMajor[(r*w+c)*C : (r*w+c+1)*C]
			for k := range C {
				// The reference scales each corner, then sums the four in order.
				s := table[corners[0]*C+k] * weights[0]
				s += table[corners[1]*C+k] * weights[1]
				s += table[corners[2]*C+k] * weights[2]
				s += table[corners[3]*C+k] * weights[3]
				dst[k] = s
			}
		}
	}
	order := mergeWindowOrder(frames, h, w, merge)
	out := make([]float32, len(order)*C)
	for i, rc := range order {
		copy(out[i*C:(i+1)*C], rowMajor[(rc[0]*w+rc[1])*C:])
	}
	return out
}
