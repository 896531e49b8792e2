package backend

import (
	"errors"
	"strings"
	"testing"

	"easel/app/settings"
	"easel/engine/cmf"
	"easel/kernels/device"
)

// namedDevice stands in for a Mac's Metal device: choosing only asks its name.
type namedDevice struct{ device.Device }

func (namedDevice) Name() string { return "Apple M2 Max" }

func TestChoose(t *testing.T) {
	mac := platform{goos: "darwin", goarch: "arm64", system: func() (device.Device, error) { return namedDevice{}, nil }}
	broken := platform{goos: "darwin", goarch: "arm64", system: func() (device.Device, error) { return nil, errors.New("no GPU in this VM") }}
	linux := platform{goos: "linux", goarch: "amd64", system: func() (device.Device, error) {
		t.Error("the Metal device was opened off macOS")
		return nil, nil
	}}
	intel := platform{goos: "darwin", goarch: "amd64", system: linux.system}
	for _, c := range []struct {
		name  string
		pl    platform
		want  settings.Backend
		metal bool
		words []string // in the reason, or in the error when err
		err   bool
	}{
		{"auto on Apple silicon", mac, settings.BackendAuto, true, []string{"Metal (Apple M2 Max)", "automatically"}, false},
		{"empty means auto", mac, "", true, []string{"Metal (Apple M2 Max)"}, false},
		{"metal on Apple silicon", mac, settings.BackendMetal, true, []string{"Metal (Apple M2 Max)", "setting asks"}, false},
		{"cpu on Apple silicon", mac, settings.BackendCPU, false, []string{"CPU", "setting asks"}, false},
		{"auto on Linux", linux, settings.BackendAuto, false, []string{"run on the CPU because Metal needs a Mac with Apple silicon: this is linux/amd64"}, false},
		{"metal on Linux", linux, settings.BackendMetal, false, []string{"Metal needs a Mac with Apple silicon: this is linux/amd64", "choose the cpu or auto backend"}, true},
		{"cpu on Linux", linux, settings.BackendCPU, false, []string{"CPU"}, false},
		{"auto on an Intel Mac", intel, settings.BackendAuto, false, []string{"Intel processor"}, false},
		{"metal on an Intel Mac", intel, settings.BackendMetal, false, []string{"Metal needs a Mac with Apple silicon: this Mac has an Intel processor"}, true},
		{"auto when the device does not open", broken, settings.BackendAuto, false, []string{"CPU because", "no GPU in this VM"}, false},
		{"metal when the device does not open", broken, settings.BackendMetal, false, []string{"did not open (no GPU in this VM)"}, true},
		{"unknown", mac, "vulkan", false, []string{`"vulkan"`, "auto, metal, cpu"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch, err := c.pl.choose(c.want)
			if c.err {
				if err == nil {
					t.Fatalf("chose %s (%s), want an error", ch.Name(), ch.Reason)
				}
				for _, w := range c.words {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not say %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ch.Metal() != c.metal {
				t.Errorf("Metal() = %v, want %v (%s)", ch.Metal(), c.metal, ch.Reason)
			}
			if want := map[bool]string{true: "metal", false: "cpu"}[c.metal]; ch.Name() != want {
				t.Errorf("Name() = %q, want %q", ch.Name(), want)
			}
			for _, w := range c.words {
				if !strings.Contains(ch.Reason, w) {
					t.Errorf("reason %q does not say %q", ch.Reason, w)
				}
			}
			opts := ch.Options(&cmf.File{})
			if got := opts.Denoiser != nil; got != c.metal {
				t.Errorf("pipeline options set a denoiser: %v, want %v", got, c.metal)
			}
			if got := opts.VAE != nil; got != c.metal {
				t.Errorf("pipeline options place the VAE: %v, want %v", got, c.metal)
			}
			if got := opts.TextEncoder != nil; got != c.metal {
				t.Errorf("pipeline options place the text encoder: %v, want %v", got, c.metal)
			}
		})
	}
}

// TestChooseHere: on the machine the tests run on (Linux CI), auto is the CPU and says why, and
// metal is refused; on a Mac with Apple silicon auto is Metal.
func TestChooseHere(t *testing.T) {
	ch, err := Choose(settings.BackendAuto)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("auto: %s", ch.Reason)
	if ch.Reason == "" {
		t.Error("the choice gives no reason")
	}
	if host.goos == "darwin" && host.goarch == "arm64" {
		return
	}
	if ch.Metal() {
		t.Errorf("auto chose Metal on %s/%s", host.goos, host.goarch)
	}
	if _, err := Choose(settings.BackendMetal); err == nil || !strings.HasPrefix(err.Error(), "Metal needs a Mac with Apple silicon: ") {
		t.Errorf("metal off Apple silicon: %v, want the sentence saying Metal needs a Mac with Apple silicon", err)
	}
}
