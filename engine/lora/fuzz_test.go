package lora_test

import (
	"testing"

	"easel/engine/lora"
	"easel/engine/lora/loratest"
	"easel/engine/safetensors"
)

// FuzzBind feeds arbitrary bytes through the safetensors parser, the preset reader and the
// binder: either an error or an adapter whose every factor and patch has the shape of the layer
// it names, and a preset within its ranges.
func FuzzBind(f *testing.F) {
	layers := testLayers()
	for i, format := range loratest.Formats {
		tensors, _ := loratest.Random(layers[:4+i], format, 2, 1, uint64(i))
		buf, err := safetensors.Encode(tensors, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(buf)
	}
	small, _ := safetensors.Encode([]*safetensors.Tensor{factor("lora_unet_img_in.lora_down.weight", 1, 4), factor("lora_unet_img_in.lora_up.weight", 8, 1),
		{Name: "lora_unet_img_in.alpha", DType: "BF16", Shape: []int{}, Data: []byte{0x80, 0x3f}}}, map[string]string{"lora_adapter_metadata": `{"lora_alpha":1}`})
	f.Add(small)
	preset, _ := safetensors.Encode([]*safetensors.Tensor{factor("transformer.img_in.lora_A.weight", 1, 4), factor("transformer.img_in.lora_B.weight", 8, 1)},
		map[string]string{lora.PresetMetadataKey: `{"name":"Turbo","schedule":"turbo","sigmas":[1,0.9,0.5]}`})
	f.Add(preset)
	shapes := map[string][2]int{}
	for _, l := range layers {
		shapes[l.Name] = [2]int{l.Out, l.In}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := safetensors.Parse(b)
		if err != nil {
			return
		}
		if p, err := lora.PresetFor(file.Metadata, ""); err == nil && p != nil && (p.Steps < 1 || p.Steps > 200) {
			t.Fatalf("preset accepted with %d steps", p.Steps)
		}
		a, err := lora.Bind(file, layers)
		if err != nil {
			return
		}
		for _, fc := range a.Factors {
			s, ok := shapes[fc.Layer]
			if !ok || fc.A.Shape[0] != fc.Rank || fc.A.Shape[1] != s[1] || fc.B.Shape[0] != s[0] || fc.B.Shape[1] != fc.Rank {
				t.Fatalf("factor for %s: A %v B %v rank %d, layer %v", fc.Layer, fc.A.Shape, fc.B.Shape, fc.Rank, s)
			}
		}
		for _, p := range a.Patches {
			s, ok := shapes[p.Layer]
			if !ok || (p.Weight != nil && (p.Weight.Shape[0] != s[0] || p.Weight.Shape[1] != s[1])) || (p.Bias != nil && len(p.Bias) != s[0]) {
				t.Fatalf("patch for %s: %+v, layer %v", p.Layer, p, s)
			}
		}
		if a.Report.Matched+len(a.Report.Unmatched) > a.Report.Tensors {
			t.Fatalf("report counts %d matched + %d unmatched of %d", a.Report.Matched, len(a.Report.Unmatched), a.Report.Tensors)
		}
	})
}
