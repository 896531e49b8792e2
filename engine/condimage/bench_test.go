package condimage

import (
	"image"
	"testing"
)

// BenchmarkPrepareConditionImage: a 12 MP phone photo (4032×3024, RGBA) to the default 1024²
// condition size (1184×896) for both encoders.
func BenchmarkPrepareConditionImage(b *testing.B) {
	src := image.NewNRGBA(image.Rect(0, 0, 4032, 3024))
	for i := range src.Pix {
		src.Pix[i] = uint8(i * 31 >> 3)
	}
	proc := DefaultImageProcessorConfig()
	b.ResetTimer()
	for b.Loop() {
		if _, err := PrepareConditionImage(src, 1024, proc); err != nil {
			b.Fatal(err)
		}
	}
}
