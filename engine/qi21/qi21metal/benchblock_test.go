package qi21metal

import (
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/qi21"
	"easel/engine/quant"
)

// TestEmuBenchBlock runs one random block of a narrow real-architecture geometry (2 heads of 128)
// through the test device in both codecs, and refuses what it cannot run.
func TestEmuBenchBlock(t *testing.T) {
	dev := emuDevice(t)
	cfg := qi21.PublishedConfig()
	cfg.Heads = 2
	for _, codec := range []quant.DType{quant.Q4TP, quant.Q8_2F} {
		m, err := qi21.NewRandomBlockModel(cfg, codec, cpu.New())
		if err != nil {
			t.Fatal(err)
		}
		r, err := BenchBlock(dev, m, 16, 8, 2, cpu.ProcessCPUTime)
		if err != nil {
			t.Fatal(err)
		}
		g, a := qi21.BlockFlops(m.Config, 16, 8)
		t.Logf("%s: %.1f ms wall, %.1f ms device, %.1f ms CPU per rep (%s)", r.Codec, r.MedianMS, r.DeviceMS, r.CPUMS, r.Device)
		if len(r.WallMS) != 2 || r.GemmFlops != g || r.AttnFlops != a || r.Codec != codec.String() || r.MedianMS <= 0 {
			t.Errorf("%v: report %+v", codec, r)
		}
		if r.Device != dev.Name() {
			t.Errorf("the report names the device %q, want %q", r.Device, dev.Name())
		}
	}
	narrow := cfg
	narrow.HeadDim, narrow.AxesDims = 64, []int{16, 24, 24}
	m, err := qi21.NewRandomBlockModel(narrow, quant.Q4TP, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BenchBlock(dev, m, 16, 8, 1, nil); err == nil || !strings.Contains(err.Error(), "need 128") {
		t.Errorf("64-channel heads: %v, want a decline naming the 128-channel heads", err)
	}
}
