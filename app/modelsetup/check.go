package modelsetup

import (
	"context"
	"errors"
	"fmt"

	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/ml/cpu"
	"easel/engine/pipeline"
)

// ArchName is the header arch_name of Qwen-Image-2.1 model files (Easel's and cortiq's).
const ArchName = "qwen_image21"

// Model describes a model file that passed Check.
type Model struct {
	Path      string
	Bytes     int64
	QuantType string // the header's quant_type: Q4_BLOCK (4-bit DiT), Q8_2F, F16, …
	Tensors   int
	Vision    bool // the vision tower is present: condition images can be described to the encoder
}

// ErrNoModel means the settings name no model file yet.
var ErrNoModel = errors.New("no model file is set up yet")

// Check opens a model file and makes sure Easel can run it, quickly: the container's structure
// (cmf.Open checks every bound and size), the architecture, and every tensor and config the text
// encoder, the denoiser and the VAE bind, by binding them exactly as a generation does (weights
// stay in the file mapping; nothing is computed). It does not read every byte: Verify does.
func Check(path string) (*Model, error) {
	f, err := cmf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if arch := f.Header().Arch.Name; arch != ArchName {
		return nil, fmt.Errorf("%s is a model file for %q, not Qwen-Image-2.1 (%q): choose a Qwen-Image-2.1 .cmf, or convert the Hugging Face snapshot", path, arch, ArchName)
	}
	p, err := pipeline.New(f, cpu.New(), pipeline.Options{})
	if err != nil {
		return nil, fmt.Errorf("%s cannot run: %v", path, err)
	}
	return &Model{Path: path, Bytes: f.Size(), QuantType: f.Header().QuantType, Tensors: len(f.Entries()), Vision: p.HasVision()}, nil
}

// Verify reads the whole file and checks every hash cortiq and Easel record: it reads every byte,
// so it takes minutes on a full-size model; cancelling ctx stops it. progress, when not nil, is
// called with bytes hashed so far and the total.
func Verify(ctx context.Context, path string, progress func(done, total int64)) error {
	f, err := cmf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.VerifyContext(ctx, progress)
}

// Usable reports why the settings' model cannot be used (nil when it can): ErrNoModel when none
// is set, or Check's error for a file that is missing or unsound.
func Usable(s settings.Settings) error {
	if s.Model == "" {
		return ErrNoModel
	}
	_, err := Check(s.Model)
	return err
}

// SaveModel records path as the model in the settings, keeping every other choice.
func SaveModel(store *settings.Store, path string) error {
	s, err := store.Load()
	if err != nil {
		return err
	}
	s.Model = path
	if err := store.Save(s); err != nil {
		return fmt.Errorf("the model is ready at %s but the settings could not be saved: %v", path, err)
	}
	return nil
}
