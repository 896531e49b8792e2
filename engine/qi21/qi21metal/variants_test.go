package qi21metal

import (
	"slices"
	"strings"
	"testing"
	"time"

	"easel/engine/convert"
	"easel/engine/ml/metal"
	"easel/internal/golden"
	"easel/kernels"
)

// TestEmuVariantsMatchBaseline runs the tiny model's prefill and a step through every GEMM and
// attention variant (each with the other class at its baseline, every dispatch on the variant
// whatever the rows). A variant that keeps the baseline's arithmetic (all but the
// 64-key attention) must give the baseline's velocity bit for bit; the 64-key attention changes
// the online softmax's blocks, so it must stay within halfBound of the CPU as the baseline does.
// A variant that does not compile or fit fails the test.
func TestEmuVariantsMatchBaseline(t *testing.T) {
	dev := emuDevice(t)
	dc := fewestConditions(t)
	lay := dc.layout
	// q4tp weights (the published model's codec); the q8 functions of every variant are held to
	// the baseline byte for byte by kernels' TestEmuGemmVariantsMatchBaseline, and run through a
	// block by app/cli's TestBenchDiTMetalVariants.
	for _, profile := range []convert.Profile{convert.ProfileCortiq} {
		t.Run(string(profile), func(t *testing.T) {
			m, f := tinyModel(t, profile)
			in := m.Config.InChannels
			cond, target := dc.latents[:lay.CondLatents()*in], dc.latents[lay.CondLatents()*in:]
			sigma := dc.midSigma()
			ref, err := m.Prefill(t.Context(), lay, dc.text, cond)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Release(ref)
			cpu, err := m.Step(t.Context(), ref, target, sigma)
			if err != nil {
				t.Fatal(err)
			}
			k := metal.Knobs{Guards: metal.DefaultGuards}
			d, err := New(dev, m, f.Bytes(), Options{Knobs: &k})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			d.pipes.variantsAnyN = true
			run := func(gemm, attn string) []float32 {
				t.Helper()
				if err := d.UseVariants(gemm, attn); err != nil {
					t.Fatalf("variant gemm %s / attn %s: %v", gemm, attn, err)
				}
				t0 := time.Now()
				prog, err := d.Prefill(t.Context(), lay, dc.text, cond)
				if err != nil {
					t.Fatal(err)
				}
				defer d.Release(prog)
				v, err := d.Step(t.Context(), prog, target, sigma)
				if err != nil {
					t.Fatal(err)
				}
				g, a := d.Variants()
				if g != gemm || a != attn {
					t.Fatalf("ran gemm %s / attn %s, asked for %s / %s", g, a, gemm, attn)
				}
				t.Logf("gemm %s, attn %s: vs cpu %.3g; prefill and step %v emulator time", gemm, attn, golden.RelErr(v, cpu), time.Since(t0).Round(time.Millisecond))
				return v
			}
			base := run("base", "base")
			if e := golden.RelErr(base, cpu); e > halfBound {
				t.Fatalf("the baseline is %.3g from the CPU", e)
			}
			for _, v := range kernels.GemmVariants[1:] {
				if v.TensorOps && !metal.HasTensorOps(dev) {
					t.Logf("GEMM variant %s not run: %s has no Metal 4 tensor operations", v.Name, dev.Name())
					continue
				}
				if got := run(v.Name, "base"); !slices.Equal(got, base) {
					t.Errorf("GEMM variant %s: velocity differs from the baseline's (relative %.3g)", v.Name, golden.RelErr(got, base))
				}
			}
			for _, v := range kernels.FlashVariants[1:] {
				got := run("base", v.Name)
				if v.KeyBlock == kernels.FlashVariants[0].KeyBlock {
					if !slices.Equal(got, base) {
						t.Errorf("attention variant %s: velocity differs from the baseline's (relative %.3g)", v.Name, golden.RelErr(got, base))
					}
				} else if e := golden.RelErr(got, cpu); e > halfBound {
					t.Errorf("attention variant %s: %.3g from the CPU, over %g", v.Name, e, halfBound)
				}
			}
		})
	}
}

// TestUseChosenVariants: the tuned choice is run unless a forcing variable names another; an
// unknown name is an error that says which variables to unset.
func TestUseChosenVariants(t *testing.T) {
	dev := emuDevice(t)
	m, f := tinyModel(t, convert.ProfileCortiq)
	k := metal.Knobs{Guards: metal.DefaultGuards}
	d, err := New(dev, m, f.Bytes(), Options{Knobs: &k, Variants: &metal.TuneReport{Choices: []metal.ClassChoice{{Class: ClassGemm, Variant: "swizzle"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if g, a := d.Variants(); g != "swizzle" || a != "base" {
		t.Errorf("runs %s / %s, the tuned choice is swizzle / base", g, a)
	}
	env := map[string]string{"EASEL_METAL_VARIANT_ATTN": "k64"}
	if err := d.useChosenVariants(nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if g, a := d.Variants(); g != "base" || a != "k64" {
		t.Errorf("runs %s / %s, forced base / k64", g, a)
	}
	// A tuned choice that cannot run here leaves the baseline.
	if err := d.useChosenVariants(&metal.TuneReport{Choices: []metal.ClassChoice{{Class: ClassGemm, Variant: "gone"}}}, func(string) string { return "" }); err != nil {
		t.Errorf("an unusable tuned choice: %v", err)
	}
	env = map[string]string{"EASEL_METAL_VARIANT_GEMM": "nosuch"}
	if err := d.useChosenVariants(nil, func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "EASEL_METAL_VARIANT_GEMM") {
		t.Errorf("an unknown forced variant: %v", err)
	}
}
