package progress

import (
	"fmt"

	"easel/app/memplan"
)

// ShowUpscale shows a learned upscale's prediction in the memory panel while it is offered and
// runs: the network's weights, the largest tile's working memory, the pictures, the peak against
// the budget, and whether it fits (the shell puts the draft's prediction back after).
func (p *MemoryPanel) ShowUpscale(what string, pr memplan.UpscalePrediction) {
	p.Title.SetText("Memory — predicted for " + what)
	p.setBars([]bar{
		{"Upscaler weights", pr.Weights, false},
		{"Tile activations", pr.Working, false},
		{"Pictures", pr.Pictures, false},
		{"Peak: upscale", pr.Peak, !pr.Fits()},
	}, pr.Budget)
	p.strip.showPeak("Predicted", pr.Peak, pr.Budget, !pr.Fits())
	p.UseSize.Hide()
	switch {
	case pr.Budget <= 0:
		p.Verdict.SetText(fmt.Sprintf("Peak about %s; the device budget is unknown here, so nothing is refused.", memplan.GB(pr.Peak)))
	case pr.Fits():
		p.Verdict.SetText(fmt.Sprintf("Fits: %s of %s.", pr.Explain(), memplan.GB(pr.Budget)))
	default:
		p.Verdict.SetText(fmt.Sprintf("Does not fit: %s of %s. Try ×2, or Lanczos.", pr.Explain(), memplan.GB(pr.Budget)))
	}
}
