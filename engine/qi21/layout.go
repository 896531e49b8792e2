package qi21

import (
	"fmt"

	"easel/engine/ml"
)

// Layout is the joint sequence of one prompt (spec §6.3, §6.8, §6.9): which row comes from which
// prompt position or latent, each row's image id and 3-axis RoPE position, and where the prefix
// ends. It depends only on the prompt's image-slot mask and the image shapes, not on σ.
type Layout struct {
	// ImageShapes is (h, w) of every image's latent grid: condition images in order, target last.
	ImageShapes [][2]int
	// TextLen is L, the number of prompt-embedding rows (vision-language positions, image slots
	// included); the image-slot mask has L + T/4 entries.
	TextLen int
	// S is the joint length, T the target's rows (the last T), PrefixLen = S − T.
	S, T, PrefixLen int
	// Latents is how many latent rows the images hold in all (conditions, then the target).
	Latents int
	// ImageIDs is −1 on text rows and the image's index on image rows.
	ImageIDs []int
	// Positions is every row's (frame, height, width) RoPE position.
	Positions [][]int
	// Runs describe the joint rows as contiguous copies from the text or the latent rows.
	Runs []Run
	// TextPositions are the prompt rows (vision-language positions) that become text rows, in
	// order; the other positions are image slots whose embeddings are replaced by latents.
	TextPositions []int
}

// Run is a contiguous range of joint rows taken from consecutive rows of one source.
type Run struct {
	Row, Len int
	// Text is true for prompt rows (Src indexes the text rows that are kept, in order), false
	// for image rows (Src indexes the latent rows, conditions then target).
	Text bool
	Src  int
}

// NewLayout builds the layout from the image-slot mask over L + T/4 vision-language positions
// (true at <|image_pad|> slots; the last T/4 are the target's) and the latent shapes of the
// condition images and the target, in order. Every image slot stands for 4 latent rows.
func NewLayout(imageMask []bool, imageShapes [][2]int) (*Layout, error) {
	if len(imageShapes) == 0 {
		return nil, fmt.Errorf("qi21 layout: no image shapes; the target's (h, w) comes last")
	}
	latents := 0
	for k, hw := range imageShapes {
		if hw[0] <= 0 || hw[1] <= 0 {
			return nil, fmt.Errorf("qi21 layout: image %d has latent shape %dx%d", k, hw[0], hw[1])
		}
		latents += hw[0] * hw[1]
	}
	target := imageShapes[len(imageShapes)-1]
	T := target[0] * target[1]
	if T%4 != 0 {
		return nil, fmt.Errorf("qi21 layout: the target's latent grid %dx%d has %d rows, not a multiple of 4 (one slot per 2×2)", target[0], target[1], T)
	}
	L := len(imageMask) - T/4
	if L < 0 {
		return nil, fmt.Errorf("qi21 layout: the image mask has %d entries, fewer than the target's %d slots", len(imageMask), T/4)
	}
	for p := L; p < len(imageMask); p++ {
		if !imageMask[p] {
			return nil, fmt.Errorf("qi21 layout: mask entry %d is text but the last %d entries are the target's slots", p, T/4)
		}
	}
	slots := 0
	for _, m := range imageMask {
		if m {
			slots++
		}
	}
	if 4*slots != latents {
		return nil, fmt.Errorf("qi21 layout: the mask has %d image slots (%d latent rows) but the image shapes %v hold %d latent rows", slots, 4*slots, imageShapes, latents)
	}
	lay := &Layout{ImageShapes: imageShapes, TextLen: L, T: T, Latents: latents}
	isImage := []bool{}
	textKept, img := 0, 0
	for p, m := range imageMask {
		if m {
			lay.addRun(len(isImage), 4, false, img)
			img += 4
			isImage = append(isImage, true, true, true, true)
		} else {
			lay.addRun(len(isImage), 1, true, textKept)
			lay.TextPositions = append(lay.TextPositions, p)
			textKept++
			isImage = append(isImage, false)
		}
	}
	lay.S = len(isImage)
	lay.PrefixLen = lay.S - T
	// image ids: image rows in order, by cumulative latent counts (spec §6.3)
	lay.ImageIDs = make([]int, lay.S)
	id, left := 0, imageShapes[0][0]*imageShapes[0][1]
	for r, im := range isImage {
		if !im {
			lay.ImageIDs[r] = -1
			continue
		}
		for left == 0 {
			id++
			left = imageShapes[id][0] * imageShapes[id][1]
		}
		lay.ImageIDs[r] = id
		left--
	}
	for r := lay.PrefixLen; r < lay.S; r++ {
		if lay.ImageIDs[r] != len(imageShapes)-1 {
			return nil, fmt.Errorf("qi21 layout: joint row %d of the last %d is not a target row", r, T)
		}
	}
	if _, err := ml.BlockCausalVisibility(lay.ImageIDs); err != nil {
		return nil, fmt.Errorf("qi21 layout: %v", err)
	}
	lay.Positions = ropePositions(isImage, imageShapes)
	return lay, nil
}

// addRun appends rows, extending the last run when it continues it.
func (l *Layout) addRun(row, n int, text bool, src int) {
	if k := len(l.Runs) - 1; k >= 0 {
		r := &l.Runs[k]
		if r.Text == text && r.Row+r.Len == row && r.Src+r.Len == src {
			r.Len += n
			return
		}
	}
	l.Runs = append(l.Runs, Run{Row: row, Len: n, Text: text, Src: src})
}

// TextRows is the number of joint rows that are text.
func (l *Layout) TextRows() int { return len(l.TextPositions) }

// CondLatents is the number of condition-image latent rows (all image rows but the target's).
func (l *Layout) CondLatents() int { return l.Latents - l.T }

// ropePositions assigns (frame, height, width) per joint row as QwenImage21Rope does (§6.8):
// text rows count up on all three axes; an image block shares one frame and is centred on its
// height and width; the frame counter then advances by max(h, w).
func ropePositions(isImage []bool, shapes [][2]int) [][]int {
	pos := make([][]int, len(isImage))
	cursor, position := 0, 0
	text := func(r int) {
		pos[r] = []int{position, position, position}
		position++
	}
	for _, hw := range shapes {
		h, w := hw[0], hw[1]
		start := cursor
		for start < len(isImage) && !isImage[start] {
			start++
		}
		for r := cursor; r < start; r++ {
			text(r)
		}
		for i := 0; i < h*w && start+i < len(isImage); i++ {
			y, x := i/w, i%w
			pos[start+i] = []int{position, y - (h - h/2), x - (w - w/2)}
		}
		cursor = start + h*w
		position += max(h, w)
	}
	for r := cursor; r < len(isImage); r++ {
		text(r)
	}
	return pos
}
