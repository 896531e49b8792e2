package serve

import (
	"fmt"

	"easel/engine/pipeline"
)

// A grid's cells (the X/Y/Z plot, xyzplot.go) run as few queued jobs as share a prefill: the
// cells whose requests differ only in what a pipeline.Cell sets (seed, variation, steps, CFG,
// the start image's strength) are one job of pipeline.Request.Cells, one prefill for all of
// them, each cell bit for bit its single run. Its result's Batch holds every cell; its Finished
// events carry each cell as it is made, so a cancelled or interrupted group still answers with
// the cells it finished.

// cellGroups are the plans' indices by the job each runs in: plans whose requests share their
// prompts (and everything else a prefill depends on) are one group, in the order the first of
// each appears, each group in the plans' order.
func cellGroups(plans []plan) [][]int {
	var groups [][]int
	at := map[string]int{}
	for i, pl := range plans {
		k := prefillKey(pl.Request)
		g, ok := at[k]
		if !ok {
			g = len(groups)
			at[k] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// prefillKey is what a request's cells must share to run over one prefill: the prompts, and
// which of the cell's settings the request leaves to the model (a zero Steps keeps a fixed sigma
// grid; a zero CFG is the model's scale), with the sigma grid itself. Everything else the API
// sets is the same for every cell of one request (size, condition images, start image, LoRAs).
func prefillKey(r pipeline.Request) string {
	return fmt.Sprintf("%q|%q|%t|%t|%v", r.Prompt, r.NegativePrompt, r.Steps == 0, r.CFG == 0, r.Sigmas)
}

// cellOf is plan pl as a cell of a grouped request (its variation drawn by the pipeline from the
// same seeds the plan's injected noise came from).
func cellOf(pl plan, varStrength float64) pipeline.Cell {
	r := pl.Request
	c := pipeline.Cell{Seed: r.Seed, Steps: r.Steps, CFG: r.CFG}
	if varStrength != 0 {
		c.VariationSeed, c.VariationStrength = pl.Subseed, varStrength
	}
	if r.Init != nil {
		c.Strength = r.Init.Strength
	}
	return c
}

// groupRequest is the one request of a group of plans: the first plan's, with every plan as a
// cell. A group of one is its plan's request as it is.
func groupRequest(plans []plan, idx []int, varStrengths []float64) pipeline.Request {
	req := plans[idx[0]].Request
	if len(idx) == 1 {
		return req
	}
	req.Noise, req.Stop = nil, nil // each cell's noise is drawn from its seeds; /interrupt cancels the group
	req.Cells = make([]pipeline.Cell, len(idx))
	for k, i := range idx {
		req.Cells[k] = cellOf(plans[i], varStrengths[i])
	}
	return req
}

// groupResults puts a finished group job's cells in their plans' places: the result's Batch
// when it is done, else the cells its Finished events delivered before it was cancelled.
func groupResults(results []*pipeline.Result, idx []int, done *pipeline.Result, finished []*pipeline.Result) {
	cells := finished
	if done != nil {
		cells = done.Batch
		if cells == nil {
			cells = []*pipeline.Result{done}
		}
	}
	for _, res := range cells {
		if res != nil && res.Index >= 0 && res.Index < len(idx) {
			results[idx[res.Index]] = res
		}
	}
}

// singles are the groups of plans run one job each (txt2img's and img2img's images).
func singles(n int) [][]int {
	g := make([][]int, n)
	for i := range g {
		g[i] = []int{i}
	}
	return g
}
