package cli

import (
	"os"
	"strings"
	"testing"

	"easel/engine/cmf"
)

func TestVerify(t *testing.T) {
	path, _ := smallModel(t)
	code, out, errOut := run("verify", path)
	if code != ExitOK || !strings.Contains(out, path+": sound") {
		t.Fatalf("sound file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if errOut != "" {
		t.Errorf("progress was drawn into a non-terminal: %q", errOut)
	}

	// Flip one byte of one payload: only the hashes can tell.
	f, err := cmf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := f.Entry("te.layers.0.mlp.gate_proj.weight")
	at := f.Envelope().Data.Off + e.Offset + 100
	f.Close()
	b, _ := os.ReadFile(path)
	b[at] ^= 0x10
	os.WriteFile(path, b, 0o644)
	code, out, errOut = run("verify", path)
	if code != ExitFailure || out != "" || !strings.Contains(errOut, path) ||
		!strings.Contains(errOut, `"te.layers.0.mlp.gate_proj.weight"`) || !strings.Contains(errOut, "does not match its hash") {
		t.Errorf("damaged payload: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// Cut the file short: Open already refuses it.
	os.WriteFile(path, b[:len(b)/2], 0o644)
	if code, _, errOut := run("verify", path); code != ExitFailure || !strings.Contains(errOut, "truncated") {
		t.Errorf("truncated file: exit %d, stderr %q", code, errOut)
	}
	if code, _, _ := run("verify"); code != ExitUsage {
		t.Errorf("no file: exit %d, want %d", code, ExitUsage)
	}
}
