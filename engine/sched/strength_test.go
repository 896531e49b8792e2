package sched

import (
	"strings"
	"testing"
)

func TestStartStepIsDiffusersGetTimesteps(t *testing.T) {
	for _, c := range []struct {
		steps    int
		strength float64
		start    int
	}{
		{8, 1, 0}, {8, 0.5, 4}, {40, 0.6, 16}, {50, 0.6, 20}, {10, 0.75, 2}, {20, 0.6, 8}, {3, 0.5, 1}, {8, 0.125, 7},
	} {
		got, err := StartStep(c.steps, c.strength)
		if err != nil {
			t.Fatalf("StartStep(%d, %g): %v", c.steps, c.strength, err)
		}
		if got != c.start {
			t.Errorf("StartStep(%d, %g) = %d, want %d (diffusers runs %d steps)", c.steps, c.strength, got, c.start, c.steps-c.start)
		}
	}
}

func TestStartStepRefuses(t *testing.T) {
	for _, c := range []struct {
		steps    int
		strength float64
		want     string
	}{
		{8, 0, "outside (0, 1]"}, {8, 1.5, "outside (0, 1]"}, {8, -0.1, "outside (0, 1]"},
		{8, 1e-17, "leaves no step"}, {0, 0.5, "at least 1 step"},
	} {
		_, err := StartStep(c.steps, c.strength)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("StartStep(%d, %g) = %v, want an error saying %q", c.steps, c.strength, err, c.want)
		}
	}
}

func TestFromKeepsTheTail(t *testing.T) {
	s := Schedule{Sigmas: []float32{1, 0.75, 0.5, 0.25, 0}, Timesteps: []float32{1000, 750, 500, 250}}
	tail, err := s.From(2)
	if err != nil {
		t.Fatal(err)
	}
	if tail.Steps() != 2 || tail.Sigmas[0] != 0.5 || tail.Sigmas[2] != 0 || tail.Timesteps[0] != 500 {
		t.Errorf("From(2) = %+v, want the last two steps from σ 0.5", tail)
	}
	if _, err := s.From(4); err == nil {
		t.Error("From(4) of a 4-step schedule did not fail")
	}
}

func TestRenoise(t *testing.T) {
	x0 := []float32{1, -2, 0.5}
	noise := []float32{0.3, 0.7, -1}
	dst := make([]float32, 3)
	if err := Renoise(dst, x0, noise, 0); err != nil || dst[0] != 1 || dst[1] != -2 || dst[2] != 0.5 {
		t.Errorf("Renoise at σ 0 = %v, %v; want the clean latents", dst, err)
	}
	if err := Renoise(dst, x0, noise, 1); err != nil || dst[0] != 0.3 || dst[1] != 0.7 || dst[2] != -1 {
		t.Errorf("Renoise at σ 1 = %v, %v; want the noise", dst, err)
	}
	if err := Renoise(dst, x0, noise, 0.5); err != nil || dst[0] != 0.65 || dst[1] != -0.65 || dst[2] != -0.25 {
		t.Errorf("Renoise at σ 0.5 = %v, %v", dst, err)
	}
	if err := Renoise(dst[:2], x0, noise, 0.5); err == nil {
		t.Error("Renoise with a short output did not fail")
	}
}
