package preview

import (
	"testing"

	"easel/internal/tinysnapshot"
)

// openTinyVAE is the tiny reference snapshot's vae/ folder under .cmf names.
func openTinyVAE(t testing.TB) *tinysnapshot.Source { return tinysnapshot.VAE(t) }
