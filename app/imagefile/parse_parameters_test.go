package imagefile

import (
	"reflect"
	"strings"
	"testing"
)

// Texts as other tools write them (AUTOMATIC1111 / Forge, with a multi-line prompt and quoted
// values; a prompt-only text; no settings line) and our own, read back field by field.
func TestParseParameters(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       ForeignParameters
	}{
		{
			name: "A1111",
			text: "masterpiece, a red fox in the snow,\nsoft light <lora:detail:0.6>\nNegative prompt: blurry, lowres\nSteps: 28, Sampler: DPM++ 2M Karras, CFG scale: 6.5, Seed: 3141592653, Size: 832x1216, Model hash: 6ce0161689, Model: sd_xl_base_1.0, Denoising strength: 0.35, Lora hashes: \"detail: 1a2b3c, other: 4d5e\", Version: v1.7.0",
			want: ForeignParameters{Prompt: "masterpiece, a red fox in the snow,\nsoft light", NegativePrompt: "blurry, lowres",
				LoRAs: []ForeignLoRA{{Name: "detail", Strength: 0.6, ShortHash: "1a2b3c"}}, Steps: 28, CFG: 6.5, Seed: 3141592653, HasSeed: true, Width: 832, Height: 1216, Sampler: "DPM++ 2M Karras", Model: "sd_xl_base_1.0"},
		},
		{
			name: "no negative, Windows line ends",
			text: "an owl\r\nSteps: 20, Sampler: Euler a, CFG scale: 7, Seed: 0, Size: 512x512",
			want: ForeignParameters{Prompt: "an owl", Steps: 20, CFG: 7, Seed: 0, HasSeed: true, Width: 512, Height: 512, Sampler: "Euler a"},
		},
		{
			name: "prompt only",
			text: "just a prompt, with: a colon",
			want: ForeignParameters{Prompt: "just a prompt, with: a colon"},
		},
		{
			name: "unreadable numbers are left out",
			text: "x\nSteps: many, Sampler: Euler, CFG scale: high, Seed: -1, Size: big",
			want: ForeignParameters{Prompt: "x", Sampler: "Euler"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParseParameters(tc.text)
			got.Fields = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

// What Parameters writes, ParseParameters reads back, quoted values included.
func TestParametersRoundTrip(t *testing.T) {
	s := &Settings{Prompt: "a cat, on a mat:\nsecond line", NegativePrompt: "dogs", Steps: 40, Sampler: "Euler", CFG: 4, Seed: 11,
		Width: 1664, Height: 928, Model: "qwen, image: 2.1.cmf", ModelHash: "0123456789abcdef", EaselVersion: "0.1.0"}
	p := ParseParameters(Parameters(s))
	if p.Prompt != s.Prompt || p.NegativePrompt != s.NegativePrompt || p.Steps != s.Steps || p.CFG != s.CFG ||
		p.Seed != s.Seed || !p.HasSeed || p.Width != s.Width || p.Height != s.Height || p.Sampler != s.Sampler || p.Model != s.Model {
		t.Errorf("round trip gave %+v from %+v", p, s)
	}
	if p.Fields["Version"] != "Easel 0.1.0" || p.Fields["Model hash"] != "0123456789" {
		t.Errorf("fields %v", p.Fields)
	}
	if ParseParameters("").Empty() != true || ParseParameters("a prompt").Empty() {
		t.Error("Empty: want true for no text, false for a prompt")
	}
}

// LoRAs go out as <lora:NAME:STRENGTH> tags and a Lora hashes field, and come back.
func TestParametersLoRAs(t *testing.T) {
	s := &Settings{Prompt: "a fox", Steps: 8, Sampler: "Euler", CFG: 1, Seed: 3, Width: 64, Height: 64,
		LoRAs: []LoRARef{{Name: "turbo:v2.safetensors", SHA256: "ab", ShortHash: "0123456789ab", Strength: 1}, {Name: "style.safetensors", ShortHash: "ba9876543210", Strength: -0.25}}}
	text := Parameters(s)
	for _, want := range []string{"a fox <lora:turbov2:1> <lora:style:-0.25>", `Lora hashes: "turbov2: 0123456789ab, style: ba9876543210"`} {
		if !strings.Contains(text, want) {
			t.Errorf("parameters %q lacks %q", text, want)
		}
	}
	p := ParseParameters(text)
	want := []ForeignLoRA{{"turbov2", 1, "0123456789ab"}, {"style", -0.25, "ba9876543210"}}
	if p.Prompt != "a fox" || !reflect.DeepEqual(p.LoRAs, want) {
		t.Errorf("read back prompt %q, LoRAs %+v; want %+v", p.Prompt, p.LoRAs, want)
	}
}
