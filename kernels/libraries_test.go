package kernels_test

import (
	"slices"
	"testing"

	"easel/internal/testdevice"
	"easel/kernels"
	"easel/kernels/emu"
)

// TestEmuLibrariesListEveryFileAndKernel: kernels.Libraries names every embedded file, and each
// compiles on the test device to exactly the kernels it lists (as a set: Metal documents no order
// for functionNames). A library that needs Metal 4's tensor API is compiled only where the device
// has it, as the host does (kernels.GemmVariant.TensorOps).
func TestEmuLibrariesListEveryFileAndKernel(t *testing.T) {
	var listed []string
	for _, l := range kernels.Libraries {
		listed = append(listed, l.File)
	}
	slices.Sort(listed)
	if files := kernels.Names(); !slices.Equal(listed, files) {
		t.Fatalf("kernels.Libraries lists %v, the embedded files are %v", listed, files)
	}
	needsTensorOps := map[string]bool{}
	for _, v := range kernels.GemmVariants {
		if v.TensorOps {
			needsTensorOps[v.File] = true
		}
	}
	d := newDevice(t, emu.Forward)
	tensorOps := testdevice.HasTensorOps(d)
	for _, l := range kernels.Libraries {
		if needsTensorOps[l.File] && !tensorOps {
			t.Logf("%s: not compiled, %q has no Metal 4 tensor API", l.File, d.Name())
			continue
		}
		src, err := kernels.Source(l.File)
		if err != nil {
			t.Fatal(err)
		}
		lib, err := d.NewLibrary(l.File, src)
		if err != nil {
			t.Fatal(err)
		}
		got, want := slices.Sorted(slices.Values(lib.Functions())), slices.Sorted(slices.Values(l.Kernels))
		if !slices.Equal(got, want) {
			t.Errorf("%s defines %v, kernels.Libraries says %v", l.File, got, want)
		}
	}
}
