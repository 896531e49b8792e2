package metal

import (
	"errors"
	"fmt"
	"testing"
)

// TestTry runs the device's result when it accepts, the CPU's after a decline (told to
// onDecline, also through a wrapping error) or without a device, and returns other device
// failures without running the CPU.
func TestTry(t *testing.T) {
	cpuRuns := 0
	cpu := func() (string, error) { cpuRuns++; return "cpu", nil }
	var declines []string
	onDecline := func(d *Declined) { declines = append(declines, d.Reason) }

	if out, dev, err := Try(func() (string, error) { return "device", nil }, cpu, onDecline); out != "device" || !dev || err != nil {
		t.Errorf("accepted: %q %v %v", out, dev, err)
	}
	if out, dev, err := Try(nil, cpu, onDecline); out != "cpu" || dev || err != nil {
		t.Errorf("no device: %q %v %v", out, dev, err)
	}
	wrapped := func() (string, error) { return "", fmt.Errorf("the VAE on emu: %w", Decline("too big")) }
	if out, dev, err := Try(wrapped, cpu, onDecline); out != "cpu" || dev || err != nil {
		t.Errorf("declined: %q %v %v", out, dev, err)
	}
	if len(declines) != 1 || declines[0] != "too big" {
		t.Errorf("declines told: %q, want [too big]", declines)
	}
	failed := errors.New("the GPU stopped")
	before := cpuRuns
	if _, dev, err := Try(func() (string, error) { return "", failed }, cpu, onDecline); !errors.Is(err, failed) || dev || cpuRuns != before {
		t.Errorf("failed: %v %v, CPU ran %d times", dev, err, cpuRuns-before)
	}
}
