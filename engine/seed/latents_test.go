package seed

import "testing"

func TestLatentNoiseRefusesAnEmptyGrid(t *testing.T) {
	if _, err := LatentNoise(1, 64, 0, 4); err == nil {
		t.Error("empty grid: no error")
	}
	if _, err := LatentNoise(1, 0, 4, 4); err == nil {
		t.Error("no channels: no error")
	}
}

// TestFillNormalTail: a length that is not a multiple of 16 keeps the blocks before the last
// 16 values and redraws those from fresh uniforms, as ATen's normal_fill does.
func TestFillNormalTail(t *testing.T) {
	for _, n := range []int{17, 31, 40} {
		full := NewGenerator(7).Randn(n)
		whole := NewGenerator(7).Randn(n / 16 * 16)
		kept := n - 16
		for i := 0; i < kept; i++ {
			if full[i] != whole[i] {
				t.Errorf("n=%d: value %d = %v, the whole-block draw has %v", n, i, full[i], whole[i])
			}
		}
	}
}
