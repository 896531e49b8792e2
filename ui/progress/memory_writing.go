package progress

import "easel/app/memplan"

// ShowWriting shows, while Describe, Expand or Check writes, what the writing holds in memory
// (memplan.PredictWriting): the text encoder's weights, its language head, the text's key/value
// cache and the activations, against the budget; the strip under the canvas says the same peak.
func (p *MemoryPanel) ShowWriting(what string, w memplan.WritingPrediction) {
	p.Title.SetText("Memory — writing (" + what + ")")
	p.setBars([]bar{
		{"Text encoder weights", w.Weights - w.Head, false},
		{"Language head", w.Head, false},
		{"Text cache", w.KVCache, false},
		{"Activations", max(w.Prefill, w.Decode), false},
		{"Peak (writing)", w.Peak, !w.Fits},
	}, w.Budget)
	p.Verdict.SetText("")
	p.UseSize.Hide()
	p.strip.showPeak("Writing", w.Peak, w.Budget, !w.Fits)
}
