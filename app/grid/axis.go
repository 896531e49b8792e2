package grid

import (
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind is the setting an axis varies.
type Kind int

// The axis kinds, by the names NAME=VALUES uses.
const (
	Seed              Kind = iota // seed: whole numbers
	Steps                         // steps: 1–1000
	CFG                           // cfg: the true-CFG scale, 1–100
	Strength                      // strength: the start image's strength, (0, 1]
	VariationStrength             // variation-strength: [0, 1]
	LoRA                          // lora:NAME: that LoRA's weight
	PromptSR                      // prompt-sr: A1111's Prompt S/R
	Size                          // size: WxH in pixels
	Hires                         // hires: the second pass's factor (1: none)
	Prompt                        // a prompt's {a|b|c} alternatives (not typed as NAME=VALUES)
)

// names are the kinds as NAME=VALUES writes them (lora: takes the LoRA's name after the colon).
var names = map[Kind]string{Seed: "seed", Steps: "steps", CFG: "cfg", Strength: "strength",
	VariationStrength: "variation-strength", LoRA: "lora", PromptSR: "prompt-sr", Size: "size", Hires: "hires", Prompt: "prompt"}

// AxisNames lists the names an axis may take, for messages and menus.
const AxisNames = "seed, steps, cfg, strength, variation-strength, lora:NAME, prompt-sr, size, hires"

// Syntax is the value syntax, for help texts: what an axis's VALUES may be.
const Syntax = "comma-separated values; whole-number ranges 1-4 or 1-10:3; numeric ranges 0.2-0.8:0.2; sizes 512x512"

// Value is one value of an axis: its text as the labels show it and what it sets.
type Value struct {
	Text string
	Int  int64   // seed, steps
	Num  float64 // cfg, strength, variation-strength, lora weight, hires factor
	W, H int     // size
}

// Axis is one axis: the setting and its values in order.
type Axis struct {
	Kind Kind
	// LoRA names the LoRA of a lora: axis (as written after the colon).
	LoRA string
	// Search is what a prompt-sr axis replaces (its first value); Group the {a|b} group of a
	// prompt axis (0 for the prompt's first).
	Search string
	Group  int
	Values []Value
}

// Name is the axis as labels and messages write it: "seed", "lora:style", "prompt".
func (a *Axis) Name() string {
	if a.Kind == LoRA {
		return "lora:" + a.LoRA
	}
	if a.Kind == Prompt && a.Group > 0 {
		return fmt.Sprintf("prompt%d", a.Group+1)
	}
	return names[a.Kind]
}

// Context is what an axis is checked against: the prompt (prompt-sr searches it), whether there
// is a start image (strength needs one), and the LoRAs given, by name (lora:NAME names one).
type Context struct {
	Prompt   string
	HasStart bool
	// LoRAs are the names a lora: axis may use (each LoRA's file name without folder and
	// extension); nil accepts none.
	LoRAs []string
}

// ParseAxis reads one axis written NAME=VALUES. label ("X", "Y", "Z") names it in errors.
func ParseAxis(label, spec string, c Context) (*Axis, error) {
	name, values, ok := strings.Cut(spec, "=")
	name = strings.ToLower(strings.TrimSpace(name))
	if !ok || name == "" {
		return nil, fmt.Errorf("grid axis %s %q: write it NAME=VALUES, like seed=1-4 or cfg=2,4,6 (NAME is one of %s)", label, spec, AxisNames)
	}
	a := &Axis{}
	switch {
	case strings.HasPrefix(name, "lora:"):
		a.Kind, a.LoRA = LoRA, strings.TrimSpace(spec[strings.Index(spec, ":")+1:strings.Index(spec, "=")])
		if !containsName(c.LoRAs, a.LoRA) {
			if len(c.LoRAs) == 0 {
				return nil, fmt.Errorf("grid axis %s %s: no LoRA is applied: add it with --lora FILE first", label, a.Name())
			}
			return nil, fmt.Errorf("grid axis %s %s: no LoRA of that name is applied (applied: %s): name one of them", label, a.Name(), strings.Join(c.LoRAs, ", "))
		}
	default:
		found := false
		for k, n := range names {
			if n == name && k != LoRA && k != Prompt {
				a.Kind, found = k, true
			}
		}
		if !found {
			return nil, fmt.Errorf("grid axis %s: unknown axis %q: choose one of %s", label, name, AxisNames)
		}
	}
	where := fmt.Sprintf("grid axis %s %s", label, a.Name())
	if a.Kind == Strength && !c.HasStart {
		return nil, fmt.Errorf("%s: a strength axis needs a start image: add --init IMAGE, or choose another axis", where)
	}
	items, err := splitValues(values)
	if err != nil || len(items) == 0 {
		return nil, fmt.Errorf("%s: no values: give them after the =, as %s", where, Syntax)
	}
	if a.Kind == PromptSR {
		if !strings.Contains(c.Prompt, items[0]) {
			return nil, fmt.Errorf("%s: the first value %q is not in the prompt: prompt-sr replaces the first value, so it must appear in the prompt", where, items[0])
		}
		a.Search = items[0]
		for _, it := range items {
			a.Values = append(a.Values, Value{Text: it})
		}
		if err := checkCount(where, a); err != nil {
			return nil, err
		}
		return a, nil
	}
	for _, it := range items {
		vs, err := parseItem(a.Kind, it)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", where, it, err)
		}
		a.Values = append(a.Values, vs...)
	}
	if err := checkCount(where, a); err != nil {
		return nil, err
	}
	return a, nil
}

// checkCount: one axis alone may not pass the cell limit.
func checkCount(where string, a *Axis) error {
	if len(a.Values) > MaxCells {
		return fmt.Errorf("%s: %d values; a grid has at most %d cells: choose fewer", where, len(a.Values), MaxCells)
	}
	return nil
}

// splitValues splits a comma list, with CSV quoting for values that hold commas (prompt-sr).
func splitValues(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	r := csv.NewReader(strings.NewReader(s))
	r.TrimLeadingSpace = true
	r.LazyQuotes = true
	rec, err := r.Read()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, v := range rec {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

func containsName(list []string, name string) bool {
	for _, n := range list {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// parseItem reads one comma-separated item of a kind: a value or a range.
func parseItem(k Kind, it string) ([]Value, error) {
	switch k {
	case Seed, Steps:
		ints, err := intRange(it)
		if err != nil {
			return nil, err
		}
		var vs []Value
		for _, n := range ints {
			if k == Seed && n < 0 {
				return nil, fmt.Errorf("a seed is a whole number from 0")
			}
			if k == Steps && (n < 1 || n > 1000) {
				return nil, fmt.Errorf("%d steps: choose between 1 and 1000", n)
			}
			vs = append(vs, Value{Text: strconv.FormatInt(n, 10), Int: n})
		}
		return vs, nil
	case Size:
		w, h, ok := strings.Cut(strings.ToLower(it), "x")
		wi, err1 := strconv.Atoi(strings.TrimSpace(w))
		hi, err2 := strconv.Atoi(strings.TrimSpace(h))
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("write a size as WIDTHxHEIGHT in pixels, like 512x768")
		}
		if wi < 32 || hi < 32 || wi > 4096 || hi > 4096 {
			return nil, fmt.Errorf("each side between 32 and 4096 pixels")
		}
		return []Value{{Text: fmt.Sprintf("%dx%d", wi, hi), W: wi, H: hi}}, nil
	}
	nums, err := numRange(it)
	if err != nil {
		return nil, err
	}
	var vs []Value
	for _, x := range nums {
		if err := checkNum(k, x); err != nil {
			return nil, err
		}
		vs = append(vs, Value{Text: strconv.FormatFloat(x, 'g', -1, 64), Num: x})
	}
	return vs, nil
}

// checkNum is a real value's range for its kind.
func checkNum(k Kind, x float64) error {
	switch k {
	case CFG:
		if x < 1 || x > 100 {
			return fmt.Errorf("CFG %g: choose between 1 (off) and 100", x)
		}
	case Strength:
		if x <= 0 || x > 1 {
			return fmt.Errorf("strength %g: choose above 0 and at most 1", x)
		}
	case VariationStrength:
		if x < 0 || x > 1 {
			return fmt.Errorf("variation strength %g: choose between 0 and 1", x)
		}
	case LoRA:
		if math.Abs(x) > 10 {
			return fmt.Errorf("LoRA weight %g: choose between -10 and 10", x)
		}
	case Hires:
		if x < 1 || x > 4 {
			return fmt.Errorf("hires factor %g: choose 1 (no second pass) or a factor up to 4, like 1.5 or 2", x)
		}
	}
	return nil
}

// maxRange bounds how many values one range may make before the cell limit is checked.
const maxRange = 1000

// intRange reads N, A-B (step 1) or A-B:STEP as whole numbers; B may be below A (counting down).
func intRange(it string) ([]int64, error) {
	a, b, step, isRange, err := splitRange(it)
	if err != nil {
		return nil, err
	}
	bad := fmt.Errorf("write a whole number, or a range A-B or A-B:STEP of whole numbers")
	x, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return nil, bad
	}
	if !isRange {
		return []int64{x}, nil
	}
	y, err := strconv.ParseInt(b, 10, 64)
	if err != nil {
		return nil, bad
	}
	s := int64(1)
	if step != "" {
		if s, err = strconv.ParseInt(step, 10, 64); err != nil || s <= 0 {
			return nil, fmt.Errorf("the step after : must be a whole number above 0")
		}
	}
	if y < x {
		s = -s
	}
	var out []int64
	for v := x; (s > 0 && v <= y) || (s < 0 && v >= y); v += s {
		if out = append(out, v); len(out) > maxRange {
			return nil, fmt.Errorf("the range makes more than %d values", maxRange)
		}
	}
	return out, nil
}

// numRange reads N or A-B:STEP as real numbers (a real range needs its step).
func numRange(it string) ([]float64, error) {
	a, b, step, isRange, err := splitRange(it)
	if err != nil {
		return nil, err
	}
	bad := fmt.Errorf("write a number, or a range A-B:STEP like 0.2-0.8:0.2")
	x, err := strconv.ParseFloat(a, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, bad
	}
	if !isRange {
		return []float64{x}, nil
	}
	y, err := strconv.ParseFloat(b, 64)
	if err != nil || math.IsNaN(y) || math.IsInf(y, 0) {
		return nil, bad
	}
	s := 1.0
	if step != "" {
		if s, err = strconv.ParseFloat(step, 64); err != nil || !(s > 0) || math.IsInf(s, 0) {
			return nil, fmt.Errorf("the step after : must be a number above 0")
		}
	} else if x != math.Trunc(x) || y != math.Trunc(y) {
		return nil, fmt.Errorf("a range of real numbers needs its step: write A-B:STEP, like 0.2-0.8:0.2")
	}
	n := math.Floor(math.Abs(y-x)/s + 1e-9)
	if n >= maxRange {
		return nil, fmt.Errorf("the range makes more than %d values", maxRange)
	}
	dir := 1.0
	if y < x {
		dir = -1
	}
	out := make([]float64, 0, int(n)+1)
	for i := 0; i <= int(n); i++ {
		// Rounded to 12 significant digits so 0.2+3·0.2 reads 0.8, not 0.8000000000000002.
		v, _ := strconv.ParseFloat(strconv.FormatFloat(x+dir*float64(i)*s, 'g', 12, 64), 64)
		out = append(out, v)
	}
	return out, nil
}

// splitRange splits A-B:STEP; a leading minus belongs to A (-1-3 is −1 to 3).
func splitRange(it string) (a, b, step string, isRange bool, err error) {
	it = strings.TrimSpace(it)
	body, step, hasStep := strings.Cut(it, ":")
	i := strings.Index(body[min(1, len(body)):], "-")
	if i < 0 {
		if hasStep {
			return "", "", "", false, fmt.Errorf("a step (after :) needs a range A-B before it")
		}
		return body, "", "", false, nil
	}
	i += min(1, len(body))
	return strings.TrimSpace(body[:i]), strings.TrimSpace(body[i+1:]), strings.TrimSpace(step), true, nil
}
