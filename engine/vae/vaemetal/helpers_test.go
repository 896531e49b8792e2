package vaemetal

import (
	"os"
	"testing"

	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/engine/ml/cpu"
	"easel/engine/vae"
	"easel/internal/golden"
	"easel/internal/testdevice"
	"easel/internal/tinymodel"
	"easel/kernels/device"
	"easel/kernels/emu"
)

// emuDevice returns the emulated device with the given limits (zero: the emulator's defaults),
// skipping only when clang is missing and EASEL_REQUIRE_EMULATOR is not set.
func emuDevice(t testing.TB, limits device.Limits) device.Device {
	t.Helper()
	return testdevice.Device(t, emu.Options{Limits: limits})
}

func TestMain(m *testing.M) {
	code := m.Run()
	tinymodel.RemoveAll()
	os.Exit(code)
}

// tinyFile is the tiny reference snapshot converted once (the VAE's weights become f16, as in
// every .cmf), mapped.
func tinyFile(t testing.TB) *cmf.File {
	return tinymodel.Open(t, convert.Options{Profile: convert.ProfileQ8, NoVision: true})
}

// models loads the tiny VAE on the CPU backend and on the emulated device from the same file.
func models(t testing.TB, limits device.Limits) (*vae.Model, *VAE, *cmf.File) {
	t.Helper()
	f := tinyFile(t)
	cpuModel, err := vae.Load(cpu.New(), f)
	if err != nil {
		t.Fatal(err)
	}
	gpu, err := New(emuDevice(t, limits), f, f.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gpu.Close)
	return cpuModel, gpu, f
}

// vaeCase is one vae_* reference case.
type vaeCase struct {
	name string
	zn   *vae.Latents
	img  *vae.Image
}

func vaeCases(t testing.TB) []vaeCase {
	t.Helper()
	paths, err := golden.Cases("vae")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no vae_* reference cases: %v", err)
	}
	var out []vaeCase
	for _, p := range paths {
		c, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		read := func(name string) (v []float32, ch, h, w int) {
			v, shape, err := c.Float32s(name)
			if err != nil {
				t.Fatal(err)
			}
			if len(shape) != 5 || shape[0] != 1 || shape[2] != 1 {
				t.Fatalf("%s %s: shape %v, want [1, C, 1, h, w]", c.Name, name, shape)
			}
			return v, shape[1], shape[3], shape[4]
		}
		vc := vaeCase{name: c.Name}
		z, zc, zh, zw := read("z_normalized")
		vc.zn = &vae.Latents{C: zc, H: zh, W: zw, Data: z}
		pix, ic, ih, iw := read("image")
		vc.img = &vae.Image{C: ic, H: ih, W: iw, Pix: pix}
		c.Close()
		out = append(out, vc)
	}
	return out
}
