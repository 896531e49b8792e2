package ui

import (
	"fmt"

	"easel/app/memplan"
)

// showUpscale shows a learned upscale's prediction in the memory panel while it is offered and
// runs: the network's weights, the largest tile's working memory, the pictures, the peak against
// the budget, and whether it fits (the draft's prediction comes back with draftChanged).
func (p *memoryPanel) showUpscale(what string, pr memplan.UpscalePrediction) {
	p.title.SetText("Memory — predicted for " + what)
	p.setBars([]bar{
		{"Upscaler weights", pr.Weights, false},
		{"Tile activations", pr.Working, false},
		{"Pictures", pr.Pictures, false},
		{"Peak: upscale", pr.Peak, !pr.Fits()},
	}, pr.Budget)
	if p.s.strip != nil {
		p.s.strip.showPeak("Predicted", pr.Peak, pr.Budget, !pr.Fits())
	}
	p.useSize.Hide()
	switch {
	case pr.Budget <= 0:
		p.verdict.SetText(fmt.Sprintf("Peak about %s; the device budget is unknown here, so nothing is refused.", memplan.GB(pr.Peak)))
	case pr.Fits():
		p.verdict.SetText(fmt.Sprintf("Fits: %s of %s.", pr.Explain(), memplan.GB(pr.Budget)))
	default:
		p.verdict.SetText(fmt.Sprintf("Does not fit: %s of %s. Try ×2, or Lanczos.", pr.Explain(), memplan.GB(pr.Budget)))
	}
}
