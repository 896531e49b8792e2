package vae

import (
	"testing"

	"easel/engine/ml/cpu"
	"easel/internal/tinysnapshot"
)

// openSnapshotVAE is the tiny reference snapshot's vae/ folder under .cmf names.
func openSnapshotVAE(t testing.TB) *tinysnapshot.Source { return tinysnapshot.VAE(t) }

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
