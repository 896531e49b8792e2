package vae

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"easel/engine/ml/cpu"
	"easel/engine/quant"
	"easel/engine/safetensors"
	"easel/internal/golden"
)

// snapshotSource serves a Hugging Face vae/ folder as a quant.Source with .cmf names: "vae." + the
// diffusers name, the weights in their stored dtype, time_conv left out (as the converter does),
// and config.json as the vae.config_json blob.
type snapshotSource struct {
	file   *safetensors.File
	config []byte
}

func openSnapshotVAE(t testing.TB) *snapshotSource {
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
	return &snapshotSource{file: f, config: cfg}
}

func (s *snapshotSource) Tensor(name string) (*quant.Tensor, error) {
	if name == ConfigTensor {
		return &quant.Tensor{Name: name, DType: quant.U8, Shape: []int{len(s.config)}, Data: s.config}, nil
	}
	diffusers, ok := strings.CutPrefix(name, namePrefix)
	if !ok || strings.Contains(name, ".time_conv.") {
		return nil, fmt.Errorf("no tensor %q", name)
	}
	st := s.file.Tensor(diffusers)
	if st == nil {
		return nil, fmt.Errorf("no tensor %q (diffusers name %q)", name, diffusers)
	}
	d, ok := quant.ParseDType(strings.ToLower(st.DType))
	if !ok || (d != quant.F32 && d != quant.F16 && d != quant.BF16) {
		return nil, fmt.Errorf("tensor %q has dtype %s", name, st.DType)
	}
	return &quant.Tensor{Name: name, DType: d, Shape: st.Shape, Data: st.Data}, nil
}

// loadTiny loads the tiny reference VAE on a fresh CPU backend.
func loadTiny(t testing.TB) (*Model, *cpu.Backend) {
	t.Helper()
	b := cpu.New()
	m, err := Load(b, openSnapshotVAE(t))
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}
