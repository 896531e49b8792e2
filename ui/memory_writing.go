package ui

import "easel/app/memplan"

// showWriting shows, while Describe, Expand or Check writes, what the writing holds in memory
// (memplan.PredictWriting): the text encoder's weights, its language head, the text's key/value
// cache and the activations, against the budget; the strip under the canvas says the same peak.
func (p *memoryPanel) showWriting(what string, w memplan.WritingPrediction) {
	p.title.SetText("Memory — writing (" + what + ")")
	p.setBars([]bar{
		{"Text encoder weights", w.Weights - w.Head, false},
		{"Language head", w.Head, false},
		{"Text cache", w.KVCache, false},
		{"Activations", max(w.Prefill, w.Decode), false},
		{"Peak (writing)", w.Peak, !w.Fits},
	}, w.Budget)
	p.verdict.SetText("")
	p.useSize.Hide()
	if p.s.strip != nil {
		p.s.strip.showPeak("Writing", w.Peak, w.Budget, !w.Fits)
	}
}
