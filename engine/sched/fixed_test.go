package sched

import (
	"strings"
	"testing"
)

func TestSampleSigmas(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		want    int // number of sigmas
		wantErr string
	}{
		{name: "base model has none", json: `{"_class_name": "QwenImage21Pipeline"}`, want: 0},
		{name: "null", json: `{"sample_sigmas": null}`, want: 0},
		{name: "turbo", json: `{"sample_sigmas": [1.0, 0.978453, 0.954180, 0.926626, 0.895080, 0.845148, 0.704534, 0.414568]}`, want: 8},
		{name: "out of range", json: `{"sample_sigmas": [1.0, 0.0]}`, wantErr: "(0, 1]"},
		{name: "not a list", json: `{"sample_sigmas": 1}`, wantErr: "sample_sigmas"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SampleSigmas([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Errorf("%d sigmas, want %d", len(got), tc.want)
			}
		})
	}
}

// TestTurboScheduleKeepsTheStoredGrid: with the configuration a fixed-grid checkpoint ships, the
// shift is the identity and there is no stretch, so the schedule is the stored grid in float32
// followed by 0, and the timesteps are the sigmas times 1000.
func TestTurboScheduleKeepsTheStoredGrid(t *testing.T) {
	turbo := TurboSampleSigmas()
	s, err := TurboConfig().ScheduleFromSigmas(turbo, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if s.Steps() != len(turbo) || len(s.Sigmas) != len(turbo)+1 {
		t.Fatalf("%d steps and %d sigmas for a grid of %d", s.Steps(), len(s.Sigmas), len(turbo))
	}
	for i, v := range turbo {
		if s.Sigmas[i] != float32(v) {
			t.Errorf("sigma %d = %v, stored %v", i, s.Sigmas[i], float32(v))
		}
		if s.Timesteps[i] != float32(v)*1000 {
			t.Errorf("timestep %d = %v, want %v", i, s.Timesteps[i], float32(v)*1000)
		}
	}
	if s.Sigmas[len(s.Sigmas)-1] != 0 {
		t.Errorf("last sigma %v, want 0", s.Sigmas[len(s.Sigmas)-1])
	}
}

// TestScheduleRejectsUnstretchableGrids: zero steps and no tokens are refused, as is a grid of
// several sigmas of 1 (its stretch divides by zero in the reference: NaN). One step is a schedule:
// from σ = 1 straight to 0 (the API's steps: 1), where the reference's stretch divides 0 by 0.
func TestScheduleRejectsUnstretchableGrids(t *testing.T) {
	tests := []struct {
		name  string
		steps int
		seq   int
	}{
		{"zero steps", 0, 4096},
		{"no tokens", 20, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := DefaultConfig().Schedule(tc.steps, tc.seq); err == nil {
				t.Error("no error")
			}
		})
	}
	if _, err := DefaultConfig().ScheduleFromSigmas([]float64{1, 1}, 4096); err == nil {
		t.Error("a grid of two sigmas of 1 was stretched")
	}
	one, err := DefaultConfig().Schedule(1, 4096)
	if err != nil || len(one.Sigmas) != 2 || one.Sigmas[0] != 1 || one.Sigmas[1] != 0 || one.Steps() != 1 {
		t.Errorf("one step: %v, %v; want sigmas [1 0]", one, err)
	}
}
