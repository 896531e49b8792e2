package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"easel/app/settings"
)

// TestGenerateBackend: --backend metal off Apple silicon fails with its own exit code and says
// why, before any model is read; auto (the default without settings) says on --json and
// --verbose that the CPU runs the denoiser and why; without the flag the app's setting decides.
func TestGenerateBackend(t *testing.T) {
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		t.Skip("on Apple silicon Metal is available; this test is about machines without it")
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	missing := filepath.Join(t.TempDir(), "nope.cmf")
	out := filepath.Join(t.TempDir(), "out.png")

	code, _, stderr := run("generate", "--model", missing, "--backend", "metal", "--out", out)
	if code != ExitBackend || !strings.Contains(stderr, "Metal needs a Mac with Apple silicon: this is "+runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("--backend metal: exit %d, stderr %q; want exit %d and the reason", code, stderr, ExitBackend)
	}
	code, _, stderr = run("generate", "--model", missing, "--backend", "vulkan", "--out", out)
	if code != ExitBackend || !strings.Contains(stderr, "not one of auto, metal, cpu") {
		t.Errorf("--backend vulkan: exit %d, stderr %q", code, stderr)
	}

	// The first --json event is the choice; the missing model fails after it.
	backendEvent := func(args ...string) map[string]any {
		t.Helper()
		code, stdout, stderr := run(append([]string{"generate", "--model", missing, "--out", out, "--json"}, args...)...)
		if code != ExitModelMissing {
			t.Fatalf("exit %d (%s), want %d", code, stderr, ExitModelMissing)
		}
		var ev map[string]any
		first, _, _ := strings.Cut(stdout, "\n")
		if err := json.Unmarshal([]byte(first), &ev); err != nil {
			t.Fatalf("first line %q: %v", first, err)
		}
		return ev
	}
	ev := backendEvent()
	if ev["stage"] != "backend" || ev["backend"] != "cpu" || !strings.Contains(ev["notice"].(string), "CPU because Metal needs a Mac with Apple silicon") {
		t.Errorf("auto: first event %v, want the backend event saying the CPU runs the denoiser and why", ev)
	}
	_, _, stderr = run("generate", "--model", missing, "--out", out, "--verbose")
	if !strings.Contains(stderr, "backend auto: the text encoder, the denoiser and the VAE run on the CPU because Metal needs a Mac with Apple silicon") {
		t.Errorf("--verbose: stderr %q does not say which backend and why", stderr)
	}

	// The app's setting is the default.
	st, err := settings.DefaultStore()
	if err != nil {
		t.Fatal(err)
	}
	s := settings.Defaults()
	s.Backend = settings.BackendCPU
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	if ev := backendEvent(); ev["backend"] != "cpu" || !strings.Contains(ev["notice"].(string), "as the backend setting asks") {
		t.Errorf("settings say cpu: first event %v", ev)
	}
	s.Backend = settings.BackendMetal
	if err := st.Save(s); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("generate", "--model", missing, "--out", out); code != ExitBackend || !strings.Contains(stderr, "Metal needs a Mac") {
		t.Errorf("settings say metal: exit %d, stderr %q", code, stderr)
	}
	if ev := backendEvent("--backend", "auto"); ev["backend"] != "cpu" {
		t.Errorf("--backend auto over a metal setting: %v", ev)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}
