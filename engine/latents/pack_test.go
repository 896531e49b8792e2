package latents

import "testing"

func TestPackLayout(t *testing.T) {
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
			got, err := Pack(tc.channelMajor, tc.channels, tc.h, tc.w)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != tc.packed[i] {
					t.Fatalf("packed %v, want %v", got, tc.packed)
				}
			}
			back, err := Unpack(got, tc.channels, tc.h, tc.w)
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
	if _, err := Pack(make([]float32, 5), 2, 1, 3); err == nil {
		t.Error("wrong length: no error")
	}
}
