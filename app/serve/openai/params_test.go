package openai

import (
	"testing"

	"easel/app/serve/render"
	"easel/engine/pipeline"
)

// form is a source over fixed values.
func form(m map[string]string) source {
	return func(name string) (string, bool) { v, ok := m[name]; return v, ok }
}

// TestQualityChoosesSteps: low runs a quarter of the model's steps, medium half, high and auto
// the model's own (0: left to the model); an explicit steps wins.
func TestQualityChoosesSteps(t *testing.T) {
	model := render.Model{Name: "m.cmf", Names: []string{"m.cmf"}, Defaults: pipeline.Defaults{Steps: 40}}
	for q, want := range map[string]int{"low": 10, "medium": 20, "high": 0, "auto": 0} {
		j, perr := readJob(form(map[string]string{"prompt": "x", "quality": q}), model, "image_generation")
		if perr != nil || j.req.Steps != want {
			t.Errorf("quality %s: steps %d (%v), want %d", q, j.req.Steps, perr, want)
		}
	}
	j, _ := readJob(form(map[string]string{"prompt": "x", "quality": "low", "steps": "3"}), model, "image_generation")
	if j.req.Steps != 3 {
		t.Errorf("steps 3 with quality low: %d", j.req.Steps)
	}
}

// TestRefusedParameters: each bad value names its parameter.
func TestRefusedParameters(t *testing.T) {
	model := render.Model{Name: "m.cmf", Names: []string{"m.cmf"}}
	for _, c := range []struct {
		in    map[string]string
		param string
	}{
		{map[string]string{}, "prompt"},
		{map[string]string{"prompt": "x", "size": "10x10"}, "size"},
		{map[string]string{"prompt": "x", "size": "1024"}, "size"},
		{map[string]string{"prompt": "x", "n": "11"}, "n"},
		{map[string]string{"prompt": "x", "quality": "ultra"}, "quality"},
		{map[string]string{"prompt": "x", "output_format": "gif"}, "output_format"},
		{map[string]string{"prompt": "x", "background": "transparent", "output_format": "jpeg"}, "background"},
		{map[string]string{"prompt": "x", "response_format": "html"}, "response_format"},
		{map[string]string{"prompt": "x", "seed": "-5"}, "seed"},
		{map[string]string{"prompt": "x", "guidance_scale": "lots"}, "guidance_scale"},
		{map[string]string{"prompt": "x", "partial_images": "4"}, "partial_images"},
	} {
		if _, perr := readJob(form(c.in), model, "image_generation"); perr == nil || perr.param != c.param {
			t.Errorf("%v: %+v, want a refusal of %s", c.in, perr, c.param)
		}
	}
	j, perr := readJob(form(map[string]string{"prompt": "x", "model": "gpt-image-1", "seed": "18446744073709551615"}), model, "image_generation")
	if perr != nil || j.req.Model != "" || len(j.notes) != 1 || j.req.Seed != 18446744073709551615 || j.req.RandomSeed {
		t.Errorf("another model's name and a 64-bit seed: %+v %v", j, perr)
	}
}
