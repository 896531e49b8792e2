package qi21

import (
	"context"
	"errors"
	"testing"
)

// TestCancelStopsPrefillAndStep: a cancelled context ends Prefill and Step with an error that
// wraps context.Canceled, and a cancelled Prefill keeps no program.
func TestCancelStopsPrefillAndStep(t *testing.T) {
	m := loadModel(t, 0)
	c := m.Config
	lay, err := NewLayout([]bool{false, false, true}, [][2]int{{2, 2}})
	if err != nil {
		t.Fatal(err)
	}
	text := make([]float32, lay.TextLen*c.ContextDim)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Prefill(cancelled, lay, text, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prefill under a cancelled context: %v", err)
	}
	var progs []*Program
	for range MaxPrograms {
		p, err := m.Prefill(t.Context(), lay, text, nil)
		if err != nil {
			t.Fatalf("the cancelled Prefill kept a program slot: %v", err)
		}
		progs = append(progs, p)
	}
	if _, err := m.Step(cancelled, progs[0], make([]float32, lay.T*c.InChannels), 0.5); !errors.Is(err, context.Canceled) {
		t.Fatalf("Step under a cancelled context: %v", err)
	}
	if _, err := m.Forward(cancelled, lay, text, make([]float32, lay.Latents*c.InChannels), 0.5); !errors.Is(err, context.Canceled) {
		t.Fatalf("Forward under a cancelled context: %v", err)
	}
	// 2 layers × K and V × 2 prefix rows × 256 wide × 2 bytes (half)
	if got := progs[0].CacheBytes(); got != 2*2*2*256*2 {
		t.Errorf("CacheBytes %d, want %d", got, 2*2*2*256*2)
	}
	for _, p := range progs {
		m.Release(p)
	}
}
