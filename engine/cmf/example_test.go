package cmf_test

import (
	"fmt"
	"os"
	"path/filepath"

	"easel/engine/cmf"
	"easel/engine/quant"
)

// A converter streams tensors one at a time; the head is written by Close.
func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "cmf-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.cmf")

	w, err := cmf.Create(path, cmf.Options{ExpectedTensors: 3})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Abort() // removes the partial file unless Close succeeded
	cfg := []byte(`{"num_layers":2}`)
	w.AddTensor("dit.config_json", quant.U8, []int{len(cfg)}, cfg)
	w.AddTensor("dit.norm.weight", quant.F32, []int{2}, make([]byte, 8))
	q8, _ := quant.PayloadSize(quant.Q8_2F, []int{4, 32})
	w.AddTensor("te.layers.0.mlp.up_proj.weight", quant.Q8_2F, []int{4, 32}, make([]byte, q8))
	w.SetVocab([]byte(`{"model":{"type":"BPE","vocab":{}}}`))
	err = w.SetHeader(cmf.Header{
		Arch:      cmf.Arch{Name: "qwen_image21", LayerTypes: []string{"FullAttention"}, RMSNormEps: 1e-6},
		QuantType: "Q4_BLOCK",
	})
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		fmt.Println(err)
		return
	}

	f, err := cmf.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	fmt.Println(f.Names(), f.RequiredFeatures(), f.Verify(nil))
	blob, _ := f.ConfigJSON("dit.config_json")
	fmt.Println(string(blob))
	// Output:
	// [dit.config_json dit.norm.weight te.layers.0.mlp.up_proj.weight] TENSOR_DIR|QUANT_2F <nil>
	// {"num_layers":2}
}
