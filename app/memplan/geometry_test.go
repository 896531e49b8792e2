package memplan

import (
	"errors"
	"os"
	"strings"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/mmapfile"
	"easel/engine/qi21"
	"easel/internal/tinymodel"
)

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// tinyModel is the tiny reference model converted, in a file of the test's own.
func tinyModel(t *testing.T) string {
	return tinymodel.Copy(t, convert.Options{Profile: convert.ProfileF16})
}

// A model file's geometry carries its own text encoder's, vision tower's and VAE's configs (the
// Metal plan counts from them), consistent with its denoiser as the pipeline requires.
func TestGeometryOfReadsTheOtherNetworksConfigs(t *testing.T) {
	path := tinyModel(t)
	g, err := GeometryOf(path)
	if err != nil {
		t.Fatal(err)
	}
	if g.Text == nil || g.Vision == nil || g.VAE == nil {
		t.Fatalf("geometry of %s lacks a config: text %v, vision %v, VAE %v", path, g.Text, g.Vision, g.VAE)
	}
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	js, err := f.ConfigJSON(qi21.ConfigTensor)
	if err != nil {
		t.Fatal(err)
	}
	dit, err := qi21.ParseConfig(js)
	if err != nil {
		t.Fatal(err)
	}
	if g.Text.Hidden != dit.ContextDim || g.Vision.OutHidden != g.Text.Hidden || g.VAE.ZDim != dit.InChannels {
		t.Errorf("text %d wide, vision out %d, VAE z %d; the denoiser reads %d-wide prompts and %d latent channels",
			g.Text.Hidden, g.Vision.OutHidden, g.VAE.ZDim, dit.ContextDim, dit.InChannels)
	}
	if !PublishedGeometry().Estimated || PublishedGeometry().Text != nil {
		t.Error("the published geometry should be estimated and leave the configs to the published ones")
	}
}

// A model file truncated after it was opened (its drive unplugged, say) gives GeometryOfFile's
// caller a *mmapfile.FaultError naming it, not a crash.
func TestGeometryOfATruncatedFileIsAnError(t *testing.T) {
	path := tinyModel(t)
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err = GeometryOfFile(f)
	var fault *mmapfile.FaultError
	if !errors.As(err, &fault) || fault.Path != path || fault.Now != 0 {
		t.Fatalf("geometry of a truncated file: %v (%T), want a fault in %s", err, err, path)
	}
	if !strings.Contains(err.Error(), "the model file "+path) {
		t.Errorf("message %q does not name the model file", err)
	}
}
