package metalops

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"easel/engine/ml/metal"
	"easel/internal/testdevice"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// twentyAdds runs twenty element-wise additions in one network call and returns the result.
func twentyAdds(t *testing.T, n *Network) ([]float32, error) {
	var out []float32
	err := n.Run("adding", 1<<20, func() error {
		b := n.Backend()
		x, err := b.Upload(randoms(rand.New(rand.NewPCG(1, 2)), 256, 1), 256)
		if err != nil {
			return err
		}
		y, err := b.New(256)
		if err != nil {
			return err
		}
		if err := b.Copy(y, x); err != nil {
			return err
		}
		for range 20 {
			if err := b.Add(y, y, x); err != nil {
				return err
			}
		}
		out, err = b.Download(y)
		return err
	})
	return out, err
}

// TestEmuNetworkRecoversFromGPUErrors: a call the watchdog stops runs again in shorter command
// buffers and gives the same result; a call the GPU never has memory for declines with a sentence
// (the runner's CPU fallback), never a bare GPU error.
func TestEmuNetworkRecoversFromGPUErrors(t *testing.T) {
	dev := testdevice.Device(t, emu.Options{Fault: &emu.Fault{}})
	inj := testdevice.Faults(t, dev)
	n, err := NewNetwork(dev, "the VAE")
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	clean, err := twentyAdds(t, n)
	if err != nil {
		t.Fatal(err)
	}
	inj.InjectFault(emu.Fault{Kind: emu.Watchdog, Dispatches: 10})
	got, err := twentyAdds(t, n)
	if err != nil {
		t.Fatalf("after a watchdog stop: %v", err)
	}
	for i := range got {
		if got[i] != clean[i] {
			t.Fatalf("element %d: %v after the retry, %v without the fault", i, got[i], clean[i])
		}
	}
	if rs := n.Retries(); len(rs) != 1 || rs[0].Kind != device.ErrorTimeout.String() || !rs[0].OK || inj.FaultsFired() == 0 {
		t.Errorf("retries %+v, fault fired %d times", rs, inj.FaultsFired())
	}
	inj.InjectFault(emu.Fault{Kind: emu.OOM})
	_, err = twentyAdds(t, n)
	var d *metal.Declined
	if !errors.As(err, &d) || !strings.Contains(d.Reason, "out of memory") {
		t.Errorf("always out of memory: %v, want a decline saying so", err)
	}
}
