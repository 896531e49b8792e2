package sched

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"easel/internal/golden"
)

// schedulerCases is the layout of scheduler_cases.json.
type schedulerCases struct {
	Config json.RawMessage `json:"config"`
	Cases  []struct {
		Steps       int       `json:"steps"`
		ImageSeqLen int       `json:"image_seq_len"`
		Mu          float64   `json:"mu"`
		Timesteps   []float64 `json:"timesteps"`
		Sigmas      []float64 `json:"sigmas"`
	} `json:"cases"`
}

func loadSchedulerCases(t *testing.T) schedulerCases {
	t.Helper()
	path, err := golden.Path("scheduler_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cases schedulerCases
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(cases.Cases) == 0 {
		t.Fatalf("%s holds no cases", path)
	}
	return cases
}

// TestGoldenScheduler compares mu, sigmas and timesteps with every case the reference pipeline's
// calculate_shift + retrieve_timesteps produced, using the config stored in the case file.
func TestGoldenScheduler(t *testing.T) {
	const tol = 1e-6
	cases := loadSchedulerCases(t)
	cfg, err := ParseConfig(cases.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases.Cases {
		name := fmt.Sprintf("steps=%d/seq=%d", c.Steps, c.ImageSeqLen)
		t.Run(name, func(t *testing.T) {
			if mu := cfg.Mu(c.ImageSeqLen); math.Abs(mu-c.Mu) > 1e-12 {
				t.Errorf("mu = %.17g, reference %.17g", mu, c.Mu)
			}
			s, err := cfg.Schedule(c.Steps, c.ImageSeqLen)
			if err != nil {
				t.Fatal(err)
			}
			compare(t, "sigmas", s.Sigmas, c.Sigmas, tol)
			compare(t, "timesteps", s.Timesteps, c.Timesteps, tol)
		})
	}
}

// TestGoldenSchedulerSnapshotConfig checks that the tiny snapshot's scheduler_config.json parses
// to the configuration the reference cases were produced with.
func TestGoldenSchedulerSnapshotConfig(t *testing.T) {
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(snap, "scheduler", "scheduler_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseConfig(loadSchedulerCases(t).Config)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("snapshot config %+v, reference cases' config %+v", got, want)
	}
}

func compare(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, reference has %d", what, len(got), len(want))
	}
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol || math.IsNaN(d) {
			t.Errorf("%s[%d] = %.9g, reference %.9g (|Δ| = %.3g)", what, i, got[i], want[i], d)
		}
	}
}
