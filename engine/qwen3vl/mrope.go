package qwen3vl

import (
	"fmt"
	"math"
	"slices"
)

// imageRun is where one image's merged tokens sit in the prompt: rows [start, start+count).
type imageRun struct{ start, count int }

// mropePositions is get_rope_index of the reference (spec §10.3) for one unpadded sequence: every
// token's (t, h, w) position. Text tokens get t = h = w, counting on from one more than the largest
// position so far. Image i occupies the next run of grids[i].tokens() image tokens; its token at
// merged (frame f, row r, col c) gets (s+f, s+r, s+c) where s is the position the next text token
// would have had. It also returns where each image's run lies.
func mropePositions(ids []int32, imageToken int32, grids []mergedGrid) ([][3]int, []imageRun, error) {
	pos := make([][3]int, 0, len(ids))
	runs := make([]imageRun, 0, len(grids))
	next := 0 // one more than the largest position so far
	text := func(from, to int) {
		for i := from; i < to; i++ {
			pos = append(pos, [3]int{next, next, next})
			next++
		}
	}
	st := 0
	for i, g := range grids {
		ed := slices.Index(ids[st:], imageToken)
		if ed < 0 {
			return nil, nil, fmt.Errorf("the prompt has image tokens for %d images but %d images were given: build the prompt with one <|image_pad|> run per condition image", i, len(grids))
		}
		ed += st
		text(st, ed)
		n := g.tokens()
		if ed+n > len(ids) {
			return nil, nil, fmt.Errorf("image %d needs %d image tokens from position %d but the prompt ends at %d: the prompt was built for a different image size", i+1, n, ed, len(ids))
		}
		for k := ed; k < ed+n; k++ {
			if ids[k] != imageToken {
				return nil, nil, fmt.Errorf("image %d needs %d consecutive image tokens from position %d but position %d holds token %d: the prompt was built for a different image size", i+1, n, ed, k, ids[k])
			}
		}
		s, top := next, next
		for f := range g.t {
			for r := range g.h {
				for c := range g.w {
					pos = append(pos, [3]int{s + f, s + r, s + c})
					top = max(top, s+f, s+r, s+c)
				}
			}
		}
		next = top + 1
		runs = append(runs, imageRun{start: ed, count: n})
		st = ed + n
	}
	if k := slices.Index(ids[st:], imageToken); k >= 0 {
		return nil, nil, fmt.Errorf("the prompt has more image tokens than the %d images given (another run starts at position %d): give every condition image to the encoder", len(grids), st+k)
	}
	text(st, len(ids))
	return pos, runs, nil
}

// mergedGrid is an image's token grid after the 2×2 merge: frames, rows, columns.
type mergedGrid struct{ t, h, w int }

func (g mergedGrid) tokens() int { return g.t * g.h * g.w }

// mropeTables builds the language model's rotary cos and sin tables [rows, headDim/2] for
// interleaved mRoPE: frequency j = θ^(−2j/headDim) turns with the h position when j%3 == 1 and
// j < 3·section[1], with the w position when j%3 == 2 and j < 3·section[2], and with t otherwise.
// Arithmetic follows the float32 reference (frequencies and angles rounded to float32).
func mropeTables(pos [][3]int, headDim int, theta float64, section [3]int) (cos, sin []float32) {
	half := headDim / 2
	invFreq := make([]float32, half)
	axis := make([]int, half)
	for j := range half {
		e := float32(2*j) / float32(headDim)
		invFreq[j] = 1 / float32(math.Pow(theta, float64(e)))
		switch {
		case j%3 == 1 && j < 3*section[1]:
			axis[j] = 1
		case j%3 == 2 && j < 3*section[2]:
			axis[j] = 2
		}
	}
	cos = make([]float32, len(pos)*half)
	sin = make([]float32, len(pos)*half)
	for r, p := range pos {
		for j := range half {
			angle := float32(p[axis[j]]) * invFreq[j]
			cos[r*half+j] = float32(math.Cos(float64(angle)))
			sin[r*half+j] = float32(math.Sin(float64(angle)))
		}
	}
	return cos, sin
}
