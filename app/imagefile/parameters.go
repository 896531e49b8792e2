package imagefile

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Parameters is the AUTOMATIC1111 "parameters" text for s:
//
//	prompt
//	Negative prompt: negative
//	Steps: 40, Sampler: Euler, CFG scale: 4, Seed: 11, Size: 1024x1024, Model hash: 1a2b3c4d5e, Model: qwen-image-2.1, Version: Easel 0.1.0
//
// The negative-prompt line is left out when there is none. LoRAs are written as A1111 writes
// them: a <lora:NAME:STRENGTH> tag per LoRA after the prompt, and a quoted
// Lora hashes: "NAME: shorthash, …" field (lora.md §5). A value holding a comma, a colon or a
// quote is written as a JSON string, as A1111 quotes such values, so readers that split on ", "
// stay correct.
func Parameters(s *Settings) string {
	var b strings.Builder
	b.WriteString(s.Prompt)
	var loraHashes []string
	for _, l := range s.LoRAs {
		name := LoRATagName(l.Name)
		fmt.Fprintf(&b, " <lora:%s:%s>", name, strconv.FormatFloat(l.Strength, 'g', -1, 64))
		if l.ShortHash != "" {
			loraHashes = append(loraHashes, strings.NewReplacer(":", "", ",", "").Replace(name)+": "+l.ShortHash)
		}
	}
	if s.NegativePrompt != "" {
		b.WriteString("\nNegative prompt: ")
		b.WriteString(s.NegativePrompt)
	}
	fields := [][2]string{
		{"Steps", strconv.Itoa(s.Steps)},
		{"Sampler", s.Sampler},
		{"CFG scale", strconv.FormatFloat(s.CFG, 'g', -1, 64)},
		{"Seed", strconv.FormatUint(s.Seed, 10)},
		{"Size", fmt.Sprintf("%dx%d", s.Width, s.Height)},
		{"Model hash", shortHash(s.ModelHash)},
		{"Model", s.Model},
	}
	if s.VariationStrength > 0 {
		fields = append(fields, [2]string{"Variation seed", strconv.FormatUint(s.VariationSeed, 10)},
			[2]string{"Variation seed strength", strconv.FormatFloat(s.VariationStrength, 'g', -1, 64)})
	}
	if h := s.Hires; h != nil {
		fields = append(fields, [2]string{"Denoising strength", strconv.FormatFloat(h.Strength, 'g', -1, 64)},
			[2]string{"Hires upscale", strconv.FormatFloat(h.Factor, 'g', -1, 64)},
			[2]string{"Hires steps", strconv.Itoa(h.Steps)},
			[2]string{"Hires upscaler", h.Upscaler})
	}
	if in := s.Init; in != nil && s.Hires == nil {
		fields = append(fields, [2]string{"Denoising strength", strconv.FormatFloat(in.Strength, 'g', -1, 64)})
		if in.Mask != nil || in.Extend != [4]int{} {
			fields = append(fields, [2]string{"Mask blur", strconv.FormatFloat(in.MaskBlur, 'g', -1, 64)})
		}
	}
	if u := s.Upscale; u != nil {
		fields = append(fields, u.fields()...)
	}
	if len(loraHashes) > 0 {
		fields = append(fields, [2]string{"Lora hashes", strings.Join(loraHashes, ", ")})
	}
	if s.EaselVersion != "" {
		fields = append(fields, [2]string{"Version", "Easel " + s.EaselVersion})
	}
	b.WriteString("\n")
	first := true
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		b.WriteString(f[0])
		b.WriteString(": ")
		b.WriteString(quoteValue(f[1]))
	}
	return b.String()
}

// quoteValue writes v as a JSON string when it holds a separator.
func quoteValue(v string) string {
	if !strings.ContainsAny(v, ",:\"\n") {
		return v
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// shortHash is the first ten hex digits of a hash, as A1111 prints "Model hash".
func shortHash(h string) string {
	if len(h) > 10 {
		return h[:10]
	}
	return h
}

// LoRATagName is the name a <lora:NAME:…> tag uses for a LoRA file: its name without the
// .safetensors extension, with the characters that would end the tag ('>' and ':') removed.
func LoRATagName(file string) string {
	name := strings.TrimSuffix(file, ".safetensors")
	return strings.NewReplacer(">", "", ":", "", "<", "").Replace(name)
}
