package kernels_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"easel/kernels"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// TestEmuParamLayouts compiles the kernel files together with one probe kernel per parameter struct,
// which reports sizeof and the offset of every field of the MSL struct, and compares them with
// the Go mirror in params.go.
func TestEmuParamLayouts(t *testing.T) {
	cases := []struct {
		file, msl string
		goType    reflect.Type
	}{
		{"gemm.metal", "MmParams", reflect.TypeFor[kernels.MmParams]()},
		{"flash.metal", "FlashParams", reflect.TypeFor[kernels.FlashParams]()},
		{"qkrope.metal", "QkParams", reflect.TypeFor[kernels.QkParams]()},
		{"rowop.metal", "RowParams", reflect.TypeFor[kernels.RowParams]()},
		{"swiglu.metal", "SwigluParams", reflect.TypeFor[kernels.SwigluParams]()},
		{"kvcopy.metal", "KvParams", reflect.TypeFor[kernels.KvParams]()},
		{"embed.metal", "EmbedParams", reflect.TypeFor[kernels.EmbedParams]()},
		{"final.metal", "FinalParams", reflect.TypeFor[kernels.FinalParams]()},
		{"lora.metal", "LoraParams", reflect.TypeFor[kernels.LoraParams]()},
		{"vae.metal", "ConvParams", reflect.TypeFor[kernels.ConvParams]()},
		{"vae.metal", "NormParams", reflect.TypeFor[kernels.NormParams]()},
		{"vae.metal", "EltParams", reflect.TypeFor[kernels.EltParams]()},
		{"vae.metal", "UpParams", reflect.TypeFor[kernels.UpParams]()},
		{"vae.metal", "ShuffleParams", reflect.TypeFor[kernels.ShuffleParams]()},
		{"vae.metal", "TransposeParams", reflect.TypeFor[kernels.TransposeParams]()},
		{"ops.metal", "LinearParams", reflect.TypeFor[kernels.LinearParams]()},
		{"ops.metal", "BatchParams", reflect.TypeFor[kernels.BatchParams]()},
		{"ops.metal", "SoftParams", reflect.TypeFor[kernels.SoftParams]()},
		{"ops.metal", "RowNormParams", reflect.TypeFor[kernels.RowNormParams]()},
		{"ops.metal", "HeadParams", reflect.TypeFor[kernels.HeadParams]()},
		{"decode.metal", "DecParams", reflect.TypeFor[kernels.DecParams]()},
	}
	// One library: every file (their names do not collide), then the probes.
	var src []byte
	included := map[string]bool{}
	for _, c := range cases {
		if included[c.file] {
			continue
		}
		included[c.file] = true
		b, err := kernels.Source(c.file)
		if err != nil {
			t.Fatal(err)
		}
		src = append(append(src, b...), '\n')
	}
	var probes strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&probes, "kernel void layout_%s(device uint* out [[buffer(0)]]) {\n    out[0] = sizeof(%s);\n", c.msl, c.msl)
		for i := 0; i < c.goType.NumField(); i++ {
			fmt.Fprintf(&probes, "    out[%d] = __builtin_offsetof(%s, %s);\n", i+1, c.msl, c.goType.Field(i).Tag.Get("msl"))
		}
		probes.WriteString("}\n")
	}
	d := newDevice(t, emu.Forward)
	lib, err := d.NewLibrary("layout_probes.metal", append(src, probes.String()...))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		p, err := d.Pipeline(lib, "layout_"+c.msl)
		if err != nil {
			t.Fatal(err)
		}
		typ := c.goType
		out := newBuffer(t, d, 4*(typ.NumField()+1))
		one := device.Size{Width: 1, Height: 1, Depth: 1}
		run(t, d, p, one, one, binding{index: 0, buf: out})
		got := device.View[uint32](out)
		if got[0] != uint32(typ.Size()) {
			t.Errorf("sizeof(%s) = %d in %s, %d in Go", c.msl, got[0], c.file, typ.Size())
		}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			if got[i+1] != uint32(f.Offset) {
				t.Errorf("%s.%s is at offset %d in %s, kernels.%s.%s at %d", c.msl, f.Tag.Get("msl"), got[i+1], c.file, typ.Name(), f.Name, f.Offset)
			}
		}
	}
}
