package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"path/filepath"
	"strings"
	"time"

	"easel/app/compose"
	"easel/app/grid"
	"easel/app/imagefile"
	"easel/app/jobs"
	"easel/app/loralib"
	"easel/app/settings"
	"easel/engine/mmapfile"
	"easel/engine/pipeline"
)

const gridUsage = `
grids (X/Y/Z plot):
  --grid-x NAME=VALUES  vary a setting along X (and --grid-y, --grid-z: one grid image per Z
                      value), at most 64 cells per grid. NAME is seed, steps, cfg, strength
                      (with --init), variation-strength, lora:NAME (that --lora's weight),
                      prompt-sr (the first value is replaced in the prompt by each), size (WxH)
                      or hires (the second pass's factor, 1 = none). VALUES: 1,5,9; whole
                      ranges 1-4 or 1-10:3; numeric ranges 0.2-0.8:0.2. A prompt's {a|b|c}
                      takes the first free axis. Cells are NAME-1.png … (X fastest, then Y,
                      then Z; --out NAME.png, default easel-grid-SEED), the grid NAME-grid.png
                      (NAME-grid-Z.png with a Z axis); one prefill per distinct prompt,
                      LoRA weights and size`

// hasGrid reports whether the command line asks for a grid.
func (g *generateArgs) hasGrid() bool {
	return g.grid != [3]string{} || grid.HasAlternatives(g.prompt)
}

// parseGrid reads the grid axes against the command line: every bad axis is a usage error (exit
// 2) with the axis's sentence, before anything runs.
func (g *generateArgs) parseGrid(hasStart bool) (*grid.Grid, *failure) {
	var names []string
	for _, spec := range g.loras {
		path, _, err := loralib.ParseSpec(spec)
		if err != nil {
			return nil, &failure{ExitLoRA, err}
		}
		names = append(names, strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	}
	gr, err := grid.Parse(g.grid, grid.Context{Prompt: g.prompt, HasStart: hasStart, LoRAs: names})
	if err != nil {
		return nil, &failure{ExitUsage, err}
	}
	if g.batch.count > 1 {
		return nil, fail(ExitUsage, "--count with a grid: a grid makes one image per cell; vary the seed with --grid-x seed=1-4 instead")
	}
	return gr, nil
}

// gridPaths are the cells' files (NAME-1.png …) and the grid images' (NAME-grid.png, or
// NAME-grid-1.png … with a Z axis).
func gridPaths(out string, seed uint64, gr *grid.Grid) (cells, grids []string) {
	if out == "" {
		out = fmt.Sprintf("easel-grid-%d.png", seed)
	}
	ext := filepath.Ext(out)
	name := strings.TrimSuffix(out, ext)
	if ext == "" {
		ext = ".png"
	}
	for i := range gr.Count() {
		cells = append(cells, fmt.Sprintf("%s-%d%s", name, i+1, ext))
	}
	if gr.Axes[2] == nil {
		return cells, []string{name + "-grid" + ext}
	}
	for z := range gr.Dims()[2] {
		grids = append(grids, fmt.Sprintf("%s-grid-%d%s", name, z+1, ext))
	}
	return cells, grids
}

// generateGrid is easel generate with grid axes: the cells grouped by what their prefill needs
// (grid.Plan), each group one pipeline.RunCells, each cell saved as a normal Easel PNG as it
// comes, then the grid images. Cancelling keeps the cells saved and writes the partial grids.
func generateGrid(g *generateArgs, out *generateOutput) ([]*savedImage, *failure) {
	if g.from != "" {
		if f := applyFrom(g, out); f != nil {
			return nil, f
		}
	}
	d, seed, f := g.draft()
	if f != nil {
		return nil, f
	}
	gr, f := g.parseGrid(d.Start != nil)
	if f != nil {
		return nil, f
	}
	cellPaths, gridFiles := gridPaths(g.out, seed, gr)
	for _, p := range append(append([]string(nil), cellPaths...), gridFiles...) {
		if f := checkWritable(p); f != nil {
			return nil, f
		}
	}
	choice, f := chooseBackend(g.backend, out)
	if f != nil {
		return nil, f
	}
	out.backendChosen(choice)
	loadStart := time.Now()
	model, f := openModel(g.model)
	if f != nil {
		return nil, f
	}
	defer model.Close()
	if dir, err := settings.Dir(); err == nil && choice.Metal() {
		choice.SelfTestDir, choice.SelfTestProgress = filepath.Join(dir, "selftest"), out.selfTestProgress
		choice.TuneDir, choice.TuneProgress = filepath.Join(dir, "tuning"), out.tuneProgress
		choice.TuneNotice = func(n string) { out.notice(pipeline.Event{Notice: n}) }
	}
	ctx, stop := interruptContext()
	defer stop()
	p, err := jobs.OpenPipelineContext(ctx, model, choice, adjustPipeline)
	switch {
	case errors.Is(err, context.Canceled):
		return nil, fail(ExitCancelled, "cancelled during the GPU self-test (it runs again next time); nothing was written")
	case err != nil && errors.As(err, new(*mmapfile.FaultError)):
		return nil, fail(ExitModelChanged, "%v; nothing was written", err)
	case err != nil:
		return nil, fail(ExitModelInvalid, "%s cannot be used: %v", g.model, err)
	}
	defer p.Close()
	backendName := p.Backend().Name()
	if dev := p.DenoiserDevice(); dev != "" {
		backendName = "metal (" + dev + ") + " + backendName
	}
	applied, f := loadLoRAs(g.loras, p, out)
	if f != nil {
		return nil, f
	}

	base := grid.Setup{Seed: seed, Steps: g.steps, CFG: g.cfg, VariationStrength: d.VariationStrength, Hires: g.batch.hires}
	if d.Start != nil {
		base.Strength = d.Start.RunStrength()
	}
	for _, a := range applied {
		base.LoRAs = append(base.LoRAs, grid.LoRAWeight{Name: strings.TrimSuffix(filepath.Base(a.File.Path), filepath.Ext(a.File.Path)), Weight: a.Strength})
	}
	variationSeed := d.VariationSeed // a variation-strength axis without --variation-strength: random, or --variation-seed
	if d.VariationStrength == 0 {
		var b [4]byte
		rand.Read(b[:])
		if variationSeed, f = g.batch.variation(uint64(binary.LittleEndian.Uint32(b[:]))); f != nil {
			return nil, f
		}
	}
	batchID := imagefile.NewBatchID(time.Now(), 0, seed) // the history groups the grid's cells like a batch
	pictures := map[int]*image.NRGBA{}
	var runErr error
	out.cellValues = func(i int) map[string]string { return gr.Values(gr.Cells()[i]) }
	for _, group := range gr.Plan(base) {
		s := group.Setup
		dg := *d
		dg.Prompt, dg.Count = s.Prompt, 1
		if s.Width > 0 {
			dg.Size, dg.CustomW, dg.CustomH, dg.Ratio = compose.SizeExact, s.Width, s.Height, 0
		}
		job, err := dg.Job(seed)
		if err != nil {
			runErr = fmt.Errorf("cells %s: %w", describeCells(gr, group.Cells), err)
			break
		}
		req := job.Request
		groupLoRAs := make([]loralib.Applied, len(applied))
		for i, a := range applied {
			groupLoRAs[i] = loralib.Applied{File: a.File, Strength: s.LoRAs[i].Weight}
		}
		req.LoRAs = loralib.ForModel(groupLoRAs)
		if pr := loralib.FirstPreset(applied); pr != nil && g.loraPreset { // as generate does
			steps, cfg, sigmas, scheduler := loralib.PresetSettings(pr, p.SchedulerConfig())
			if !g.set["steps"] {
				req.Steps, req.Sigmas, req.Scheduler = steps, sigmas, scheduler
			}
			if !g.set["cfg"] {
				req.CFG = cfg
			}
		}
		// One pipeline cell per distinct first pass (a hires axis shares it).
		var cells []pipeline.Cell
		at := map[pipeline.Cell]int{}
		firstOf := make([]int, len(group.Cells))
		for j, c := range group.Cells {
			cs := gr.Apply(c, base)
			pc := pipeline.Cell{Seed: cs.Seed, Steps: cs.Steps, CFG: cs.CFG, Strength: cs.Strength, VariationStrength: cs.VariationStrength}
			if pc.VariationStrength > 0 {
				pc.VariationSeed = variationSeed
			}
			k, ok := at[pc]
			if !ok {
				k = len(cells)
				at[pc] = k
				cells = append(cells, pc)
			}
			firstOf[j] = k
		}
		var notices []string
		gridIndex := func(k int) int { // the grid cell a pipeline cell's events belong to
			for j, c := range group.Cells {
				if firstOf[j] == k {
					return c.Index
				}
			}
			return 0
		}
		events := make(chan pipeline.Event)
		drained := make(chan struct{})
		go func() {
			for ev := range events {
				if ev.Notice != "" {
					notices = append(notices, ev.Notice)
				}
				ev.Image, ev.Images = gridIndex(ev.Image), gr.Count()
				out.progress(ev)
			}
			close(drained)
		}()
		results, err := p.RunCells(ctx, req, cells, events)
		<-drained
		out.endProgress()
		for j, c := range group.Cells {
			k := firstOf[j]
			if k >= len(results) {
				continue
			}
			first := results[k]
			cs := gr.Apply(c, base)
			img, ferr := job.Finish(first)
			if ferr != nil {
				return nil, &failure{ExitFailure, ferr}
			}
			st := dg.FileSettings(first)
			st.Width, st.Height = img.Rect.Dx(), img.Rect.Dy()
			st.NegativePrompt = negativeUsed(req.NegativePrompt, first.CFG)
			st.ModelHash, st.LoRAs, st.Backend = modelFingerprint(model), loralib.Refs(groupLoRAs), backendName
			if st.Init != nil {
				st.Init.Strength = first.Strength
			}
			st.InBatch(batchID, c.Index, gr.Count())
			final := first
			if cs.Hires > 1 && err == nil {
				ba := g.batch
				ba.hires = cs.Hires
				second, hs, herr := secondPassRun(ctx, func(_ pipeline.Request, pass int, do func(chan<- pipeline.Event) (*pipeline.Result, error)) (*pipeline.Result, error) {
					ev, drained := make(chan pipeline.Event), make(chan struct{})
					go func() {
						for e := range ev {
							e.Image, e.Images = c.Index, gr.Count()
							out.progressPass(e, pass)
						}
						close(drained)
					}()
					res, err := do(ev)
					<-drained
					return res, err
				}, p, req, first, img, &ba)
				if herr != nil {
					err = herr
				} else {
					final, img, st.Hires = second, second.Image, hs
				}
			}
			if cs.Hires > 1 && st.Hires == nil {
				continue // its second pass did not run
			}
			saveStart := time.Now()
			if werr := imagefile.WriteFile(cellPaths[c.Index], img, st); werr != nil {
				return nil, &failure{ExitWrite, werr}
			}
			recordLastJob(final, backendName, g.model, notices)
			sv := newSavedImage(cellPaths[c.Index], final, time.Since(loadStart), time.Since(saveStart), time.Since(loadStart))
			sv.Index, sv.Images, sv.VariationSeed = c.Index, gr.Count(), first.VariationSeed
			sv.Cell = gr.Values(c)
			pictures[c.Index] = img
			out.saved(sv)
		}
		if err != nil {
			runErr = err
			break
		}
	}
	out.cellValues = nil
	if f := writeGrids(gr, gridFiles, cellPaths, pictures, base, d, out); f != nil {
		return nil, f
	}
	if runErr != nil {
		f := runFailure(runErr, "the cells not finished")
		if f.code == ExitCancelled {
			f = fail(ExitCancelled, "cancelled; %d of %d cells were saved, and the grid shows them", len(pictures), gr.Count())
		}
		return nil, f
	}
	return nil, nil
}

// describeCells names cells by their numbers, for messages.
func describeCells(gr *grid.Grid, cells []grid.Cell) string {
	var parts []string
	for _, c := range cells {
		parts = append(parts, fmt.Sprintf("%d (%s)", c.Index+1, gr.Describe(c)))
	}
	return strings.Join(parts, ", ")
}

// writeGrids writes each grid image from the cells made (placeholders for the rest), with the
// axes in its settings.
func writeGrids(gr *grid.Grid, files, cellPaths []string, pictures map[int]*image.NRGBA, base grid.Setup, d *compose.Draft, out *generateOutput) *failure {
	if len(pictures) == 0 {
		return nil
	}
	names := make([]string, len(cellPaths))
	for i, p := range cellPaths {
		if pictures[i] != nil {
			names[i] = filepath.Base(p)
		}
	}
	for z, path := range files {
		img, _, err := gr.Compose(z, pictures)
		if err != nil {
			return &failure{ExitFailure, err}
		}
		st := &imagefile.Settings{Prompt: d.PromptText(), NegativePrompt: d.Negative, Width: img.Rect.Dx(), Height: img.Rect.Dy(),
			Steps: base.Steps, CFG: base.CFG, Seed: base.Seed, Sampler: "Euler", Model: filepath.Base(d.Model), Grid: gr.Settings(z, names)}
		if err := imagefile.WriteFile(path, img, st); err != nil {
			return &failure{ExitWrite, err}
		}
		out.gridSaved(path, st.Grid)
	}
	return nil
}
