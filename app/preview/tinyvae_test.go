package preview

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// tinySource serves the golden snapshot's vae/ folder as a quant.Source with .cmf names ("vae." +
// the diffusers name; time_conv left out as the converter does; config.json as vae.config_json).
type tinySource struct {
	file   *safetensors.File
	config []byte
}

func openTinyVAE(t testing.TB) *tinySource {
	t.Helper()
	snap, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(snap, "vae")
	f, err := safetensors.Open(filepath.Join(dir, "diffusion_pytorch_model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cfg, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	return &tinySource{file: f, config: cfg}
}

func (s *tinySource) Tensor(name string) (*quant.Tensor, error) {
	if name == "vae.config_json" {
		return &quant.Tensor{Name: name, DType: quant.U8, Shape: []int{len(s.config)}, Data: s.config}, nil
	}
	diffusers, ok := strings.CutPrefix(name, "vae.")
	if !ok || strings.Contains(name, ".time_conv.") {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	st := s.file.Tensor(diffusers)
	if st == nil {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	d, ok := quant.ParseDType(strings.ToLower(st.DType))
	if !ok {
		return nil, fmt.Errorf("tensor %q has dtype %s", name, st.DType)
	}
	return &quant.Tensor{Name: name, DType: d, Shape: st.Shape, Data: st.Data}, nil
}
