package sched

import "testing"

func TestEulerStep(t *testing.T) {
	tests := []struct {
		name             string
		x, v, want       []float32
		sigma, sigmaNext float32
	}{
		{name: "moves against the velocity as sigma falls", x: []float32{1, -2, 0.5}, v: []float32{2, 4, -1},
			sigma: 0.75, sigmaNext: 0.5, want: []float32{0.5, -3, 0.75}},
		{name: "last step to zero gives x0 = x - sigma v", x: []float32{0.25}, v: []float32{-0.5},
			sigma: 0.5, sigmaNext: 0, want: []float32{0.5}},
		{name: "equal sigmas leave x alone", x: []float32{3}, v: []float32{7}, sigma: 0.3, sigmaNext: 0.3, want: []float32{3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := append([]float32(nil), tc.x...)
			if err := EulerStep(x, tc.v, tc.sigma, tc.sigmaNext); err != nil {
				t.Fatal(err)
			}
			for i := range x {
				if x[i] != tc.want[i] {
					t.Errorf("x[%d] = %v, want %v", i, x[i], tc.want[i])
				}
			}
		})
	}
	if err := EulerStep(make([]float32, 2), make([]float32, 3), 1, 0); err == nil {
		t.Error("mismatched lengths: no error")
	}
}

func TestScheduleStepBounds(t *testing.T) {
	s, err := DefaultConfig().Schedule(4, 256)
	if err != nil {
		t.Fatal(err)
	}
	x, v := []float32{1}, []float32{1}
	for _, i := range []int{-1, 4} {
		if err := s.Step(i, x, v); err == nil {
			t.Errorf("step %d of 4: no error", i)
		}
	}
	if err := s.Step(3, x, v); err != nil {
		t.Errorf("last step: %v", err)
	}
}

// TestPredictedX0: after the last step (σ → 0) the Euler update lands exactly on the x0 estimate
// of that step.
func TestPredictedX0(t *testing.T) {
	tests := []struct {
		name  string
		x, v  []float32
		sigma float32
	}{
		{"small values", []float32{0.25, -1, 3}, []float32{-0.5, 2, 0.125}, 0.5},
		{"terminal sigma", []float32{1.5, -0.75}, []float32{0.3, -0.9}, 0.02},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x0 := make([]float32, len(tc.x))
			if err := PredictedX0(x0, tc.x, tc.v, tc.sigma); err != nil {
				t.Fatal(err)
			}
			stepped := append([]float32(nil), tc.x...)
			if err := EulerStep(stepped, tc.v, tc.sigma, 0); err != nil {
				t.Fatal(err)
			}
			for i := range x0 {
				if x0[i] != stepped[i] {
					t.Errorf("x0[%d] = %v, a step to σ = 0 gives %v", i, x0[i], stepped[i])
				}
			}
		})
	}
	if err := PredictedX0(make([]float32, 1), make([]float32, 2), make([]float32, 2), 1); err == nil {
		t.Error("short output: no error")
	}
}
