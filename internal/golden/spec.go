package golden

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
)

// Pipeline is what a pipeline_* case asked the reference pipeline for, read from its metadata:
// every setting a test needs to make the same request (REFERENCE.md, "Case files").
type Pipeline struct {
	Prompt      string
	Negative    string // "" when the metadata's "neg" is null
	HasNegative bool   // the metadata's "neg" is a string (it may be blank, e.g. " ")
	CFG         float64
	Steps       int
	// Width and Height are the requested output size; both 0 when the metadata has null (the
	// size then follows the last condition image).
	Width, Height int
	Resolution    int      // "res" (or "output_resolution"): the target area's side, in pixels
	Shapes        [][2]int // latent grids (h, w): each condition image, then the target
	CondImages    []string // condition image files, relative to the case's folder
	Seed          uint64   // "seed", or the manual_seed(N) named by "seed_note"
}

// Target is the output's latent grid: the last of Shapes.
func (p *Pipeline) Target() (h, w int) {
	s := p.Shapes[len(p.Shapes)-1]
	return s[0], s[1]
}

// Conditions is the number of condition images.
func (p *Pipeline) Conditions() int { return len(p.Shapes) - 1 }

// DiT is what a dit_* case ran the transformer on, read from its metadata.
type DiT struct {
	Shapes [][2]int  // latent grids (h, w): each condition image, then the target
	Sigmas []float32 // the σ of full_out_i / cached_out_i, in order
}

// Conditions is the number of condition images in the case's prefix.
func (d *DiT) Conditions() int { return len(d.Shapes) - 1 }

// Pipeline reads the case's metadata as a pipeline case.
func (c *Case) Pipeline() (*Pipeline, error) {
	p, err := ParsePipeline(c.Meta)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	return p, nil
}

// DiT reads the case's metadata as a dit case.
func (c *Case) DiT() (*DiT, error) {
	d, err := ParseDiT(c.Meta)
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	return d, nil
}

// ParsePipeline reads a pipeline case's metadata (the JSON object under the safetensors metadata
// key "json"). A missing or mistyped required key is an error naming it.
func ParsePipeline(meta map[string]any) (*Pipeline, error) {
	p := &Pipeline{}
	var ok bool
	if p.Prompt, ok = meta["prompt"].(string); !ok {
		return nil, fmt.Errorf(`metadata has no string "prompt"`)
	}
	switch v := meta["neg"].(type) {
	case nil:
	case string:
		p.Negative, p.HasNegative = v, true
	default:
		return nil, fmt.Errorf(`metadata "neg" is %T, want a string or null`, v)
	}
	if p.CFG, ok = meta["cfg"].(float64); !ok {
		return nil, fmt.Errorf(`metadata has no number "cfg"`)
	}
	var err error
	if p.Steps, err = positiveInt(meta, "steps"); err != nil {
		return nil, err
	}
	key := "res"
	if _, has := meta[key]; !has {
		key = "output_resolution"
	}
	if p.Resolution, err = positiveInt(meta, key); err != nil {
		return nil, err
	}
	if meta["width"] != nil || meta["height"] != nil {
		if p.Width, err = positiveInt(meta, "width"); err != nil {
			return nil, err
		}
		if p.Height, err = positiveInt(meta, "height"); err != nil {
			return nil, err
		}
	}
	if p.Shapes, err = imgShapes(meta); err != nil {
		return nil, err
	}
	if raw, has := meta["cond_images"]; has && raw != nil {
		list, ok := raw.([]any)
		if !ok {
			return nil, fmt.Errorf(`metadata "cond_images" is %T, want a list of file names`, raw)
		}
		for _, v := range list {
			name, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf(`metadata "cond_images" holds %T, want file names`, v)
			}
			p.CondImages = append(p.CondImages, name)
		}
	}
	if len(p.CondImages) != p.Conditions() {
		return nil, fmt.Errorf("metadata names %d condition images but img_shapes has %d condition grids", len(p.CondImages), p.Conditions())
	}
	if p.Seed, err = Seed(meta); err != nil {
		return nil, err
	}
	return p, nil
}

// ParseDiT reads a dit case's metadata.
func ParseDiT(meta map[string]any) (*DiT, error) {
	shapes, err := imgShapes(meta)
	if err != nil {
		return nil, err
	}
	raw, ok := meta["sigmas"].([]any)
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf(`metadata has no list "sigmas"`)
	}
	d := &DiT{Shapes: shapes}
	for _, v := range raw {
		s, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf(`metadata "sigmas" holds %T, want numbers`, v)
		}
		d.Sigmas = append(d.Sigmas, float32(s))
	}
	return d, nil
}

// seedNote matches the generator a case's "seed_note" names:
// generator=torch.Generator('cpu').manual_seed(11).
var seedNote = regexp.MustCompile(`manual_seed\(\s*(\d+)\s*\)`)

// Seed is the case's generator seed: the number "seed" when present, else the manual_seed(N)
// its "seed_note" names. Both present and different is an error.
func Seed(meta map[string]any) (uint64, error) {
	var fromNote *uint64
	if note, ok := meta["seed_note"].(string); ok {
		m := seedNote.FindStringSubmatch(note)
		if m == nil {
			return 0, fmt.Errorf("metadata seed_note %q names no manual_seed(N)", note)
		}
		v, err := strconv.ParseUint(m[1], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("metadata seed_note %q: %v", note, err)
		}
		fromNote = &v
	}
	if raw, has := meta["seed"]; has {
		f, ok := raw.(float64)
		if !ok || f < 0 || f != math.Trunc(f) || f > 1<<53 {
			return 0, fmt.Errorf(`metadata "seed" is %v, want a non-negative integer`, raw)
		}
		if fromNote != nil && *fromNote != uint64(f) {
			return 0, fmt.Errorf(`metadata "seed" %v and seed_note's manual_seed(%d) disagree`, raw, *fromNote)
		}
		return uint64(f), nil
	}
	if fromNote == nil {
		return 0, fmt.Errorf(`metadata has neither "seed" nor a "seed_note" naming manual_seed(N)`)
	}
	return *fromNote, nil
}

func positiveInt(meta map[string]any, key string) (int, error) {
	f, ok := meta[key].(float64)
	if !ok || f < 1 || f != math.Trunc(f) || f > 1<<31 {
		return 0, fmt.Errorf("metadata %q is %v, want a positive integer", key, meta[key])
	}
	return int(f), nil
}

// imgShapes reads img_shapes, [[1, h, w], ...] (dit cases) or the same list nested once more for
// the batch (pipeline cases), as (h, w) grids.
func imgShapes(meta map[string]any) ([][2]int, error) {
	raw, ok := meta["img_shapes"].([]any)
	if !ok || len(raw) == 0 {
		return nil, fmt.Errorf(`metadata has no list "img_shapes"`)
	}
	if inner, ok := raw[0].([]any); ok && len(inner) > 0 {
		if _, nested := inner[0].([]any); nested {
			if len(raw) != 1 {
				return nil, fmt.Errorf("img_shapes has a batch of %d; the cases hold one image each", len(raw))
			}
			raw = inner
		}
	}
	var out [][2]int
	for _, s := range raw {
		v, ok := s.([]any)
		if !ok || len(v) != 3 {
			return nil, fmt.Errorf("img_shapes entry %v, want [frames, h, w]", s)
		}
		var fhw [3]int
		for i := range fhw {
			f, ok := v[i].(float64)
			if !ok || f < 1 || f != math.Trunc(f) {
				return nil, fmt.Errorf("img_shapes entry %v, want positive integers", s)
			}
			fhw[i] = int(f)
		}
		if fhw[0] != 1 {
			return nil, fmt.Errorf("img_shapes entry %v has %d frames, want 1", s, fhw[0])
		}
		out = append(out, [2]int{fhw[1], fhw[2]})
	}
	return out, nil
}
