package metal

import (
	"strings"
	"testing"
)

// TestDevicePolicyIsRememberedAcrossProcesses: a level remembered under a folder is where a fresh
// DevicePolicy over the same folder (another process) starts for that device, OS build and app
// version, and only there; without a folder it lasts for the process.
func TestDevicePolicyIsRememberedAcrossProcesses(t *testing.T) {
	dir := t.TempDir()
	first := &DevicePolicy{}
	first.Persist(dir, "24A335", "1.2.0")
	if l := first.Level("Apple M2", ProgramDenoiser); l != 0 {
		t.Fatalf("a new device starts at level %d, want 0", l)
	}
	first.Remember("Apple M2", ProgramDenoiser, 2)
	first.Remember("Apple M2", ProgramDenoiser, 1) // never lowered
	first.Remember("Apple M2", ProgramOps, 1)

	second := &DevicePolicy{}
	second.Persist(dir, "24A335", "1.2.0")
	if l := second.Level("Apple M2", ProgramDenoiser); l != 2 {
		t.Errorf("the next process starts the denoiser at level %d, want 2", l)
	}
	if l := second.Level("Apple M2", ProgramOps); l != 1 {
		t.Errorf("the next process starts metalops at level %d, want 1", l)
	}
	if d := second.Describe("Apple M2"); !strings.Contains(d, "4 command buffers") || !strings.Contains(d, "short command buffers") {
		t.Errorf("Describe = %q", d)
	}
	for _, other := range []struct{ dev, build, version string }{
		{"Apple M3", "24A335", "1.2.0"}, {"Apple M2", "24B83", "1.2.0"}, {"Apple M2", "24A335", "1.3.0"},
	} {
		p := &DevicePolicy{}
		p.Persist(dir, other.build, other.version)
		if l := p.Level(other.dev, ProgramDenoiser); l != 0 {
			t.Errorf("%+v starts at level %d, want 0 (another device, OS build or app version)", other, l)
		}
	}
	mem := &DevicePolicy{}
	mem.Remember("Apple M2", ProgramDenoiser, 1)
	if l := mem.Level("Apple M2", ProgramDenoiser); l != 1 || mem.Describe("Apple M1") != "" {
		t.Errorf("in memory: level %d, Describe of another device %q", l, mem.Describe("Apple M1"))
	}
}
