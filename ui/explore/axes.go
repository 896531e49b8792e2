package explore

import (
	"path/filepath"
	"strings"

	"easel/app/compose"
)

// NoAxis is the axis menus' "not used" choice.
const NoAxis = "—"

// axisOrder are the axes the menus offer, as the grid names them, in the menus' order.
var axisOrder = []string{"seed", "steps", "cfg", "strength", "variation-strength", "prompt-sr", "size", "hires"}

// axisWords are the axes as the menus name them, in words, for the grid's own names.
var axisWords = map[string]string{"seed": "Seed", "steps": "Steps", "cfg": "CFG scale", "strength": "Strength",
	"variation-strength": "Variation strength", "prompt-sr": "Prompt: replace words", "size": "Size",
	"hires": "Upscale (hires)", "prompt": "Prompt alternatives"}

// loraAxisWords starts a LoRA weight axis's menu entry.
const loraAxisWords = "LoRA weight: "

// AxisLabel is an axis's menu entry for the grid's name of it ("seed" → "Seed", "lora:ink" →
// "LoRA weight: ink"; a prompt's second {a|b} group "prompt2" → "Prompt alternatives 2").
func AxisLabel(name string) string {
	if l, ok := axisWords[name]; ok {
		return l
	}
	if n, ok := strings.CutPrefix(name, "lora:"); ok {
		return loraAxisWords + n
	}
	if n, ok := strings.CutPrefix(name, "prompt"); ok && n != "" {
		return axisWords["prompt"] + " " + n
	}
	return name
}

// axisName is the grid's name of a menu entry (AxisLabel's inverse).
func axisName(label string) string {
	for n, l := range axisWords {
		if l == label {
			return n
		}
	}
	if n, ok := strings.CutPrefix(label, loraAxisWords); ok {
		return "lora:" + n
	}
	return label
}

// axisChoices are the axes in words, with a LoRA weight axis for each enabled LoRA of d.
func axisChoices(d compose.Draft) []string {
	out := []string{NoAxis}
	for _, n := range axisOrder {
		out = append(out, AxisLabel(n))
	}
	for _, n := range loraNames(d) {
		out = append(out, AxisLabel("lora:"+n))
	}
	return out
}

// loraNames are the names of d's enabled LoRAs, as a LoRA weight axis names them.
func loraNames(d compose.Draft) []string {
	var names []string
	for _, l := range d.LoRAs {
		if l.Enabled {
			names = append(names, loraName(l))
		}
	}
	return names
}

// loraName is a LoRA's name: its file's name without folder and extension.
func loraName(l compose.LoRA) string {
	return strings.TrimSuffix(filepath.Base(l.Path), filepath.Ext(l.Path))
}
