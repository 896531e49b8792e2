package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// fullSize is the checkpoint of a side² image of the published model (64 latent channels, 16×16
// pixels a token) after step 20 of 40, with synthetic latents.
func fullSize(side int) *Checkpoint {
	c := sample()
	c.Image, c.Images, c.Finished, c.Step, c.Steps = 0, 1, nil, 20, 40
	c.Sigmas = make([]float32, 41)
	c.Latents = make([]float32, (side/16)*(side/16)*64)
	for i := range c.Latents {
		c.Latents[i] = float32(i%977) * 0.001
	}
	return c
}

// BenchmarkCheckpoint: the bytes of one checkpoint and the time of its parts at 1024² and 2048²:
// the copy the denoising goroutine makes (Writer.Offer's build), and the write the background
// goroutine does (encode, temp file, fsync, rename). docs/BENCHMARKS.md, "Checkpoints".
func BenchmarkCheckpoint(b *testing.B) {
	for _, side := range []int{1024, 2048} {
		c := fullSize(side)
		data, _ := c.Marshal()
		b.Run(fmt.Sprintf("copy-%d", side), func(b *testing.B) {
			b.SetBytes(int64(4 * len(c.Latents)))
			for b.Loop() {
				_ = slices.Clone(c.Latents)
			}
		})
		b.Run(fmt.Sprintf("write-%d", side), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "run.ckpt")
			b.SetBytes(int64(len(data)))
			b.ReportMetric(float64(len(data)), "file-bytes")
			for b.Loop() {
				if err := WriteFile(path, c); err != nil {
					b.Fatal(err)
				}
			}
			os.Remove(path)
		})
	}
}
