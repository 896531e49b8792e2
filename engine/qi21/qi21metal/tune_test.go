package qi21metal

import (
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/ml/metal"
	"easel/engine/qi21"
	"easel/engine/quant"
	"easel/kernels"
)

// TestEmuTuneDeclaredVariants tunes the declared variants on the test device (one random block of
// one head, few rows): every variant compiles, fits, passes its parity check and is timed (the
// emulator has the tensor-op subset; on a device without it the tensor variant is skipped, saying
// so), the choice is one of them, and a second tuning with the
// same key comes from the cache. Which variant wins says nothing here: the times are the CPU's.
func TestEmuTuneDeclaredVariants(t *testing.T) {
	dev := emuDevice(t)
	c := qi21.PublishedConfig()
	c.Heads = 1
	m, err := qi21.NewRandomBlockModel(c, quant.Q4TP, cpu.New())
	if err != nil {
		t.Fatal(err)
	}
	reg := &metal.Registry{}
	if err := DeclareVariants(reg, m, 16, 8, 1); err != nil {
		t.Fatal(err)
	}
	if got := reg.Classes(); len(got) != 2 || len(reg.Of(ClassGemm)) != len(kernels.GemmVariants) || len(reg.Of(ClassAttn)) != len(kernels.FlashVariants) {
		t.Fatalf("declared classes %v with %d and %d variants", got, len(reg.Of(ClassGemm)), len(reg.Of(ClassAttn)))
	}
	key := metal.TuneKey{Device: dev.Name(), OSBuild: "test", AppVersion: "test", Geometry: TuneGeometry(c, quant.Q4TP, 16, 8)}
	cache := metal.TuneCache{Dir: t.TempDir()}
	r, cached, err := cache.LoadOrTune(t.Context(), dev, key, reg, func(string) string { return "" }, nil)
	if err != nil || cached {
		t.Fatalf("cached %v, err %v", cached, err)
	}
	t.Log(r.Summary())
	tensorOps := metal.HasTensorOps(dev)
	for _, ch := range r.Choices {
		for _, v := range ch.Results {
			if gv, ok := kernels.GemmVariantNamed(v.Name); ok && ch.Class == ClassGemm && gv.TensorOps && !tensorOps {
				if v.Skipped == "" {
					t.Errorf("%s/%s ran on %s, which has no Metal 4 tensor operations", ch.Class, v.Name, dev.Name())
				}
				continue // a Mac before macOS 26 or M5: the tuning skips it, saying why
			}
			if v.Skipped != "" || v.MS <= 0 {
				t.Errorf("%s/%s: skipped %q, %.3g ms", ch.Class, v.Name, v.Skipped, v.MS)
			}
		}
	}
	if _, ok := kernels.GemmVariantNamed(r.Chosen(ClassGemm)); !ok {
		t.Errorf("chose GEMM variant %q", r.Chosen(ClassGemm))
	}
	if _, ok := kernels.FlashVariantNamed(r.Chosen(ClassAttn)); !ok {
		t.Errorf("chose attention variant %q", r.Chosen(ClassAttn))
	}
	if _, cached, err := cache.LoadOrTune(t.Context(), dev, key, reg, nil, nil); err != nil || !cached {
		t.Errorf("second tuning: cached %v, err %v", cached, err)
	}
	if TuneGeometry(c, quant.Q4TP, 4096, 256) != TuneGeometry(c, quant.Q4TP, 4000, 200) || TuneGeometry(c, quant.Q4TP, 4096, 256) == TuneGeometry(c, quant.Q4TP, 1024, 256) {
		t.Error("geometry classes round rows up to powers of two")
	}
}
