package explore

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"easel/app/compose"
	"easel/app/grid"
)

// parseAxes reads the three menus' axes (their entries in words and the values typed) against
// the draft d and whether the canvas has a start image. Every error is a sentence in the menus'
// words, saying what to do in the window (not the command line's axis names or flags).
func parseAxes(kinds, values [3]string, d compose.Draft, hasStart bool) (*grid.Grid, error) {
	var specs [3]string
	seen := map[string]string{}
	chosen := 0
	for i := range 3 {
		k := kinds[i]
		if k == "" || k == NoAxis {
			continue
		}
		chosen++
		name, label := axisName(k), grid.Labels[i]
		if prev, ok := seen[name]; ok {
			return nil, fmt.Errorf("%s is already axis %s: an axis varies a setting once, so choose another setting for %s", k, prev, label)
		}
		seen[name] = label
		v := strings.TrimSpace(values[i])
		switch lora, isLoRA := strings.CutPrefix(name, "lora:"); {
		case name == "strength" && !hasStart:
			return nil, fmt.Errorf("%s (%s) needs a start image: add one under Work on an image, or choose another setting", label, k)
		case isLoRA && !slices.Contains(loraNames(d), lora):
			return nil, fmt.Errorf("%s (%s): that LoRA is off: turn it on under LoRAs, or choose another setting", label, k)
		case v == "":
			return nil, fmt.Errorf("%s (%s): type its values: %s", label, k, grid.Syntax)
		case name == "prompt-sr" && !strings.HasPrefix(v, `"`):
			if first, _, _ := strings.Cut(v, ","); !strings.Contains(d.Prompt, strings.TrimSpace(first)) {
				return nil, fmt.Errorf("%s (%s): %q is not in the prompt: the first value is the words each cell replaces, so type words of the prompt first", label, k, strings.TrimSpace(first))
			}
		}
		specs[i] = name + "=" + values[i]
	}
	if chosen == 3 && grid.HasAlternatives(d.Prompt) {
		return nil, fmt.Errorf("the prompt's {a|b} alternatives make an axis of their own, and X, Y and Z are all chosen: set one to %s, or take the braces out of the prompt", NoAxis)
	}
	g, err := grid.Parse(specs, grid.Context{Prompt: d.Prompt, HasStart: hasStart, LoRAs: loraNames(d)})
	if err != nil {
		return nil, plainAxisError(err)
	}
	if g.Empty() {
		return nil, fmt.Errorf("choose an axis and type its values (or write {a|b} in the prompt)")
	}
	for i, a := range g.Axes {
		if a != nil {
			g.Titles[i] = AxisLabel(a.Name()) // the grid image names its axes as the menus do
		}
	}
	return g, nil
}

// gridAxisError is how app/grid starts an error about one axis: "grid axis X seed: …".
var gridAxisError = regexp.MustCompile(`^grid axis ([XYZ]) (\S+): `)

// plainAxisError names the axis of an app/grid error as the menus do: "X (Seed): …".
func plainAxisError(err error) error {
	m := gridAxisError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	return fmt.Errorf("%s (%s): %s", m[1], AxisLabel(m[2]), strings.TrimPrefix(err.Error(), m[0]))
}
