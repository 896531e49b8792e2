package cli

import (
	"easel/app/checkpoint"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"easel/app/loralib"
	"easel/engine/cmf"
	"easel/engine/pipeline"
)

// checkWritable fails early, before minutes of work, when the output cannot be saved.
func checkWritable(path string) *failure {
	if strings.ToLower(filepath.Ext(path)) != ".png" {
		return fail(ExitUsage, "--out %s: Easel saves PNG files; end the name with .png", path)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fail(ExitWrite, "--out %s is a folder: give a file name ending in .png", path)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".easel-write-check-*")
	if err != nil {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return fail(ExitWrite, "cannot save %s: the folder %s does not exist; create it or choose another", path, filepath.Dir(path))
		case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
			return fail(ExitWrite, "cannot save %s: Easel may not write to the folder %s; choose another folder", path, filepath.Dir(path))
		case errors.Is(err, syscall.ENOSPC):
			return fail(ExitWrite, "cannot save %s: the disk is full; free some space or choose another folder", path)
		}
		return fail(ExitWrite, "cannot save %s: %v", path, err)
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// openModel opens the model file and sorts its failures into "missing" and "not usable".
func openModel(path string) (*cmf.File, *failure) {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(ExitModelMissing, "model file %s does not exist: give the path of a .cmf (easel convert makes one from a Hugging Face snapshot)", path)
	case err != nil:
		return nil, fail(ExitModelMissing, "model file %s cannot be read: %v", path, err)
	case st.IsDir():
		if _, err := os.Stat(filepath.Join(path, "model_index.json")); err == nil {
			return nil, fail(ExitModelInvalid, "%s is a Hugging Face snapshot folder, not a .cmf: convert it first with `easel convert %s OUT.cmf`", path, path)
		}
		return nil, fail(ExitModelInvalid, "%s is a folder, not a .cmf model file", path)
	}
	f, err := cmf.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fail(ExitModelMissing, "model file %s cannot be read: %v", path, err)
		}
		return nil, &failure{ExitModelInvalid, err}
	}
	return f, nil
}

// modelFingerprint identifies a model file's content without reading its weights
// (checkpoint.Fingerprint).
func modelFingerprint(f *cmf.File) string { return checkpoint.Fingerprint(f) }

// loadLoRAs reads the --lora files, bound to the pipeline's denoiser; a file matching only some
// layers is applied with a note on stderr saying how many tensors were left out.
func loadLoRAs(specs []string, p *pipeline.Pipeline, out *generateOutput) ([]loralib.Applied, *failure) {
	if len(specs) == 0 {
		return nil, nil
	}
	lib := loralib.NewLibrary(p.LoRALayers())
	var applied []loralib.Applied
	for _, spec := range specs {
		path, strength, err := loralib.ParseSpec(spec)
		if err != nil {
			return nil, &failure{ExitLoRA, err}
		}
		f, err := lib.Load(path)
		if err != nil {
			return nil, &failure{ExitLoRA, err}
		}
		if w := f.Report.Warning(); w != "" {
			fmt.Fprintf(out.stderr, "easel generate: note: LoRA %s: %s\n", path, w)
		}
		applied = append(applied, loralib.Applied{File: f, Strength: strength})
	}
	return applied, nil
}
