package imagefile

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
)

// ForeignParameters is what an AUTOMATIC1111 "parameters" text says (ours, or another tool's).
// A field the text does not give is left at its zero value; HasSeed tells a missing seed from
// seed 0.
type ForeignParameters struct {
	Prompt, NegativePrompt string
	Steps                  int
	CFG                    float64
	Seed                   uint64
	HasSeed                bool
	Width, Height          int
	Sampler, Model         string
	// LoRAs are the prompt's <lora:NAME:STRENGTH> tags (which are removed from Prompt), with
	// the short hashes the "Lora hashes" field gives for them.
	LoRAs []ForeignLoRA
	// Fields is every "Key: value" pair of the last line, values unquoted.
	Fields map[string]string
}

// ForeignLoRA is one <lora:…> tag of a parameters text.
type ForeignLoRA struct {
	Name      string
	Strength  float64
	ShortHash string // "" when the text does not give one
}

// loraTag is A1111's <lora:NAME:MULT…> (further positional or named arguments are ignored;
// MULT defaults to 1).
var loraTag = regexp.MustCompile(`<lora:([^:>]+)(?::([^:>]*))?(?::[^>]*)?>`)

// paramField is one "Key: value" of the settings line, as A1111's parser reads it: a key of
// words, spaces, hyphens and slashes, then a JSON-quoted value or everything up to the next comma.
var paramField = regexp.MustCompile(`\s*(\w[\w \-/]+):\s*("(?:\\.|[^\\"])+"|[^,]*)(?:,|$)`)

// ParseParameters reads an A1111 "parameters" text:
//
//	prompt (one or more lines)
//	Negative prompt: negative (one or more lines)
//	Steps: 20, Sampler: Euler a, CFG scale: 7, Seed: 42, Size: 512x768, Model: …
//
// following A1111's own reader: the last line holds the settings when it has at least three
// "Key: value" pairs, else it belongs to the prompt. Values it cannot read as numbers are left
// out rather than guessed.
func ParseParameters(text string) ForeignParameters {
	var p ForeignParameters
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")), "\n")
	last := lines[len(lines)-1]
	if len(paramField.FindAllString(last, -1)) >= 3 {
		lines = lines[:len(lines)-1]
	} else {
		last = ""
	}
	var prompt, negative []string
	inNegative := false
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "Negative prompt:"); ok {
			inNegative, line = true, strings.TrimSpace(rest)
		}
		if inNegative {
			negative = append(negative, line)
		} else {
			prompt = append(prompt, line)
		}
	}
	p.Prompt = strings.TrimSpace(strings.Join(prompt, "\n"))
	for _, m := range loraTag.FindAllStringSubmatch(p.Prompt, -1) {
		l := ForeignLoRA{Name: m[1], Strength: 1}
		if v, err := strconv.ParseFloat(strings.TrimSpace(m[2]), 64); err == nil {
			l.Strength = v
		}
		p.LoRAs = append(p.LoRAs, l)
	}
	if p.LoRAs != nil {
		p.Prompt = strings.TrimSpace(loraTag.ReplaceAllString(p.Prompt, ""))
	}
	p.NegativePrompt = strings.TrimSpace(strings.Join(negative, "\n"))
	p.Fields = map[string]string{}
	for _, m := range paramField.FindAllStringSubmatch(last, -1) {
		p.Fields[strings.TrimSpace(m[1])] = unquoteValue(strings.TrimSpace(m[2]))
	}
	if v, err := strconv.Atoi(p.Fields["Steps"]); err == nil && v > 0 {
		p.Steps = v
	}
	if v, err := strconv.ParseFloat(p.Fields["CFG scale"], 64); err == nil && v > 0 {
		p.CFG = v
	}
	if v, err := strconv.ParseUint(p.Fields["Seed"], 10, 64); err == nil {
		p.Seed, p.HasSeed = v, true
	}
	if w, h, ok := strings.Cut(p.Fields["Size"], "x"); ok {
		wi, errW := strconv.Atoi(strings.TrimSpace(w))
		hi, errH := strconv.Atoi(strings.TrimSpace(h))
		if errW == nil && errH == nil && wi > 0 && hi > 0 {
			p.Width, p.Height = wi, hi
		}
	}
	p.Sampler, p.Model = p.Fields["Sampler"], p.Fields["Model"]
	for _, pair := range strings.Split(p.Fields["Lora hashes"], ",") {
		name, hash, ok := strings.Cut(pair, ":")
		if !ok {
			continue
		}
		for i := range p.LoRAs {
			if strings.NewReplacer(":", "", ",", "").Replace(p.LoRAs[i].Name) == strings.TrimSpace(name) {
				p.LoRAs[i].ShortHash = strings.TrimSpace(hash)
			}
		}
	}
	return p
}

// Empty reports whether the text gave nothing to restore.
func (p ForeignParameters) Empty() bool {
	return p.Prompt == "" && p.NegativePrompt == "" && p.Steps == 0 && p.CFG == 0 && !p.HasSeed && p.Width == 0
}

// unquoteValue undoes the JSON quoting of a value holding a separator (see quoteValue).
func unquoteValue(v string) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		var s string
		if json.Unmarshal([]byte(v), &s) == nil {
			return s
		}
	}
	return v
}
