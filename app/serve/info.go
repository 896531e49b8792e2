package serve

import (
	"encoding/json"
	"time"

	"easel/app"
	"easel/app/imagefile"
)

// info is the response's `info`: a JSON object written as a string, as A1111 does, with the
// values actually used (the model's defaults filled in) and what Easel could not do in warnings.
func (s *Server) info(p *params, plans, used []plan, sets []*imagefile.Settings, warnings []string, extra map[string]any) string {
	name, _, defaults := s.models.current()
	allSeeds, allSubseeds, infotexts := []uint64{}, []uint64{}, []string{}
	allPrompts, allNegatives := []string{}, []string{}
	for _, pl := range plans {
		allSeeds = append(allSeeds, pl.Seed)
		allSubseeds = append(allSubseeds, pl.Subseed)
		allPrompts = append(allPrompts, pl.Draft.Prompt)
		allNegatives = append(allNegatives, p.Negative)
	}
	for _, set := range sets {
		infotexts = append(infotexts, imagefile.Parameters(set))
	}
	width, height := plans[0].size()
	if len(sets) > 0 {
		width, height = sets[0].Width, sets[0].Height // the size delivered
	}
	steps, cfg := p.Steps, p.CFG
	if steps == 0 {
		steps = defaults.Steps
	}
	if len(sets) > 0 {
		steps, cfg = sets[0].Steps, sets[0].CFG
	} else if cfg <= 1 {
		cfg = 1
	}
	if warnings == nil {
		warnings = []string{}
	}
	m := map[string]any{
		"prompt":                           plans[0].Draft.Prompt,
		"all_prompts":                      allPrompts,
		"negative_prompt":                  p.Negative,
		"all_negative_prompts":             allNegatives,
		"seed":                             plans[0].Seed,
		"all_seeds":                        allSeeds,
		"subseed":                          plans[0].Subseed,
		"all_subseeds":                     allSubseeds,
		"subseed_strength":                 p.SubseedStrength,
		"width":                            width,
		"height":                           height,
		"sampler_name":                     "Euler",
		"scheduler":                        "automatic",
		"cfg_scale":                        cfg,
		"steps":                            steps,
		"batch_size":                       p.BatchSize,
		"n_iter":                           p.NIter,
		"restore_faces":                    false,
		"face_restoration_model":           nil,
		"sd_model_name":                    stem(name),
		"sd_model_hash":                    shortHash(plans[0].ModelHash),
		"sd_vae_name":                      nil,
		"sd_vae_hash":                      nil,
		"seed_resize_from_w":               -1,
		"seed_resize_from_h":               -1,
		"denoising_strength":               extra["denoising_strength"],
		"extra_generation_params":          map[string]any{},
		"index_of_first_image":             0,
		"infotexts":                        infotexts,
		"styles":                           []string{},
		"job_timestamp":                    time.Now().Format("20060102150405"),
		"clip_skip":                        1,
		"is_using_inpainting_conditioning": false,
		"version":                          "Easel " + app.Version,
		"warnings":                         noPathsAll(warnings),
		"interrupted":                      p.Interrupted,
	}
	if p.EaselSigmas != nil {
		m["easel_sigmas"] = p.EaselSigmas // the grid used, so a client can tell it was not ignored
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// parameters is the response's `parameters`: the request's fields as they were used.
func (s *Server) parameters(p *params, plans []plan, extra map[string]any) map[string]any {
	width, height := plans[0].size()
	m := map[string]any{
		"prompt":           p.Prompt,
		"negative_prompt":  p.Negative,
		"seed":             p.Seed,
		"subseed":          p.Subseed,
		"subseed_strength": p.SubseedStrength,
		"width":            width,
		"height":           height,
		"steps":            p.Steps,
		"cfg_scale":        p.CFG,
		"batch_size":       p.BatchSize,
		"n_iter":           p.NIter,
		"sampler_name":     p.Sampler,
		"scheduler":        p.Scheduler,
		"send_images":      p.SendImages,
		"save_images":      p.SaveImages,
	}
	if p.Steps == 0 {
		m["steps"] = nil
	}
	if p.CFG == 0 {
		m["cfg_scale"] = nil
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// size is the image size a plan delivers (before an init image's paste-back decides it: 0 when
// the size follows the init image).
func (pl plan) size() (int, int) {
	if pl.Exact.crops() {
		return pl.Exact.Want.X, pl.Exact.Want.Y
	}
	w, h, _ := pl.Draft.OutputSize()
	return w, h
}
