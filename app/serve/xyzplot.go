package serve

import (
	"context"
	"errors"
	"fmt"
	"image"
	"net/http"
	"strings"
	"time"

	"easel/app/grid"
	"easel/app/imagefile"
)

// xyzPlot answers a txt2img or img2img request whose script_name is A1111's X/Y/Z plot, and
// reports whether it did (false: the request is not a plot, and generate goes on as usual).
//
// script_args are read as A1111's scripts/xyz_grid.py reads them (xyzArgs); each axis type is an
// index into the mode's axis options, as A1111 counts them. The types Easel has (Seed, Var.
// strength, Steps, CFG Scale, Prompt S/R, and Denoising in img2img) become the grid's axes; any
// other type is left out with a sentence in info.warnings. The cells that share a prefill (all of
// them but for a Prompt S/R axis) are one queued job of pipeline.Request.Cells (cellgroups.go),
// each cell bit for bit its single run; /interrupt keeps the cells finished. The answer is A1111's: the grid first (the Z grids side by side
// under their titles when there is a Z axis), then each Z grid with include_sub_grids, then the cells with
// include_lone_images.
func (s *Server) xyzPlot(w http.ResponseWriter, r *http.Request, kind string, f *fields, p *params, extra map[string]any) bool {
	if !strings.EqualFold(strings.TrimSpace(f.Str("script_name", "")), xyzScriptName) {
		return false
	}
	bad := func(msg string) bool {
		unprocessable(w, []detailItem{{Loc: []any{"body", "script_args"}, Msg: msg, Type: "value_error"}})
		return true
	}
	raw, ok := f.raw("script_args")
	if !ok {
		return bad("the X/Y/Z plot needs script_args: x_type, x_values, x_values_dropdown, y_type, … as A1111's script takes them")
	}
	a, err := parseXYZArgs(raw)
	if err != nil {
		return bad(err.Error())
	}
	warnings := []string{}
	for _, wn := range p.Warnings {
		if !strings.HasPrefix(wn, "scripts are not available") {
			warnings = append(warnings, wn)
		}
	}
	opts := xyzModeOptions(kind)
	var specs [3]string
	for i := range 3 {
		t := a.types[i]
		if t < 0 || t >= len(opts) {
			return bad(fmt.Sprintf("script_args %s_type %d: %s's axis types are 0 to %d", strings.ToLower(grid.Labels[i]), t, kind, len(opts)-1))
		}
		o := opts[t]
		if o.label == "Nothing" {
			continue
		}
		if o.easel == "" || (o.easel == "strength" && kind == "txt2img") {
			warnings = append(warnings, fmt.Sprintf("X/Y/Z plot: the %s axis's type %q is not available in Easel; that axis was left out", grid.Labels[i], o.label))
			continue
		}
		vals, _ := xyzValues(o, a.values[i], a.dropdowns[i], a)
		if len(vals) == 0 {
			return bad(fmt.Sprintf("X/Y/Z plot: the %s axis (%s) has no values: give them in %s_values", grid.Labels[i], o.label, strings.ToLower(grid.Labels[i])))
		}
		specs[i] = o.easel + "=" + csvJoin(vals)
	}
	if p.Seed == -1 {
		p.Seed = randomSeed()
	}
	if p.Subseed == -1 {
		p.Subseed = randomSeed()
	}
	gr, err := grid.Parse(specs, grid.Context{Prompt: p.Prompt, HasStart: kind == "img2img"})
	if err != nil {
		return bad("X/Y/Z plot: " + err.Error())
	}
	if gr.Empty() {
		p.Warnings = warnings
		return false // only axes Easel lacks: one image, as without the script
	}
	base := grid.Setup{Prompt: p.Prompt, Seed: uint64(p.Seed), Steps: p.Steps, CFG: p.CFG, Strength: p.Denoising, VariationStrength: p.SubseedStrength}
	var plans []plan
	var varStrengths []float64
	for _, c := range gr.Cells() {
		pc := *p
		pc.BatchSize, pc.NIter, pc.Warnings = 1, 1, nil
		st := gr.Apply(c, base)
		pc.Prompt, pc.Seed, pc.Steps, pc.CFG, pc.Denoising, pc.SubseedStrength = st.Prompt, int64(st.Seed), st.Steps, st.CFG, st.Strength, st.VariationStrength
		for i, ax := range gr.Axes {
			if ax != nil && ax.Kind == grid.PromptSR { // A1111 replaces in the negative prompt too
				pc.Negative = strings.ReplaceAll(pc.Negative, ax.Search, ax.Values[c.Pos[i]].Text)
			}
		}
		ps, badItems := s.drafts(&pc)
		if badItems != nil {
			unprocessable(w, badItems)
			return true
		}
		if c.Index == 0 {
			warnings = append(warnings, pc.Warnings...)
		}
		plans, varStrengths = append(plans, ps[0]), append(varStrengths, pc.SubseedStrength)
	}
	start := time.Now()
	out, ok := s.runGroups(w, r, plans, cellGroups(plans), varStrengths, kind) // one job per prefill (cellgroups.go)
	if !ok {
		return true
	}
	if out.failed != nil {
		for _, k := range badRequestKinds {
			if errors.Is(out.failed, k) {
				unprocessable(w, []detailItem{{Loc: []any{"body"}, Msg: out.failed.Error(), Type: "value_error"}})
				return true
			}
		}
		if errors.Is(out.failed, context.Canceled) {
			busy(w, 5, "the server is shutting down")
			return true
		}
		serverError(w, "GenerationError", out.failed)
		return true
	}
	pictures := map[int]*image.NRGBA{}
	names := make([]string, len(plans))
	var sets []*imagefile.Settings
	var used []plan
	var cells []string
	for i, res := range out.results {
		if res == nil {
			continue
		}
		img, set, err := out.owners[i].Picture(res)
		if err != nil {
			serverError(w, "PasteBackError", err)
			return true
		}
		pictures[i], names[i] = img, fmt.Sprintf("cell %d", i+1)
		sets, used = append(sets, set), append(used, plans[i])
		if p.SendImages && a.includeLone {
			enc, err := encodePNG(img, set, p.Alpha)
			if err != nil {
				serverError(w, "EncodeError", err)
				return true
			}
			cells = append(cells, enc)
		}
	}
	var grids []*image.NRGBA
	var gridSets []*imagefile.Settings
	for z := range gr.Dims()[2] {
		img, _, err := gr.Compose(z, pictures)
		if err != nil {
			serverError(w, "GridError", err)
			return true
		}
		gs := &imagefile.Settings{Prompt: p.Prompt, NegativePrompt: p.Negative, Width: img.Rect.Dx(), Height: img.Rect.Dy(), Steps: base.Steps,
			CFG: base.CFG, Seed: base.Seed, Sampler: "Euler", Grid: gr.Settings(z, names)}
		if len(sets) > 0 {
			gs.Model, gs.EaselVersion = sets[0].Model, sets[0].EaselVersion
		}
		grids, gridSets = append(grids, img), append(gridSets, gs)
	}
	images := []string{}
	if p.SendImages && len(pictures) > 0 {
		mainSet := *gridSets[0]
		mainSet.Grid = &imagefile.GridSettings{Axes: gridSets[0].Grid.Axes, Cells: names}
		all, err := gr.ComposeZ(grids)
		if err != nil {
			serverError(w, "GridError", err)
			return true
		}
		enc, err := encodePNG(all, &mainSet, p.Alpha)
		if err != nil {
			serverError(w, "EncodeError", err)
			return true
		}
		images = append(images, enc)
		if a.includeSubGrids && len(grids) > 1 {
			for z, g := range grids {
				enc, err := encodePNG(g, gridSets[z], p.Alpha)
				if err != nil {
					serverError(w, "EncodeError", err)
					return true
				}
				images = append(images, enc)
			}
		}
		images = append(images, cells...)
	}
	warnings = append(warnings, runNotices(out)...)
	if out.interrupted {
		p.Interrupted = true
		warnings = append(warnings, fmt.Sprintf("interrupted: %d of %d cells were made; the grid shows them", len(sets), len(plans)))
	} else if out.skipped > 0 { // a skip cancels the job of cells sharing the one being made's prefill
		warnings = append(warnings, fmt.Sprintf("skipped: %d of %d cells were made (a skip ends the cell being made and the rest of the cells sharing its prompt); the grid shows them", len(sets), len(plans)))
	}
	info := s.info(p, plans, used, sets, warnings, extra)
	s.logRequest(r, kind+" x/y/z plot", p, plans, len(sets), time.Since(start))
	writeJSON(w, http.StatusOK, map[string]any{"images": images, "parameters": s.parameters(p, plans, extra), "info": info})
	return true
}
