package seed

import "testing"

func TestPackLatentsLayout(t *testing.T) {
	tests := []struct {
		name         string
		channels     int
		h, w         int
		channelMajor []float32
		packed       []float32
	}{
		{name: "2 channels on 1×3", channels: 2, h: 1, w: 3,
			channelMajor: []float32{10, 11, 12, 20, 21, 22},
			packed:       []float32{10, 20, 11, 21, 12, 22}},
		{name: "3 channels on 2×1", channels: 3, h: 2, w: 1,
			channelMajor: []float32{1, 2, 3, 4, 5, 6},
			packed:       []float32{1, 3, 5, 2, 4, 6}},
		{name: "one channel is the identity", channels: 1, h: 2, w: 2,
			channelMajor: []float32{1, 2, 3, 4},
			packed:       []float32{1, 2, 3, 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PackLatents(tc.channelMajor, tc.channels, tc.h, tc.w)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != tc.packed[i] {
					t.Fatalf("packed %v, want %v", got, tc.packed)
				}
			}
			back, err := UnpackLatents(got, tc.channels, tc.h, tc.w)
			if err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if back[i] != tc.channelMajor[i] {
					t.Fatalf("unpacked %v, want %v", back, tc.channelMajor)
				}
			}
		})
	}
	if _, err := PackLatents(make([]float32, 5), 2, 1, 3); err == nil {
		t.Error("wrong length: no error")
	}
	if _, err := LatentNoise(1, 0, 4); err == nil {
		t.Error("empty grid: no error")
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
