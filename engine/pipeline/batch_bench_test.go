package pipeline

import (
	"image"
	"testing"
	"time"
)

// BenchmarkBatch times a batch of 4 against 4 single runs of the same seeds, in the same loop
// iteration, without and with a condition image: the batch encodes the prompt (and the image)
// and prefills once, so it saves 3 × those stages. Metrics: the batch's and the singles' wall
// time, their ratio, and the prefix stages' (prompt encoding, image encoding, prefill) time in
// each.
func BenchmarkBatch(b *testing.B) {
	p := newTinyPipeline(b, nil)
	cond := image.NewNRGBA(image.Rect(0, 0, 128, 128))
	for i := range cond.Pix {
		cond.Pix[i] = uint8(i * 31)
	}
	const count, size, steps = 4, 128, 8
	for _, c := range []struct {
		name   string
		images []*image.NRGBA
	}{{"text-only", nil}, {"one-condition-image", []*image.NRGBA{cond}}} {
		b.Run(c.name, func(b *testing.B) {
			req := Request{Prompt: "a lighthouse on a cliff at dusk", Images: c.images, Width: size, Height: size, Steps: steps, CFG: 1, Seed: 9}
			prefix := func(r *Result) time.Duration {
				return r.StageTimes[StageEncodingPrompt] + r.StageTimes[StageEncodingImages] + r.StageTimes[StagePrefill]
			}
			var batch, singles, batchPrefix, singlesPrefix time.Duration
			n := 0
			for b.Loop() {
				t0 := time.Now()
				one := req
				one.Count = count
				res, err := p.Run(b.Context(), one, nil)
				if err != nil {
					b.Fatal(err)
				}
				batch += time.Since(t0)
				batchPrefix += prefix(res)
				t0 = time.Now()
				for i := range count {
					one := req
					one.Seed += uint64(i)
					res, err := p.Run(b.Context(), one, nil)
					if err != nil {
						b.Fatal(err)
					}
					singlesPrefix += prefix(res)
				}
				singles += time.Since(t0)
				n++
			}
			b.ReportMetric(batch.Seconds()/float64(n), "batch-s/op")
			b.ReportMetric(singles.Seconds()/float64(n), "singles-s/op")
			b.ReportMetric(batch.Seconds()/singles.Seconds(), "batch/singles")
			b.ReportMetric(batchPrefix.Seconds()/float64(n), "batch-prefix-s/op")
			b.ReportMetric(singlesPrefix.Seconds()/float64(n), "singles-prefix-s/op")
		})
	}
}
