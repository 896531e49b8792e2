package kernels_test

import (
	"slices"
	"testing"

	"easel/kernels"
	"easel/kernels/emu"
)

func TestEmuLibrariesListEveryFileAndKernel(t *testing.T) {
	var listed []string
	for _, l := range kernels.Libraries {
		listed = append(listed, l.File)
	}
	slices.Sort(listed)
	if files := kernels.Names(); !slices.Equal(listed, files) {
		t.Fatalf("kernels.Libraries lists %v, the embedded files are %v", listed, files)
	}
	d := newDevice(t, emu.Forward)
	for _, l := range kernels.Libraries {
		src, err := kernels.Source(l.File)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := d.NewLibrary(l.File, src)
		if err != nil {
			t.Fatal(err)
		}
		if got := lib.Functions(); !slices.Equal(got, l.Kernels) {
			t.Errorf("%s defines %v, kernels.Libraries says %v", l.File, got, l.Kernels)
		}
	}
}
